import { ROOT_CONTEXT } from '@opentelemetry/api';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace-base';

/**
 * Replays finished spans into span processors: starts in start order, then ends in the order
 * given. For frameworks that build their spans outside any TracerProvider (Mastra), whose
 * processors only see the spans after the run.
 */
export function replayInto(processors: readonly SpanProcessor[], spans: readonly ReadableSpan[]): void {
  const ns = (t: [number, number]) => t[0] * 1e9 + t[1];
  const byStart = [...spans].sort((a, b) => ns(a.startTime) - ns(b.startTime));
  for (const p of processors) for (const s of byStart) p.onStart(s as any, ROOT_CONTEXT);
  for (const p of processors) for (const s of spans) p.onEnd(s);
}
