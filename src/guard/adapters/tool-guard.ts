import { type Context, diag, ROOT_CONTEXT, type Span, trace } from '@opentelemetry/api';

/** A tool call as the guard judges it: before it runs, so no result. */
export interface GuardedCall {
  tool: string;
  arguments?: unknown;
  /** The agent making the call, where the framework names it. */
  agent?: string;
}

/** What the policy decided for one tool call (`ToolwatchSpanProcessor.checkToolCall`). */
export interface GuardDecision {
  /** False only where a rule enforces the denial (`guard.mode: enforce`). */
  allowed: boolean;
  decision: 'allow' | 'deny';
  enforced: boolean;
  reasons: readonly string[];
  rule?: string;
  kind?: string;
}

/**
 * What the adapters need from toolwatch: the processor's `checkToolCall`. Structural, so an
 * adapter never loads the processor (or a framework) itself.
 */
export interface ToolGuard {
  checkToolCall(call: GuardedCall, context?: Context): GuardDecision;
}

/** Options every adapter takes. */
export interface GuardAdapterOptions {
  /**
   * The text the model receives instead of the tool's result. Default: `Refused by policy: the
   * <tool> call was not run (<reasons>).`, so the model can tell a refusal from a failure and
   * choose another way.
   */
  message?: (decision: GuardDecision, call: GuardedCall) => string;
}

const ALLOW_ON_ERROR: GuardDecision = { allowed: true, decision: 'allow', enforced: false, reasons: [] };

let warned = false;

/**
 * `checkToolCall`, made safe for the framework's hot path: a guard that throws (a stand-in of
 * the structural type, a bug) lets the call through — the tool runs as it would without a
 * guard — and says so once through `diag`, rather than failing the agent's run.
 */
export function decide(guard: ToolGuard, call: GuardedCall, context?: Context): GuardDecision {
  try {
    return guard.checkToolCall(call, context);
  } catch (error) {
    if (!warned) {
      warned = true;
      diag.warn(`toolwatch: the tool guard threw, the call of ${call.tool} was allowed: ${String(error)}`);
    }
    return ALLOW_ON_ERROR;
  }
}

/** The text the model sees for a refused call. */
export function refusalText(
  decision: GuardDecision,
  call: GuardedCall,
  options: GuardAdapterOptions | undefined,
): string {
  if (options?.message) return options.message(decision, call);
  const why = decision.reasons.length > 0 ? decision.reasons.join('; ') : `rule ${decision.rule ?? '?'}`;
  return `Refused by policy: the ${call.tool} call was not run (${why}).`;
}

/**
 * A context holding a span an OpenInference instrumentation opened. Its tracer hands out
 * `OISpan` wrappers (they mask attribute values), while span processors saw the SDK span inside:
 * the guard needs that one to find the run in the processor's live state and to write the
 * decision on it.
 */
export function openInferenceSpanContext(span: unknown): Context | undefined {
  if (!isSpan(span)) return undefined;
  const inner = (span as { span?: unknown }).span;
  return trace.setSpan(ROOT_CONTEXT, isSpan(inner) ? inner : span);
}

function isSpan(value: unknown): value is Span {
  return typeof value === 'object' && value !== null && typeof (value as Span).spanContext === 'function';
}
