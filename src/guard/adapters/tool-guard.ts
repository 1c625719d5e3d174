import { type Context, diag, ROOT_CONTEXT, type Span, trace } from '@opentelemetry/api';
import type { Policy, ToolCall, ToolCallDecision } from '../../types.js';
import { DECISION_EVENT, decisionAttributes, decisionEventAttributes } from '../decision-attributes.js';
import { GuardedRuns, type GuardedRunsOptions } from '../guarded-runs.js';

/** A tool call as the guard judges it: before it runs, so no result. */
export type GuardedCall = ToolCall;

/** What the policy decided for one tool call (`ToolwatchSpanProcessor.checkToolCall`). */
export type GuardDecision = ToolCallDecision;

/**
 * What the adapters need from toolwatch: the processor's `checkToolCall`. Structural, so an
 * adapter never loads the processor (or a framework) itself.
 */
export interface ToolGuard {
  checkToolCall(call: GuardedCall, context?: Context): GuardDecision;
}

/**
 * Where an adapter's decisions come from: the processor (`checkToolCall`, judging against the
 * run's live state), or the policy itself, when no processor can know the run while it goes on
 * (its spans reach processors late, or without their attributes at start): the adapter then keeps
 * each run's calls (`GuardedRuns`, keyed by trace id and agent, as the gateway's `/v1/guard`).
 */
export type GuardSource = ToolGuard | Policy;

/** Options every adapter takes. */
export interface GuardAdapterOptions {
  /**
   * The text the model receives instead of the tool's result. Default: `Refused by policy: the
   * <tool> call was not run (<reasons>).`, so the model can tell a refusal from a failure and
   * choose another way (also used when this function throws).
   */
  message?: (decision: GuardDecision, call: GuardedCall) => string;
}

/** A decision function for one adapter: its source, made safe (see `decide`). */
export type Decider = (call: GuardedCall, context: Context) => GuardDecision;

/** Whether decisions come from the policy (kept by the adapter), so the adapter records them itself. */
export function keepsRuns(source: GuardSource): source is Policy {
  return typeof (source as ToolGuard).checkToolCall !== 'function';
}

/**
 * The adapter's decisions from `source`. From the policy, a run is the trace of the span in the
 * context and the call's agent; a call with no span in its context is judged on its own
 * (forbidden tools, arguments), never counted with another run's.
 */
export function deciderOf(source: GuardSource, options: GuardedRunsOptions = {}): Decider {
  if (!keepsRuns(source)) return (call, context) => decide(source, call, context);
  const runs = new GuardedRuns(source, options);
  let untraced = 0;
  return (call, context) => {
    const traceId = trace.getSpanContext(context)?.traceId ?? `untraced-${untraced++}`;
    try {
      return runs.decide(traceId, call.agent ?? 'agent', call);
    } catch (error) {
      warnOnce(call, error);
      return ALLOW_ON_ERROR;
    }
  };
}

/**
 * A deny from the policy written on the call's own span (its tool span, still open), as
 * `checkToolCall` writes it: reconstruction then reads the call as refused, never executed.
 */
export function recordOnToolSpan(
  decision: GuardDecision,
  call: GuardedCall,
  context: Context,
  callId?: string,
): void {
  if (decision.decision !== 'deny') return;
  const span = trace.getSpan(context);
  if (span === undefined || !span.isRecording()) return;
  span.setAttributes(decisionAttributes(decision));
  span.addEvent(DECISION_EVENT, decisionEventAttributes(decision, call.tool, callId));
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
    warnOnce(call, error);
    return ALLOW_ON_ERROR;
  }
}

function warnOnce(call: GuardedCall, error: unknown): void {
  if (warned) return;
  warned = true;
  diag.warn(
    `toolwatch: the tool guard threw on a call of ${call.tool} (the call was allowed, or refused with the default wording): ${String(error)}`,
  );
}

/** The text the model sees for a refused call. */
export function refusalText(
  decision: GuardDecision,
  call: GuardedCall,
  options: GuardAdapterOptions | undefined,
): string {
  if (options?.message) {
    try {
      return options.message(decision, call);
    } catch (error) {
      warnOnce(call, error);
    }
  }
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
