import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { SpanRole } from '../conventions/span-role.js';
import type { ToolwatchMetrics } from '../emission/metrics.js';
import { ATTR_OPENINFERENCE_SPAN_KIND } from '../semconv.js';
import type { ProblemLog } from './problem-log.js';
import { entryClosed, NO_SCOPE, type SpanEntry, unlinkEntry } from './span-entry.js';
import { MAX_SCOPES, Tombstone } from './tombstone.js';

/** How much a trace costs to follow. */
export const TraceMode = {
  /** Every agent-related span held; runs rebuilt and judged. */
  JUDGED: 0,
  /**
   * Out of the policy's sample: only agent spans are held (for rule matching, live checks and
   * the `skipped: sampled_out` record); other spans map to the agent above them.
   */
  SAMPLED_OUT: 1,
  /**
   * Followed like `SAMPLED_OUT`, because no rule matched its root agent span at its start
   * (rules that read only the name, and all root-only): its runs get no record at all, unless
   * a rule matches the agent span as it ends (attributes set after start), and then a
   * `skipped: incomplete_trace` one, as its spans were not held.
   */
  UNMATCHED: 2,
} as const;
export type TraceMode = (typeof TraceMode)[keyof typeof TraceMode];

export interface LateRun {
  span: ReadableSpan;
  entry: SpanEntry;
  timer: ReturnType<typeof setTimeout>;
  done: Promise<void>;
  resolve: () => void;
  /** Its wait is over and it is judged on the next microtask (it stays in `late` until then). */
  queued: boolean;
}

export interface TraceState {
  traceId: string;
  mode: TraceMode;
  /** Held spans by id (JUDGED), or the open agent spans (SAMPLED_OUT and UNMATCHED, see `followed`). */
  spans: Map<string, SpanEntry>;
  /** Entries counted against the span limits. */
  held: number;
  /** About how many bytes of ended spans the trace holds (`retainedBytes`), counted against `maxBufferedBytes`. */
  bytes: number;
  /** Held spans still open: the trace is released when none is left (and nothing waits). Written by `TraceBuffer` only. */
  openCount: number;
  /** The sweep epoch of the last span activity. */
  activeEpoch: number;
  /**
   * When the trace began to be followed (`performance.now()`): a span that started later and is
   * not held was refused at its start (and counted then), rather than never seen.
   */
  since: number;
  /** Tool or model spans are held: some chain or root span may be an implicit run (of their calls). */
  hasCalls: boolean;
  /** The trace was first recognised when one of its spans ended (no agent-related span was known at start). */
  seenLate: boolean;
  /**
   * A span was held under a parent that had already ended (agno keeps a member's context
   * current after it returns): a run judged before may lose spans to the run around it, so
   * nested runs are rebuilt from the whole trace from then on.
   */
  grafted: boolean;
  /**
   * Some of the trace's spans were refused (span limits): its runs would be judged on partial
   * data, so they get `skipped: incomplete_trace` records instead of verdicts.
   */
  incomplete: boolean;
  evaluated: Set<string>;
  /** Execution spans already counted in `toolwatch.tool.executions`. */
  counted: Set<string>;
  /**
   * Untracked local parents of tracked tool/LLM spans: maybe agent spans whose attributes
   * come later. The trace is kept until they end.
   */
  awaiting: Set<string>;
  late: Map<string, LateRun>;
  /** Runs whose wait for late spans is over, judged on the next microtask. */
  finishing: number;
  /**
   * Agent-related spans refused at their start (span limits) and still open, by id:
   * `REFUSED_NESTED` when an agent is above one, `REFUSED_AGENT` when it is an agent (at
   * most `MAX_REFUSED` of them), so that nesting is known below and at their ends.
   */
  refused: Map<string, number>;
  /** JUDGED traces: open ordinary spans, not held as entries until an agent-related span starts below one. */
  ordinary: Map<string, ReadableSpan>;
  /** JUDGED traces: agent spans held, and tool and model spans held with no agent above them (their calls make implicit runs). */
  agents: number;
  looseCalls: number;
  /** SAMPLED_OUT traces: the open agent span that started last. */
  lastAgent: SpanEntry | undefined;
  /**
   * SAMPLED_OUT and UNMATCHED traces: every open span followed, by object, and its scope (its
   * own entry for agent spans, the agent's `toolScope` for tool spans, else the agent entry
   * above it or `NO_SCOPE`). A span object never used as a key has no identity hash, so asking
   * for one that was not followed (most spans of the trace: ordinary ones) costs no string
   * hashing and no probe, and following one hashes no id.
   */
  followed: Map<ReadableSpan, SpanEntry>;
}

export interface TraceBufferLimits {
  maxTraces: number;
  maxSpansPerTrace: number;
  maxBufferedSpans: number;
  maxBufferedBytes: number;
  traceTtlMs: number;
}

// Most traces never need these; they are allocated on first write.
const NO_SPANS: Set<string> = new Set();
const NO_LATE_RUNS: Map<string, LateRun> = new Map();
const NO_ORDINARY: Map<string, ReadableSpan> = new Map();
const NO_FOLLOWED: Map<ReadableSpan, SpanEntry> = new Map();
const NO_REFUSED: Map<string, number> = new Map();
const NO_EVICTED: TraceState[] = [];
/** Open refused spans remembered per trace; past it, one's nesting is read from the held spans only. */
const MAX_REFUSED = 10_000;
/** Tombstones kept at least (each a trace id and its open agents), whatever `maxTraces`. */
const MIN_TOMBSTONES = 1000;
export const REFUSED_NESTED = 1;
export const REFUSED_AGENT = 2;

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

/** What a held entry's role adds to its trace's counts: agents, calls, and calls with no agent above. */
function countRole(state: TraceState, entry: SpanEntry): void {
  const role = entry.role;
  if (role === SpanRole.AGENT) state.agents++;
  else if (role === SpanRole.TOOL || role === SpanRole.LLM) {
    state.hasCalls = true;
    if (entry.agent === undefined) state.looseCalls++;
  }
}

/** Nearest agent above, by pointer when the parent was held at start, else by walking the held parents (late traces). */
export function hasAgentAbove(state: TraceState, entry: SpanEntry): boolean {
  if (entry.agent !== undefined) return true;
  if (entry.parent !== undefined) return false;
  return parentHasAgent(state, entry.parentId);
}

export function parentHasAgent(state: TraceState, parentId: string | undefined): boolean {
  let steps = 0;
  while (parentId !== undefined && steps++ < 100_000) {
    const ancestor = state.spans.get(parentId);
    if (ancestor === undefined) return false;
    if (ancestor.role === SpanRole.AGENT) return true;
    if (ancestor.agent !== undefined) return true;
    if (ancestor.parent !== undefined) return false;
    parentId = ancestor.parentId;
  }
  return false;
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
    const state: TraceState = {
      traceId,
      mode,
      spans: new Map(),
      held: 0,
      bytes: 0,
      openCount: 0,
      activeEpoch: this._epoch,
      since: performance.now(),
      hasCalls: false,
      seenLate,
      grafted: false,
      incomplete: false,
      evaluated: NO_SPANS,
      counted: NO_SPANS,
      awaiting: NO_SPANS,
      late: NO_LATE_RUNS,
      finishing: 0,
      refused: NO_REFUSED,
      lastAgent: undefined,
      ordinary: NO_ORDINARY,
      followed: NO_FOLLOWED,
      agents: 0,
      looseCalls: 0,
    };
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
      state.incomplete = true;
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
        state.incomplete = true;
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
    // Whether each entry is in the run, found once per entry (parents are mostly held
    // before their children, but not always: entries held late come after).
    const inRun = new Map<SpanEntry, boolean>([[agent, true]]);
    const path: SpanEntry[] = [];
    for (const entry of state.spans.values()) {
      const attributes = (entry.like ?? entry.span)?.attributes;
      if (attributes !== undefined && attributes[ATTR_OPENINFERENCE_SPAN_KIND] !== undefined) return;
      let at: SpanEntry | undefined = entry;
      let known = at === undefined ? false : inRun.get(at);
      while (at !== undefined && known === undefined) {
        path.push(at);
        at = at.parent ?? (at.parentId === undefined ? undefined : state.spans.get(at.parentId));
        known = at === undefined ? false : inRun.get(at);
      }
      for (const step of path) inRun.set(step, known === true);
      path.length = 0;
    }
    for (const [entry, doomed] of inRun) {
      if (!doomed || entry.open || !state.spans.delete(entry.spanId)) continue;
      unlinkEntry(entry);
      state.held--;
      this._held--;
      state.bytes -= entry.bytes;
      this._bytes -= entry.bytes;
      if (entry.role === SpanRole.AGENT) state.agents--;
      if (state.evaluated.size > 0) state.evaluated.delete(entry.spanId);
      if (state.counted.size > 0) state.counted.delete(entry.spanId);
    }
  }

  /**
   * Counts `bytes` more held by `state` (an ended span it keeps). Over `maxBufferedBytes` over
   * all traces, the oldest other traces are evicted; false when `state` alone is still over
   * (the caller evicts it: a trace that size cannot be held whole).
   */
  holdBytes(state: TraceState, bytes: number): boolean {
    state.bytes += bytes;
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

  /** Remembers a span refused at its start while it is open (see `refused`). */
  refuse(state: TraceState, spanId: string, flags: number): void {
    if (state.refused === NO_REFUSED) state.refused = new Map();
    if (state.refused.size < MAX_REFUSED) state.refused.set(spanId, flags);
  }

  /** A span refused at its start ends: what was remembered of it (undefined: nothing), forgotten now. */
  refusedEnded(state: TraceState, spanId: string): number | undefined {
    if (state.refused.size === 0) return undefined;
    const flags = state.refused.get(spanId);
    if (flags !== undefined) state.refused.delete(spanId);
    return flags;
  }

  /** Holds an admitted entry (open, unless the caller closes it at once). */
  hold(state: TraceState, entry: SpanEntry): void {
    state.openCount++;
    countRole(state, entry);
    state.spans.set(entry.spanId, entry);
    if (entry.parent !== undefined && !entry.parent.open) state.grafted = true;
    state.held++;
    this._held++;
    state.activeEpoch = this._epoch;
  }

  /** A held ordinary entry's span ended agent-related (attributes set after its start): counted as such. */
  setRole(state: TraceState, entry: SpanEntry, role: SpanRole): void {
    entry.role = role;
    countRole(state, entry);
  }

  /** SAMPLED_OUT traces: an agent span (held by id) is known by its object too, so ends of the others cost no lookup. */
  follow(state: TraceState, span: ReadableSpan, entry: SpanEntry): void {
    if (state.followed === NO_FOLLOWED) state.followed = new Map();
    state.followed.set(span, entry);
  }

  /**
   * SAMPLED_OUT traces: an open span that is not an agent maps to the agent span above it,
   * by its object only (no id to hash; a child finds it through its start context).
   */
  holdScope(state: TraceState, span: ReadableSpan, scope: SpanEntry): void {
    if (state.followed === NO_FOLLOWED) state.followed = new Map();
    state.followed.set(span, scope);
    state.openCount++;
    state.held++;
    this._held++;
    state.activeEpoch = this._epoch;
  }

  /** SAMPLED_OUT traces: what `span` mapped to when it started, if it was followed; it is not any more. */
  unfollow(state: TraceState, span: ReadableSpan): SpanEntry | undefined {
    const followed = state.followed;
    if (followed.size === 0) return undefined;
    const entry = followed.get(span);
    if (entry !== undefined) followed.delete(span);
    return entry;
  }

  /** SAMPLED_OUT traces: a span held by `holdScope` ended. */
  releaseScope(state: TraceState): void {
    state.openCount--;
    state.held--;
    this._held--;
  }

  /** JUDGED traces: an open ordinary span, counted against the limits but not held as an entry. */
  holdOrdinary(state: TraceState, spanId: string, span: ReadableSpan): void {
    if (state.ordinary === NO_ORDINARY) state.ordinary = new Map();
    state.ordinary.set(spanId, span);
    state.held++;
    this._held++;
    state.activeEpoch = this._epoch;
  }

  forgetOrdinary(state: TraceState, spanId: string): void {
    if (state.ordinary.delete(spanId)) {
      state.held--;
      this._held--;
    }
  }

  /** An open ordinary span becomes an entry: already counted against the limits when it started. */
  adopt(state: TraceState, entry: SpanEntry): void {
    state.openCount++;
    state.spans.set(entry.spanId, entry);
    if (entry.parent !== undefined && !entry.parent.open) state.grafted = true;
    countRole(state, entry);
  }

  /** A held entry's span ended (or had ended already): the trace has one open span less. */
  close(state: TraceState, entry: SpanEntry): void {
    if (!entry.open) return;
    state.openCount--;
    entryClosed(entry);
  }

  /** Lets go of one entry (a leaf that reconstruction will not need). */
  forget(state: TraceState, spanId: string): void {
    const entry = state.spans.get(spanId);
    if (entry !== undefined && state.spans.delete(spanId)) {
      unlinkEntry(entry);
      state.held--;
      this._held--;
    }
  }

  /** Nothing open, nothing waiting: the trace's runs are judged and its spans can go. */
  releaseIfIdle(state: TraceState): void {
    if (state.openCount === 0 && state.late.size === 0 && state.awaiting.size === 0) this.release(state);
  }

  touch(state: TraceState): void {
    state.activeEpoch = this._epoch;
  }

  awaitParent(state: TraceState, parentId: string): void {
    if (state.awaiting === NO_SPANS) state.awaiting = new Set();
    state.awaiting.add(parentId);
  }

  /** A span the trace waited for (see `awaitParent`) ended, and is held. */
  parentEnded(state: TraceState, spanId: string): void {
    if (state.awaiting.size > 0) state.awaiting.delete(spanId);
  }

  /** The run of `spanId` has had its turn (judged, recorded, or waiting for late spans). */
  markEvaluated(state: TraceState, spanId: string): void {
    if (state.evaluated === NO_SPANS) state.evaluated = new Set();
    state.evaluated.add(spanId);
  }

  counted(state: TraceState, spanId: string): boolean {
    if (state.counted.has(spanId)) return true;
    if (state.counted === NO_SPANS) state.counted = new Set();
    state.counted.add(spanId);
    return false;
  }

  addLate(state: TraceState, spanId: string, late: LateRun): void {
    if (state.late === NO_LATE_RUNS) state.late = new Map();
    state.late.set(spanId, late);
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
    state.held = 0;
    this._bytes -= state.bytes;
    state.bytes = 0;
    this._metrics.tracesBuffered(-1);
  }

  /** Gives a trace up: its held spans are counted as dropped for `reason`, and a tombstone stays. */
  evict(state: TraceState, reason: string, message: string): void {
    if (this._traces.get(state.traceId) !== state) return;
    // Whatever still refers to it (a run about to be judged after its late spans) gets a record, not a verdict.
    state.incomplete = true;
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
