import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { SpanRole } from '../conventions/span-role.js';
import type { ToolwatchMetrics } from '../emission/metrics.js';
import type { ProblemLog } from './problem-log.js';
import { NO_SCOPE, type SpanEntry } from './span-entry.js';
import { MAX_SCOPES, Tombstone } from './tombstone.js';
import { REFUSED_AGENT, REFUSED_NESTED, TraceMode, TraceState } from './trace-state.js';

export interface TraceBufferLimits {
  maxTraces: number;
  maxSpansPerTrace: number;
  maxBufferedSpans: number;
  maxBufferedBytes: number;
  traceTtlMs: number;
}

const NO_EVICTED: TraceState[] = [];
/** Tombstones kept at least (each a trace id and its open agents), whatever `maxTraces`. */
const MIN_TOMBSTONES = 1000;

/** The refused agent spans still open, and whether each is nested: a tombstone's `openAgents`. */
function refusedAgents(state: TraceState): Map<string, boolean> {
  const out = new Map<string, boolean>();
  for (const [spanId, flags] of state.refused) {
    if ((flags & REFUSED_AGENT) !== 0) out.set(spanId, (flags & REFUSED_NESTED) !== 0);
  }
  return out;
}

/** The refused spans still open, and whether an agent is at or above each: a tombstone's `scopes`. */
function refusedScopes(state: TraceState): Map<string, boolean> {
  const out = new Map<string, boolean>();
  for (const [spanId, flags] of state.refused) {
    if (out.size >= MAX_SCOPES) break;
    out.set(spanId, flags !== 0);
  }
  return out;
}

/**
 * The agent traces the processor holds, within the limits of its options: spans per trace,
 * traces, spans over all traces, and inactivity. A trace that has to go is evicted as a
 * whole and leaves a tombstone, so its later spans are counted and never start a new,
 * partial trace; the processor takes it (`takeEvicted`) and gives its waiting runs a record.
 */
export class TraceBuffer {
  private readonly _traces = new Map<string, TraceState>();
  private readonly _tombstones = new Map<string, Tombstone>();
  /** Evicted during the current hook or sweep, until the processor takes them. */
  private _evicted: TraceState[] = NO_EVICTED;
  /** Entries held over all traces. */
  private _held = 0;
  /** Bytes of ended spans held over all traces. */
  private _bytes = 0;
  /** Traces held in `JUDGED` mode: while there are none, no ordinary span needs a lookup. */
  private _judged = 0;
  /** The last lookup, by trace id. */
  private _lastId: string | undefined;
  private _last: TraceState | undefined;
  /** Sweeps so far: inactivity is counted in sweeps, not read from a clock that may jump or stall. */
  private _epoch = 0;
  private readonly _ttlEpochs: number;
  readonly sweepPeriodMs: number;

  constructor(
    private readonly _limits: TraceBufferLimits,
    private readonly _metrics: ToolwatchMetrics,
    private readonly _problems: ProblemLog,
  ) {
    this.sweepPeriodMs = Math.max(10, Math.min(_limits.traceTtlMs / 4, 30_000));
    this._ttlEpochs = Math.max(1, Math.ceil(_limits.traceTtlMs / this.sweepPeriodMs));
  }

  get size(): number {
    return this._traces.size;
  }

  /** Sweeps so far: what traces and tombstones count their inactivity in. */
  get epoch(): number {
    return this._epoch;
  }

  get held(): number {
    return this._held;
  }

  /** Bytes of ended spans held over all traces (`retainedBytes`). */
  get bytes(): number {
    return this._bytes;
  }

  /** How many held traces are `JUDGED` (the others hold agent-related spans only). */
  get judged(): number {
    return this._judged;
  }

  get(traceId: string): TraceState | undefined {
    // Consecutive spans mostly belong to one trace (and share its id string).
    if (traceId === this._lastId) return this._last;
    const state = this._traces.get(traceId);
    this._lastId = traceId;
    this._last = state;
    return state;
  }

  get hasTombstones(): boolean {
    return this._tombstones.size > 0;
  }

  tombstone(traceId: string): Tombstone | undefined {
    return this._tombstones.size === 0 ? undefined : this._tombstones.get(traceId);
  }

  traces(): IterableIterator<TraceState> {
    return this._traces.values();
  }

  create(traceId: string, mode: TraceMode, seenLate: boolean): TraceState {
    if (this._traces.size >= this._limits.maxTraces) {
      // Evict the oldest trace rather than refuse the new one: under pressure the oldest is
      // most likely a root that will never end, and refusing would stop all evaluation.
      const oldest = this._traces.values().next().value as TraceState;
      this.evict(oldest, 'max_traces', `${this._limits.maxTraces} agent traces are held`);
    }
    const state = new TraceState(traceId, mode, seenLate, this._epoch, performance.now());
    this._traces.set(traceId, state);
    if (mode === TraceMode.JUDGED) this._judged++;
    this._lastId = undefined;
    this._metrics.tracesBuffered(1);
    return state;
  }

  /**
   * Room for one more span in `state`, or false (the span is counted as dropped and the
   * trace marked incomplete). Makes room over all traces by evicting the oldest others.
   */
  admit(state: TraceState): boolean {
    if (state.held >= this._limits.maxSpansPerTrace) {
      state.markIncomplete();
      this._problems.dropped(
        'max_spans_per_trace',
        `trace ${state.traceId} holds ${this._limits.maxSpansPerTrace} spans`,
      );
      return false;
    }
    if (this._held >= this._limits.maxBufferedSpans) {
      for (const oldest of this._traces.values()) {
        if (this._held < this._limits.maxBufferedSpans) break;
        if (oldest === state) continue;
        this.evict(oldest, 'max_buffered_spans', `${this._limits.maxBufferedSpans} spans are held`);
      }
      if (this._held >= this._limits.maxBufferedSpans) {
        state.markIncomplete();
        this._problems.dropped('max_buffered_spans', `${this._limits.maxBufferedSpans} spans are held`);
        return false;
      }
    }
    return true;
  }

  /**
   * A top-level run of a trace that goes on (a workflow or session span above it) has been
   * judged, with every run below it, and nothing in it is open: its entries go, so that a
   * long-lived trace holds its open runs only, and judging each run rebuilds that run, not
   * every run before it. Kept when the trace has OpenInference spans: a run started later
   * may name one of these as its source (`graph.node.parent_id`, by node id or agent name),
   * and reconstruction must see it.
   */
  releaseRun(state: TraceState, agent: SpanEntry): void {
    // A run below may still be waiting for its late spans, or about to be judged after them;
    // and with calls outside every agent, a span around the run may be an implicit run,
    // whose members (this run among them) are judged with it when it ends.
    if (state.late.size > 0 || state.finishing > 0 || state.looseCalls > 0) return;
    const held = state.held;
    const bytes = state.bytes;
    state.releaseRun(agent);
    this._held -= held - state.held;
    this._bytes -= bytes - state.bytes;
  }

  /**
   * Counts `bytes` more held by `state` (an ended span it keeps). Over `maxBufferedBytes` over
   * all traces, the oldest other traces are evicted; false when `state` alone is still over
   * (the caller evicts it: a trace that size cannot be held whole).
   */
  holdBytes(state: TraceState, bytes: number): boolean {
    state.addBytes(bytes);
    this._bytes += bytes;
    const max = this._limits.maxBufferedBytes;
    if (this._bytes <= max) return true;
    for (const oldest of this._traces.values()) {
      if (this._bytes <= max) break;
      if (oldest === state) continue;
      this.evict(oldest, 'max_buffered_bytes', `${max} bytes of ended spans are held`);
    }
    return this._bytes <= max;
  }

  /** Holds an admitted entry (open, unless the caller closes it at once). */
  hold(state: TraceState, entry: SpanEntry): void {
    state.hold(entry, this._epoch);
    this._held++;
  }

  /**
   * SAMPLED_OUT traces: an open span that is not an agent maps to the agent span above it,
   * by its object only (no id to hash; a child finds it through its start context).
   */
  holdScope(state: TraceState, span: ReadableSpan, scope: SpanEntry): void {
    state.holdScope(span, scope, this._epoch);
    this._held++;
  }

  /** SAMPLED_OUT traces: a span held by `holdScope` ended. */
  releaseScope(state: TraceState): void {
    state.releaseScope();
    this._held--;
  }

  /** JUDGED traces: an open ordinary span, counted against the limits but not held as an entry. */
  holdOrdinary(state: TraceState, spanId: string, span: ReadableSpan): void {
    state.holdOrdinary(spanId, span, this._epoch);
    this._held++;
  }

  forgetOrdinary(state: TraceState, spanId: string): void {
    if (state.forgetOrdinary(spanId)) this._held--;
  }

  /** Lets go of one entry (a leaf that reconstruction will not need). */
  forget(state: TraceState, spanId: string): void {
    if (state.forget(spanId)) this._held--;
  }

  /** Nothing open, nothing waiting: the trace's runs are judged and its spans can go. */
  releaseIfIdle(state: TraceState): void {
    if (state.openCount === 0 && state.late.size === 0 && state.awaiting.size === 0) this.release(state);
  }

  touch(state: TraceState): void {
    state.touch(this._epoch);
  }

  /** The trace is done: its spans go, without a tombstone. */
  release(state: TraceState): void {
    if (this._traces.get(state.traceId) !== state) return;
    this._traces.delete(state.traceId);
    // Evicted, or spans were refused (span limits): those still open, and any that start later,
    // must not start a new trace and be judged on what is left of it.
    if (state.incomplete) this._bury(state);
    if (state.mode === TraceMode.JUDGED) this._judged--;
    this._lastId = undefined;
    this._held -= state.held;
    this._bytes -= state.bytes;
    state.released();
    this._metrics.tracesBuffered(-1);
  }

  /** Gives a trace up: its held spans are counted as dropped for `reason`, and a tombstone stays. */
  evict(state: TraceState, reason: string, message: string): void {
    if (this._traces.get(state.traceId) !== state) return;
    // Whatever still refers to it (a run about to be judged after its late spans) gets a record, not a verdict.
    state.markIncomplete();
    this._problems.dropped(reason, message, state.held);
    this.release(state);
    // Its spans stay with it: the processor gives its waiting runs their records (`takeEvicted`).
    if (this._evicted === NO_EVICTED) this._evicted = [];
    this._evicted.push(state);
  }

  /** Traces evicted since the last call, whose runs still need their records; at most one hook's worth. */
  get hasEvicted(): boolean {
    return this._evicted.length > 0;
  }

  takeEvicted(): readonly TraceState[] {
    const evicted = this._evicted;
    this._evicted = NO_EVICTED;
    return evicted;
  }

  /**
   * Leaves a tombstone for a trace that goes unfinished: its open agent spans (held or refused)
   * and whether each is nested, and every open span's scope, for the spans still to come.
   */
  private _bury(state: TraceState): void {
    const openAgents = refusedAgents(state);
    const scopes = refusedScopes(state);
    for (const entry of state.spans.values()) {
      if (!entry.open || entry === NO_SCOPE) continue;
      if (entry.role === SpanRole.AGENT) openAgents.set(entry.spanId, entry.agent !== undefined);
      if (scopes.size < MAX_SCOPES)
        scopes.set(entry.spanId, entry.role === SpanRole.AGENT || entry.agent !== undefined);
    }
    this._tombstones.set(
      state.traceId,
      new Tombstone(state.traceId, this._epoch, openAgents, scopes, state.looseCalls > 0),
    );
    // As many as traces, and never so few that a small maxTraces forgets the trace it just evicted.
    if (this._tombstones.size > Math.max(this._limits.maxTraces, MIN_TOMBSTONES)) {
      this._tombstones.delete(this._tombstones.keys().next().value as string);
    }
  }

  /** One sweep: traces with no activity in the last `traceTtlMs` worth of sweeps are evicted. */
  sweep(): void {
    const epoch = ++this._epoch;
    for (const state of this._traces.values()) {
      if (epoch - state.activeEpoch <= this._ttlEpochs) continue;
      this.evict(
        state,
        'ttl',
        `agent trace ${state.traceId} had no activity for ${this._limits.traceTtlMs} ms`,
      );
    }
    for (const tombstone of this._tombstones.values()) {
      // One that still waits for an open agent span (or an implicit run's root) stays, however
      // quiet (tombstones are bounded by count): when that span ends, its run gets its record,
      // rather than a new trace judged on that span alone, or nothing.
      if (tombstone.expired(epoch, this._ttlEpochs)) this._tombstones.delete(tombstone.traceId);
    }
  }

  /** Everything goes (shutdown); returns how many spans were held. */
  clear(): number {
    const held = this._held;
    this._metrics.tracesBuffered(-this._traces.size);
    this._traces.clear();
    this._judged = 0;
    this._lastId = undefined;
    this._tombstones.clear();
    this._held = 0;
    this._bytes = 0;
    return held;
  }
}
