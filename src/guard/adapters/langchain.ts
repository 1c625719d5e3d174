import { type Context, context as otelContext } from '@opentelemetry/api';
import type { GuardedRunsOptions } from '../guarded-runs.js';
import {
  deciderOf,
  type GuardAdapterOptions,
  type GuardSource,
  openInferenceSpanContext,
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

/** The part of LangChain's `ToolCallRequest` the guard reads. */
export interface ToolCallRequestLike {
  toolCall: { id?: string; name: string; args?: unknown };
}

/** `ToolMessage` of `@langchain/core/messages`: the application's own class. */
export type ToolMessageClass<M> = new (fields: {
  content: string;
  tool_call_id: string;
  name?: string;
  status?: 'success' | 'error';
}) => M;

export interface WrapToolCallOptions<M> extends GuardAdapterOptions, Omit<GuardedRunsOptions, 'onEvicted'> {
  /**
   * `ToolMessage` from `@langchain/core/messages`, as the application imports it: LangChain
   * tells messages apart by class, and a second copy of `@langchain/core` loaded by toolwatch
   * would make messages the agent does not recognise.
   */
  ToolMessage: ToolMessageClass<M>;
  /**
   * The agent name passed to `checkToolCall`. Default: the running agent's `lc_agent_name`
   * (the `name` given to `createAgent`; a sub-agent run inside a tool inherits its parent's).
   */
  agent?: string;
  /**
   * Where the run is found. Default: the OpenTelemetry span that OpenInference's LangChain
   * tracer opened for the node running the tools (the tracer never makes its spans active),
   * else the active context.
   */
  context?: (request: ToolCallRequestLike) => Context | undefined;
}

/**
 * LangChain JS v1: the `wrapToolCall` hook of a middleware
 * (`createMiddleware({ name: 'toolwatch', wrapToolCall: toolwatchWrapToolCall(…) })`). A refused
 * call never reaches `handler`, so the tool never runs: the hook answers with a `ToolMessage`
 * (status `error`) carrying the reason, which the model reads as the call's result, and the
 * agent loop goes on.
 *
 * `source` is the policy when LangChain's spans reach toolwatch through OpenInference's tracer:
 * it sets its spans' attributes after they start, so the processor cannot know the run while it
 * goes on, and the middleware keeps the run's calls itself (by trace id and agent name). The
 * refused call has no tool span: the model's request, never answered by a tool, is what the
 * trace shows, and the verdict counts it refused. With a processor that knows the run live
 * (another instrumentation), pass the processor.
 */
export function toolwatchWrapToolCall<R extends ToolCallRequestLike, M, H>(
  source: GuardSource,
  options: WrapToolCallOptions<M>,
): (request: R, handler: (request: R) => H) => H | M {
  const decide = deciderOf(source, options);
  return (request, handler) => {
    const node = runningNode();
    const agent = options.agent ?? node.agent;
    const call = {
      tool: request.toolCall.name,
      arguments: request.toolCall.args,
      ...(agent ? { agent } : {}),
    };
    const where = (options.context ? options.context(request) : node.context) ?? otelContext.active();
    const decision = decide(call, where);
    if (decision.allowed) return handler(request);
    return new options.ToolMessage({
      content: refusalText(decision, call, options),
      tool_call_id: request.toolCall.id ?? '',
      name: request.toolCall.name,
      status: 'error',
    });
  };
}

/** LangChain keeps the running node's config in a process-wide AsyncLocalStorage under these keys. */
const TRACING_ALS = Symbol.for('ls:tracing_async_local_storage');
const CHILD_CONFIG = Symbol.for('lc:child_config');

/**
 * What LangChain knows of the node running the tools: the span OpenInference's tracer opened
 * for it (found through the node's callbacks, the parent run id and the tracer's run table) and
 * the agent's name (`lc_agent_name` in the run's metadata). Read defensively: anything missing
 * means "not found", never an error.
 */
function runningNode(): { context?: Context; agent?: string } {
  try {
    const storage = (globalThis as Record<symbol, { getStore?: () => any } | undefined>)[TRACING_ALS];
    const config = storage?.getStore?.()?.extra?.[CHILD_CONFIG];
    const name: unknown = config?.metadata?.lc_agent_name;
    const agent = typeof name === 'string' && name !== '' ? name : undefined;
    const callbacks = config?.callbacks;
    const runId: unknown = callbacks?.getParentRunId?.() ?? callbacks?._parentRunId;
    const handlers: unknown = callbacks?.handlers ?? callbacks;
    if (typeof runId === 'string' && Array.isArray(handlers)) {
      for (const handler of handlers) {
        const context = openInferenceSpanContext(handler?.runs?.[runId]?.span);
        if (context !== undefined) return { context, ...(agent ? { agent } : {}) };
      }
    }
    return agent ? { agent } : {};
  } catch {
    return {};
  }
}
