import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';

/**
 * Counts the spans each rollout's trace gets besides the rollout span itself. A rollout with
 * none ran an agent that is not traced through the rollouts' provider (its framework was not
 * given `context.tracer`, or it has a provider of its own): its run then has no tool calls,
 * and fails for that reason alone — the count lets the caller say so.
 */
export class RolloutSpanCounter implements SpanProcessor {
  private readonly _counts = new Map<string, number>();

  /** Starts counting a rollout's trace. */
  watch(traceId: string): void {
    this._counts.set(traceId, 0);
  }

  /** Spans of the trace that ended, less the rollout span (read once it ended). */
  agentSpans(traceId: string): number {
    return Math.max(0, (this._counts.get(traceId) ?? 0) - 1);
  }

  onStart(_span: Span, _parentContext: Context): void {}

  onEnd(span: ReadableSpan): void {
    const traceId = span.spanContext().traceId;
    const n = this._counts.get(traceId);
    if (n !== undefined) this._counts.set(traceId, n + 1);
  }

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
