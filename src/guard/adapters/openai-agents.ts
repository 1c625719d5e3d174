import { getCurrentSpan } from '@openai/agents';
import { type Context, context as otelContext } from '@opentelemetry/api';
import type { GuardedRunsOptions } from '../guarded-runs.js';
import {
  deciderOf,
  type GuardAdapterOptions,
  type GuardDecision,
  type GuardSource,
  keepsRuns,
  openInferenceSpanContext,
  recordOnToolSpan,
  refusalText,
} from './tool-guard.js';

export type { GuardedRunsOptions } from '../guarded-runs.js';
export type {
  GuardAdapterOptions,
  GuardDecision,
  GuardedCall,
  GuardSource,
  ToolGuard,
} from './tool-guard.js';

/** What the SDK hands a tool input guardrail (`ToolInputGuardrailData`), as far as the guard reads it. */
export interface ToolInputGuardrailArgs {
  agent?: { name?: string };
  toolCall: { name: string; arguments?: string; callId?: string };
}

/** A `ToolInputGuardrailDefinition` of `@openai/agents`, structurally. */
export interface ToolwatchInputGuardrail {
  type: 'tool_input';
  name: string;
  run(args: ToolInputGuardrailArgs): Promise<{
    behavior: { type: 'allow' } | { type: 'rejectContent'; message: string };
    outputInfo: GuardDecision;
  }>;
}

export interface ToolInputGuardrailOptions
  extends GuardAdapterOptions,
    Omit<GuardedRunsOptions, 'onEvicted'> {
  /** The guardrail's name in the SDK's results and traces. Default `toolwatch`. */
  name?: string;
  /**
   * The `OpenAIAgentsInstrumentation` of `@arizeai/openinference-instrumentation-openai-agents`
   * that turns the SDK's spans into OpenTelemetry spans. The bridge never makes its spans
   * active, so with it the guard finds the run through the span the bridge opened for this
   * call. Pass the instance that was registered (`manuallyInstrument`): a second instance's
   * registration is a no-op, and its span map stays empty. Default none: the active context
   * (where some other instrumentation set it).
   */
  instrumentation?: object;
  /** Where the run is found, overriding the above. Default as described for `instrumentation`. */
  context?: (args: ToolInputGuardrailArgs) => Context | undefined;
}

/**
 * OpenAI Agents JS: a tool input guardrail asking toolwatch before each call of the tools it is
 * given to (`tool({ …, inputGuardrails: [guardrail] })`). A refused call answers with
 * `rejectContent`: the tool function never runs, the model receives the reason as the call's
 * output, and the run goes on. The decision is the guardrail's `outputInfo`.
 *
 * `source` is the policy when the SDK's spans reach toolwatch through the OpenInference bridge:
 * the bridge sets its spans' attributes after they start, so the processor cannot know the run
 * while it goes on, and the guardrail keeps the run's calls itself (by trace id and agent name)
 * and writes a denial on the call's span as `checkToolCall` would. With a processor that
 * knows the run live (another instrumentation), pass the processor.
 */
export function toolwatchInputGuardrail(
  source: GuardSource,
  options: ToolInputGuardrailOptions = {},
): ToolwatchInputGuardrail {
  const decide = deciderOf(source, options);
  const records = keepsRuns(source);
  return {
    type: 'tool_input',
    name: options.name ?? 'toolwatch',
    async run(args) {
      const call = {
        tool: args.toolCall.name,
        arguments: parseArguments(args.toolCall.arguments),
        ...(args.agent?.name ? { agent: args.agent.name } : {}),
      };
      const where =
        (options.context ? options.context(args) : bridgedContext(options.instrumentation)) ??
        otelContext.active();
      const decision = decide(call, where);
      if (records) recordOnToolSpan(decision, call, where, args.toolCall.callId);
      if (decision.allowed) return { behavior: { type: 'allow' }, outputInfo: decision };
      return {
        behavior: { type: 'rejectContent', message: refusalText(decision, call, options) },
        outputInfo: decision,
      };
    },
  };
}

/**
 * The OpenTelemetry span the OpenInference bridge opened for the SDK's current span (the
 * call's function span). The bridge keeps them by the SDK's span id in a map it does not
 * expose; read defensively, so a bridge without it means "not found", never an error.
 */
function bridgedContext(instrumentation: object | undefined): Context | undefined {
  if (instrumentation === undefined) return undefined;
  try {
    const current = getCurrentSpan();
    if (!current) return undefined;
    const spans = (instrumentation as { processor?: { otelSpans?: unknown } }).processor?.otelSpans;
    if (!(spans instanceof Map)) return undefined;
    return openInferenceSpanContext(spans.get(current.spanId));
  } catch {
    return undefined;
  }
}

/** The SDK passes arguments as the model wrote them (JSON text); the guard judges values. */
function parseArguments(text: string | undefined): unknown {
  if (text === undefined || text === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
