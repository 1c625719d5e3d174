import type { HrTime } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { SpanEventLike, SpanLike, StatusCode } from '../types.js';

/**
 * Adapts an SDK 2.x `ReadableSpan` (also an open `Span` seen in `onStart`) to `SpanLike`.
 *
 * Cheap by design, since it runs on the hot path: attributes are shared, not copied, so a
 * span read while open keeps seeing attributes added later. Reads the parent from
 * `parentSpanContext` (SDK 2.x) and from the older `parentSpanId` (SDK 1.x, and spans
 * re-parented by processors that clear only one of them).
 */
export function fromReadableSpan(span: ReadableSpan): SpanLike {
  const ctx = span.spanContext();
  const legacy = span as unknown as { parentSpanId?: string };
  const parentSpanId = span.parentSpanContext?.spanId ?? legacy.parentSpanId;
  const status = span.status;
  const out: SpanLike = {
    traceId: ctx.traceId,
    spanId: ctx.spanId,
    name: span.name,
    kind: span.kind,
    startTime: hrTimeToMs(span.startTime),
    status: status?.message
      ? { code: status.code as StatusCode, message: status.message }
      : { code: (status?.code ?? 0) as StatusCode },
    attributes: span.attributes,
    events: span.events.length === 0 ? [] : span.events.map(toEvent),
  };
  if (parentSpanId) out.parentSpanId = parentSpanId;
  if (span.ended) out.endTime = hrTimeToMs(span.endTime);
  const resource = span.resource?.attributes;
  if (resource) out.resource = resource;
  const scope = span.instrumentationScope;
  if (scope) out.scope = scope.version ? { name: scope.name, version: scope.version } : { name: scope.name };
  if (span.droppedAttributesCount > 0) out.droppedAttributesCount = span.droppedAttributesCount;
  return out;
}

function toEvent(e: ReadableSpan['events'][number]): SpanEventLike {
  return { name: e.name, time: hrTimeToMs(e.time), attributes: e.attributes ?? {} };
}

/** HrTime → epoch milliseconds with the nanoseconds kept as a fraction. */
export function hrTimeToMs(t: HrTime): number {
  return t[0] * 1e3 + t[1] / 1e6;
}
