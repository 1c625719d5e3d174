import { type Context, type SpanContext, TraceFlags, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

/**
 * Every read of the SDK's span internals, and the stand-ins built for it, in one place: what
 * the SDK keeps beyond `ReadableSpan` (its monotonic start, 1.x's `parentSpanId`) is read here
 * only, each read with a fallback for span implementations without it.
 */

const TIME_ORIGIN = performance.timeOrigin;

/**
 * The span's start on the monotonic clock, as epoch ms. SDK 2.x spans already read that clock
 * when they start (`_performanceStartTime`, to compute their end); reusing it saves a clock
 * read per span. Undefined when the caller gave the start time (the SDK then keeps it as
 * given), or, with `readClock` false, for span implementations that do not keep it.
 */
export function highResolutionStart(span: ReadableSpan, readClock = true): number | undefined {
  const sdk = span as unknown as { _performanceStartTime?: unknown; _startTimeProvided?: unknown };
  if (sdk._startTimeProvided === true) return undefined;
  if (typeof sdk._performanceStartTime === 'number') return TIME_ORIGIN + sdk._performanceStartTime;
  return readClock ? TIME_ORIGIN + performance.now() : undefined;
}

/** The id of the span's parent: `parentSpanContext` (SDK 2.x), or 1.x's `parentSpanId`. */
export function parentIdOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId ?? (span as unknown as { parentSpanId?: string }).parentSpanId;
}

/**
 * The span object of a start context when it is the span `parentId`: a span's parent found
 * without holding it (a context may carry only a span context, or another span).
 */
export function parentSpanOf(parentContext: Context, parentId: string): ReadableSpan | undefined {
  const candidate = trace.getSpan(parentContext) as unknown as ReadableSpan | undefined;
  return candidate !== undefined && candidate.spanContext().spanId === parentId ? candidate : undefined;
}

/** Whether the span started after `since` (both on `performance.now()`'s clock), so went through `onStart` while its trace was followed. */
export function startedSince(span: ReadableSpan, since: number): boolean {
  const start = (span as unknown as { _performanceStartTime?: unknown })._performanceStartTime;
  return typeof start === 'number' && start >= since;
}

/** A stand-in for a run span that has already ended: only its context is needed, to parent an evaluate span. */
export function contextOnly(traceId: string, spanId: string): ReadableSpan {
  const spanContext: SpanContext = { traceId, spanId, traceFlags: TraceFlags.SAMPLED };
  return { spanContext: () => spanContext } as ReadableSpan;
}
