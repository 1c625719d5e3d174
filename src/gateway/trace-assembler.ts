import { classify } from '../conventions/classify.js';
import type { RawSpan } from '../otlp/trace-request-splice.js';
import type { SpanLike } from '../types.js';

/** Why a trace was judged when it was. */
export type Completion = 'quiet' | 'max_wait' | 'span_limit' | 'shutdown';

export interface BufferedTrace {
  traceId: string;
  /** Every span as received, in arrival order. */
  raw: RawSpan[];
  /** The decoded spans (some raw spans may not decode; those are forwarded unjudged). */
  spans: SpanLike[];
  firstAt: number;
  lastAt: number;
  /** span id → the first span received with it (its parent id, '' for roots, for the outermost-agent check). */
  byId: Map<string, RawSpan>;
  agentSpanIds: string[];
  full: boolean;
  /** Ids under which a span with other content arrived after the first (see `add`). */
  conflicts: Set<string>;
  /** The id each conflicting span is judged under (it cannot share the first one's). */
  aliases: Map<RawSpan, string>;
}

export interface TraceAssemblerOptions {
  decisionWaitMs: number;
  maxWaitMs: number;
  maxSpansPerTrace: number;
  /** How many judged trace ids are remembered, so their late spans pass through. */
  decidedCacheSize: number;
}

/**
 * Completeness (docs/gateway.md, "When a trace is judged") for spans that arrive in any order, from any number of
 * requests or streams: a trace is due when its outermost agent span has arrived and no span
 * arrived for `decisionWaitMs`, or `maxWaitMs` after its first span. "Outermost agent span
 * arrived" means an agent span whose whole parent chain has arrived up to the trace root;
 * a trace whose root arrived and that holds no agent span at all is also due when quiet
 * (nothing to judge, nothing to hold back). A trace reaching `maxSpansPerTrace` is due at once.
 */
export class TraceAssembler {
  private readonly _traces = new Map<string, BufferedTrace>();
  private readonly _decided = new Set<string>();
  private _spans = 0;

  constructor(private readonly _o: TraceAssemblerOptions) {}

  get bufferedSpans(): number {
    return this._spans;
  }

  get bufferedTraces(): number {
    return this._traces.size;
  }

  has(traceId: string): boolean {
    return this._traces.has(traceId);
  }

  /**
   * `late` when the trace was already judged (the span passes through unjudged);
   * `duplicate` when the trace already holds this span — same id, same bytes, same resource
   * and scope: a sender retrying a request the gateway had accepted — so a retry never counts
   * a tool call twice; `conflict` when it holds another span under this id. A conflicting span
   * is kept and judged under an alias (`<id>#<n>`, never a hex id): dropping it as a retry
   * would let a sender hide a call (a `delete_all` sent under the id of an earlier `lookup`)
   * from the verdict and from every backend behind the gateway.
   */
  add(raw: RawSpan, span: SpanLike | undefined, now: number): 'buffered' | 'late' | 'duplicate' | 'conflict' {
    if (this._decided.has(raw.traceId)) return 'late';
    let trace = this._traces.get(raw.traceId);
    if (!trace) {
      trace = {
        traceId: raw.traceId,
        raw: [],
        spans: [],
        firstAt: now,
        lastAt: now,
        byId: new Map(),
        agentSpanIds: [],
        full: false,
        conflicts: new Set(),
        aliases: new Map(),
      };
      this._traces.set(raw.traceId, trace);
    }
    const first = trace.byId.get(raw.spanId);
    let alias: string | undefined;
    if (first) {
      if (sameSpan(first, raw)) return 'duplicate';
      trace.conflicts.add(raw.spanId);
      alias = `${raw.spanId}#${trace.aliases.size + 1}`;
      trace.aliases.set(raw, alias);
    } else trace.byId.set(raw.spanId, raw);
    trace.raw.push(raw);
    trace.lastAt = now;
    if (span) {
      trace.spans.push(alias === undefined ? span : { ...span, spanId: alias });
      if (classify(span) === 'agent') trace.agentSpanIds.push(raw.spanId);
    }
    this._spans++;
    if (trace.raw.length >= this._o.maxSpansPerTrace) trace.full = true;
    return alias === undefined ? 'buffered' : 'conflict';
  }

  /** Removes and returns the traces that are due at `now`. */
  due(now: number): { trace: BufferedTrace; completion: Completion }[] {
    const out: { trace: BufferedTrace; completion: Completion }[] = [];
    for (const trace of this._traces.values()) {
      let completion: Completion | undefined;
      if (trace.full) completion = 'span_limit';
      else if (now - trace.firstAt >= this._o.maxWaitMs) completion = 'max_wait';
      else if (now - trace.lastAt >= this._o.decisionWaitMs && anchored(trace)) completion = 'quiet';
      if (completion) out.push({ trace, completion });
    }
    for (const { trace } of out) this._take(trace);
    return out;
  }

  /** Removes and returns every buffered trace (shutdown). */
  drain(): { trace: BufferedTrace; completion: Completion }[] {
    const out = [...this._traces.values()].map((trace) => ({ trace, completion: 'shutdown' as const }));
    for (const { trace } of out) this._take(trace);
    return out;
  }

  private _take(trace: BufferedTrace): void {
    this._traces.delete(trace.traceId);
    this._spans -= trace.raw.length;
    this._decided.add(trace.traceId);
    // A Set iterates in insertion order: the oldest decision goes first.
    if (this._decided.size > this._o.decidedCacheSize) {
      this._decided.delete(this._decided.values().next().value!);
    }
  }
}

/** Span ids a verdict and its log line list as conflicting; the metric counts every span. */
const MAX_CONFLICTS_LISTED = 16;

/** The first `MAX_CONFLICTS_LISTED` conflicting span ids of a trace, in arrival order. */
export function listedConflicts(trace: BufferedTrace): string[] {
  const out: string[] = [];
  for (const id of trace.conflicts) {
    if (out.length === MAX_CONFLICTS_LISTED) break;
    out.push(id);
  }
  return out;
}

/** A retry: the span message, resource and scope exactly as the first time. */
function sameSpan(a: RawSpan, b: RawSpan): boolean {
  return (
    a.resource.key === b.resource.key &&
    a.scope.key === b.scope.key &&
    Buffer.from(a.bytes.buffer, a.bytes.byteOffset, a.bytes.byteLength).equals(b.bytes)
  );
}

function anchored(trace: BufferedTrace): boolean {
  if (trace.agentSpanIds.length === 0) {
    for (const span of trace.byId.values()) if (span.parentSpanId === '') return true;
    return false;
  }
  // Each span's answer is remembered, so agent spans nested in one chain cost O(spans) in
  // total rather than a walk per agent span: a 10,000-deep chain whose root never comes is
  // checked on every tick until max_wait and must not stall the event loop.
  const known = new Map<string, boolean>();
  const path: string[] = [];
  for (const id of trace.agentSpanIds) {
    let current = id;
    let result: boolean | undefined;
    path.length = 0;
    // Bounded by the number of spans, so a parent cycle in hostile input cannot loop forever.
    for (let steps = 0; steps <= trace.byId.size; steps++) {
      result = known.get(current);
      if (result !== undefined) break;
      const parent = trace.byId.get(current)?.parentSpanId;
      if (parent === undefined) {
        result = false;
        break;
      }
      path.push(current);
      if (parent === '') {
        result = true;
        break;
      }
      current = parent;
    }
    result ??= false;
    for (const span of path) known.set(span, result);
    if (result) return true;
  }
  return false;
}
