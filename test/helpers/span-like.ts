import type { SpanLike } from '../../src/types.js';

/**
 * Builds `SpanLike` values directly, for adapter tests and reconstruction cases that the
 * GenAI-shaped TraceBuilder cannot express (other conventions, broken parents, odd values).
 *
 *   const spans = new SpanFactory();
 *   const root = spans.make('Agent workflow', { 'openinference.span.kind': 'AGENT' });
 *   const tool = spans.make('getWeather', { 'openinference.span.kind': 'TOOL' }, { parent: root });
 */
export interface SpanOptions {
  parent?: SpanLike | string;
  start?: number;
  end?: number | null;
  status?: SpanLike['status'];
  kind?: number;
  events?: SpanLike['events'];
  spanId?: string;
  resource?: Record<string, unknown>;
}

export class SpanFactory {
  private _next = 1;
  private _clock = 1_000;

  constructor(readonly traceId = 'f'.repeat(32)) {}

  /** A span; start times increase by 1 ms per span unless given, ends default to start + 0.5. */
  make(name: string, attributes: Record<string, unknown> = {}, options: SpanOptions = {}): SpanLike {
    const start = options.start ?? this._clock++;
    const span: SpanLike = {
      traceId: this.traceId,
      spanId: options.spanId ?? (this._next++).toString(16).padStart(16, '0'),
      name,
      kind: options.kind ?? 0,
      startTime: start,
      status: options.status ?? { code: 0 },
      attributes,
      events: options.events ?? [],
    };
    if (options.end !== null) span.endTime = options.end ?? start + 0.5;
    if (options.parent !== undefined) {
      span.parentSpanId = typeof options.parent === 'string' ? options.parent : options.parent.spanId;
    }
    if (options.resource) span.resource = options.resource;
    return span;
  }
}

/** Stretches each span's end over its descendants, as real parents enclose their children. */
export function encloseChildren(spans: SpanLike[]): SpanLike[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  // Children were made after their parents, so walking backwards settles grandchildren first.
  for (let i = spans.length - 1; i >= 0; i--) {
    const s = spans[i]!;
    const parent = s.parentSpanId ? byId.get(s.parentSpanId) : undefined;
    if (parent && parent.endTime !== undefined && s.endTime !== undefined && s.endTime >= parent.endTime) {
      parent.endTime = s.endTime + 0.25;
    }
  }
  return spans;
}
