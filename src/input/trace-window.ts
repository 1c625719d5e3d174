import type { SpanLike } from '../types.js';

/** The spans of one trace, gathered from consecutive records. */
export interface TraceGroup {
  traceId: string;
  spans: SpanLike[];
  /** Where the trace was first seen. */
  file: string;
  line: number;
}

export interface TraceWindowOptions {
  /**
   * A trace is complete when this many records have gone by without mentioning it. Default
   * 1000 (about three minutes of the Collector's batch processor at its 200 ms timeout
   * under steady load; a trace whose spans are further apart is split, and reported).
   */
  window?: number;
  /** Most spans held across open traces; over it, the oldest trace is judged early. Default 200,000. */
  maxOpenSpans?: number;
  /** Closed trace ids remembered to detect a trace that reappears. Default 65,536. */
  rememberClosed?: number;
}

/** Why a trace was closed before its spans stopped arriving. */
export interface WindowEvent {
  kind: 'reappeared' | 'forced';
  traceId: string;
  file: string;
  line: number;
}

interface OpenTrace extends TraceGroup {
  last: number;
  prev: OpenTrace | undefined;
  next: OpenTrace | undefined;
}

/**
 * Groups a stream of spans by trace with bounded memory: traces stay open while records keep
 * mentioning them and close `window` records after the last mention (or when the span bound
 * forces the oldest out, or at the end of input). Open traces form a list in order of last
 * mention (a Map only finds them), so each step is O(1) — iterating a Map from its front
 * after deletions is not, since V8 skips the deleted slots each time.
 */
export class TraceWindow {
  private readonly open = new Map<string, OpenTrace>();
  private oldest: OpenTrace | undefined;
  private newest: OpenTrace | undefined;
  /**
   * Closed trace ids, each with how many slots of the ring hold it: a trace that reappears
   * and closes again is in the ring twice, and the older slot's eviction must not forget it.
   */
  private readonly closed = new Map<string, number>();
  private readonly closedRing: Array<string | undefined>;
  private closedAt = 0;
  private readonly window: number;
  private readonly maxOpenSpans: number;
  private record = 0;
  private spans = 0;
  readonly events: WindowEvent[] = [];
  /** Traces closed early by the span bound. */
  forced = 0;
  /** Traces seen again after they were closed (their runs were judged without the late spans). */
  reappeared = 0;

  constructor(options: TraceWindowOptions = {}) {
    this.window = Math.max(1, options.window ?? 1000);
    this.maxOpenSpans = Math.max(1, options.maxOpenSpans ?? 200_000);
    this.closedRing = new Array(Math.max(1, options.rememberClosed ?? 65_536));
  }

  /**
   * Adds one record's spans; returns the traces this record completes (oldest first). `at`
   * is the record's number in the whole input, for a window that sees only some records (a
   * shard of `toolwatch score --jobs`); by default the records it is given are counted.
   */
  add(spans: readonly SpanLike[], file: string, line: number, at = this.record + 1): TraceGroup[] {
    this.record = at;
    // A record's spans mostly share one trace: look the trace up once per run of them.
    let group: OpenTrace | undefined;
    for (const span of spans) {
      if (group === undefined || group.traceId !== span.traceId) group = this.open.get(span.traceId);
      if (group === undefined) {
        if (this.closed.has(span.traceId)) {
          this.reappeared++;
          if (this.events.length < 100)
            this.events.push({ kind: 'reappeared', traceId: span.traceId, file, line });
        }
        group = { traceId: span.traceId, spans: [], file, line, last: at, prev: undefined, next: undefined };
        this.open.set(span.traceId, group);
        this.append(group);
      } else if (group.last !== at) {
        group.last = at;
        this.unlink(group);
        this.append(group);
      }
      group.spans.push(span);
      this.spans++;
    }
    return this.closeBefore(at);
  }

  /**
   * The input has reached record `at` without mentioning this window's traces (records of
   * other shards went by): returns the traces that completes, oldest first.
   */
  advance(at: number): TraceGroup[] {
    if (at <= this.record) return [];
    this.record = at;
    return this.closeBefore(at);
  }

  private closeBefore(at: number): TraceGroup[] {
    const done: TraceGroup[] = [];
    for (let g = this.oldest; g !== undefined; g = this.oldest) {
      if (g.last > at - this.window) {
        if (this.spans <= this.maxOpenSpans) break;
        this.forced++;
        if (this.events.length < 100)
          this.events.push({ kind: 'forced', traceId: g.traceId, file: g.file, line: g.line });
      }
      done.push(this.close(g));
    }
    return done;
  }

  /** Every open trace, oldest first: the end of input. */
  drain(): TraceGroup[] {
    const done: TraceGroup[] = [];
    while (this.oldest) done.push(this.close(this.oldest));
    return done;
  }

  get openTraces(): number {
    return this.open.size;
  }

  private append(g: OpenTrace): void {
    g.prev = this.newest;
    g.next = undefined;
    if (this.newest) this.newest.next = g;
    else this.oldest = g;
    this.newest = g;
  }

  private unlink(g: OpenTrace): void {
    if (g.prev) g.prev.next = g.next;
    else this.oldest = g.next;
    if (g.next) g.next.prev = g.prev;
    else this.newest = g.prev;
    g.prev = g.next = undefined;
  }

  private close(g: OpenTrace): TraceGroup {
    this.unlink(g);
    this.open.delete(g.traceId);
    this.spans -= g.spans.length;
    const evicted = this.closedRing[this.closedAt];
    if (evicted !== undefined) {
      const slots = this.closed.get(evicted)! - 1;
      if (slots === 0) this.closed.delete(evicted);
      else this.closed.set(evicted, slots);
    }
    this.closedRing[this.closedAt] = g.traceId;
    this.closedAt = (this.closedAt + 1) % this.closedRing.length;
    this.closed.set(g.traceId, (this.closed.get(g.traceId) ?? 0) + 1);
    return { traceId: g.traceId, spans: g.spans, file: g.file, line: g.line };
  }
}
