import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { SpanRole } from '../conventions/span-role.js';
import { ATTR_OPENINFERENCE_SPAN_KIND } from '../semconv.js';
import { entryClosed, type SpanEntry, unlinkEntry } from './span-entry.js';

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

// Most traces never need these; they are allocated on first write.
const NO_SPANS: ReadonlySet<string> = new Set();
const NO_LATE_RUNS: ReadonlyMap<string, LateRun> = new Map();
const NO_ORDINARY: ReadonlyMap<string, ReadableSpan> = new Map();
const NO_FOLLOWED: ReadonlyMap<ReadableSpan, SpanEntry> = new Map();
const NO_REFUSED: ReadonlyMap<string, number> = new Map();
/** Open refused spans remembered per trace; past it, one's nesting is read from the held spans only. */
const MAX_REFUSED = 10_000;
export const REFUSED_NESTED = 1;
export const REFUSED_AGENT = 2;

/**
 * One agent trace the processor follows: its held spans, its counts, and what it waits on. It
 * is the only writer of its fields; owners, the evaluator and `TraceBuffer` (which keeps the
 * totals over all traces in step) change a trace through its methods and read it through
 * getters. Every field is set in the constructor, so all traces share one shape; the
 * collections most traces never need stay shared empty ones until their first write.
 */
export class TraceState {
  private readonly _spans = new Map<string, SpanEntry>();
  private _held = 0;
  private _bytes = 0;
  private _openCount = 0;
  private _activeEpoch: number;
  private _hasCalls = false;
  private _grafted = false;
  private _incomplete = false;
  private _evaluated = NO_SPANS as Set<string>;
  private _counted = NO_SPANS as Set<string>;
  private _awaiting = NO_SPANS as Set<string>;
  private _late = NO_LATE_RUNS as Map<string, LateRun>;
  private _finishing = 0;
  private _refused = NO_REFUSED as Map<string, number>;
  private _ordinary = NO_ORDINARY as Map<string, ReadableSpan>;
  private _agents = 0;
  private _looseCalls = 0;
  private _lastAgent: SpanEntry | undefined = undefined;
  private _followed = NO_FOLLOWED as Map<ReadableSpan, SpanEntry>;

  constructor(
    readonly traceId: string,
    readonly mode: TraceMode,
    /** The trace was first recognised when one of its spans ended (no agent-related span was known at start). */
    readonly seenLate: boolean,
    epoch: number,
    /**
     * When the trace began to be followed (`performance.now()`): a span that started later and is
     * not held was refused at its start (and counted then), rather than never seen.
     */
    readonly since: number,
  ) {
    this._activeEpoch = epoch;
  }

  /** Held spans by id (JUDGED), or the open agent spans (SAMPLED_OUT and UNMATCHED, see `followed`). */
  get spans(): ReadonlyMap<string, SpanEntry> {
    return this._spans;
  }
  /** Entries counted against the span limits. */
  get held(): number {
    return this._held;
  }
  /** About how many bytes of ended spans the trace holds (`retainedBytes`), counted against `maxBufferedBytes`. */
  get bytes(): number {
    return this._bytes;
  }
  /** Held spans still open: the trace is released when none is left (and nothing waits). */
  get openCount(): number {
    return this._openCount;
  }
  /** The sweep epoch of the last span activity. */
  get activeEpoch(): number {
    return this._activeEpoch;
  }
  /** Tool or model spans are held: some chain or root span may be an implicit run (of their calls). */
  get hasCalls(): boolean {
    return this._hasCalls;
  }
  /**
   * A span was held under a parent that had already ended (agno keeps a member's context
   * current after it returns): a run judged before may lose spans to the run around it, so
   * nested runs are rebuilt from the whole trace from then on.
   */
  get grafted(): boolean {
    return this._grafted;
  }
  /**
   * Some of the trace's spans were refused (span limits), or it was evicted: its runs would be
   * judged on partial data, so they get `skipped: incomplete_trace` records instead of verdicts.
   */
  get incomplete(): boolean {
    return this._incomplete;
  }
  /** Runs that have had their turn (judged, recorded, or waiting for late spans). */
  get evaluated(): ReadonlySet<string> {
    return this._evaluated;
  }
  /**
   * Untracked local parents of tracked tool/LLM spans: maybe agent spans whose attributes
   * come later. The trace is kept until they end.
   */
  get awaiting(): ReadonlySet<string> {
    return this._awaiting;
  }
  /** Runs waiting for their late spans, by agent span id. */
  get late(): ReadonlyMap<string, LateRun> {
    return this._late;
  }
  /** Runs whose wait for late spans is over, judged on the next microtask. */
  get finishing(): number {
    return this._finishing;
  }
  /**
   * Agent-related spans refused at their start (span limits) and still open, by id:
   * `REFUSED_NESTED` when an agent is above one, `REFUSED_AGENT` when it is an agent (at
   * most `MAX_REFUSED` of them), so that nesting is known below and at their ends.
   */
  get refused(): ReadonlyMap<string, number> {
    return this._refused;
  }
  /** JUDGED traces: open ordinary spans, not held as entries until an agent-related span starts below one. */
  get ordinary(): ReadonlyMap<string, ReadableSpan> {
    return this._ordinary;
  }
  /** JUDGED traces: agent spans held. */
  get agents(): number {
    return this._agents;
  }
  /** JUDGED traces: tool and model spans held with no agent above them (their calls make implicit runs). */
  get looseCalls(): number {
    return this._looseCalls;
  }
  /** SAMPLED_OUT traces: the open agent span that started last. */
  get lastAgent(): SpanEntry | undefined {
    return this._lastAgent;
  }
  /**
   * SAMPLED_OUT and UNMATCHED traces: every open span followed, by object, and its scope (its
   * own entry for agent spans, the agent's `toolScope` for tool spans, else the agent entry
   * above it or `NO_SCOPE`). A span object never used as a key has no identity hash, so asking
   * for one that was not followed (most spans of the trace: ordinary ones) costs no string
   * hashing and no probe, and following one hashes no id.
   */
  get followed(): ReadonlyMap<ReadableSpan, SpanEntry> {
    return this._followed;
  }

  /** Spans were refused (span limits) or the trace was evicted: its runs get records, not verdicts. */
  markIncomplete(): void {
    this._incomplete = true;
  }

  /** Span activity in sweep `epoch`. */
  touch(epoch: number): void {
    this._activeEpoch = epoch;
  }

  /** Holds an admitted entry (open, unless the caller closes it at once). */
  hold(entry: SpanEntry, epoch: number): void {
    this._openCount++;
    this._countRole(entry);
    this._spans.set(entry.spanId, entry);
    if (entry.parent !== undefined && !entry.parent.open) this._grafted = true;
    this._held++;
    this._activeEpoch = epoch;
  }

  /** An open ordinary span becomes an entry: already counted against the limits when it started. */
  adopt(entry: SpanEntry): void {
    this._openCount++;
    this._spans.set(entry.spanId, entry);
    if (entry.parent !== undefined && !entry.parent.open) this._grafted = true;
    this._countRole(entry);
  }

  /** A held ordinary entry's span ended agent-related (attributes set after its start): counted as such. */
  setRole(entry: SpanEntry, role: SpanRole): void {
    entry.role = role;
    this._countRole(entry);
  }

  /** A held entry's span ended (or had ended already): one open span less. */
  close(entry: SpanEntry): void {
    if (!entry.open) return;
    this._openCount--;
    entryClosed(entry);
  }

  /** Lets go of one entry; false when it was not held. */
  forget(spanId: string): boolean {
    const entry = this._spans.get(spanId);
    if (entry === undefined) return false;
    this._spans.delete(spanId);
    unlinkEntry(entry);
    this._held--;
    return true;
  }

  /** Counts `bytes` more of ended spans held. */
  addBytes(bytes: number): void {
    this._bytes += bytes;
  }

  /** The trace is released: nothing it held counts any more. */
  released(): void {
    this._held = 0;
    this._bytes = 0;
  }

  /** JUDGED traces: an open ordinary span, counted against the limits but not held as an entry. */
  holdOrdinary(spanId: string, span: ReadableSpan, epoch: number): void {
    if (this._ordinary === NO_ORDINARY) this._ordinary = new Map();
    this._ordinary.set(spanId, span);
    this._held++;
    this._activeEpoch = epoch;
  }

  /** An open ordinary span ended without being held as an entry; false when it was not one. */
  forgetOrdinary(spanId: string): boolean {
    if (!this._ordinary.delete(spanId)) return false;
    this._held--;
    return true;
  }

  /** An open ordinary span leaves `ordinary` to be held as an entry (`adopt`); still counted. */
  takeOrdinary(spanId: string): ReadableSpan | undefined {
    const span = this._ordinary.get(spanId);
    if (span !== undefined) this._ordinary.delete(spanId);
    return span;
  }

  /** SAMPLED_OUT traces: an agent span (held by id) is known by its object too, and is the last agent started. */
  followAgent(span: ReadableSpan, entry: SpanEntry): void {
    if (this._followed === NO_FOLLOWED) this._followed = new Map();
    this._followed.set(span, entry);
    this._lastAgent = entry;
  }

  /**
   * SAMPLED_OUT traces: a followed agent span ended; if it was the last agent started, the
   * agent above it that is still open takes its place.
   */
  followedAgentEnded(entry: SpanEntry): void {
    if (this._lastAgent !== entry) return;
    let above = entry.agent;
    while (above !== undefined && !above.open) above = above.agent;
    this._lastAgent = above;
  }

  /** SAMPLED_OUT traces: an open span that is not an agent maps to the agent span above it, by its object only. */
  holdScope(span: ReadableSpan, scope: SpanEntry, epoch: number): void {
    if (this._followed === NO_FOLLOWED) this._followed = new Map();
    this._followed.set(span, scope);
    this._openCount++;
    this._held++;
    this._activeEpoch = epoch;
  }

  /** SAMPLED_OUT traces: what `span` mapped to when it started, if it was followed; it is not any more. */
  unfollow(span: ReadableSpan): SpanEntry | undefined {
    const followed = this._followed;
    if (followed.size === 0) return undefined;
    const entry = followed.get(span);
    if (entry !== undefined) followed.delete(span);
    return entry;
  }

  /** SAMPLED_OUT traces: a span held by `holdScope` ended. */
  releaseScope(): void {
    this._openCount--;
    this._held--;
  }

  /** Remembers a span refused at its start while it is open (see `refused`). */
  refuse(spanId: string, flags: number): void {
    if (this._refused === NO_REFUSED) this._refused = new Map();
    if (this._refused.size < MAX_REFUSED) this._refused.set(spanId, flags);
  }

  /** A span refused at its start ends: what was remembered of it (undefined: nothing), forgotten now. */
  refusedEnded(spanId: string): number | undefined {
    if (this._refused.size === 0) return undefined;
    const flags = this._refused.get(spanId);
    if (flags !== undefined) this._refused.delete(spanId);
    return flags;
  }

  awaitParent(parentId: string): void {
    if (this._awaiting === NO_SPANS) this._awaiting = new Set();
    this._awaiting.add(parentId);
  }

  /** A span the trace waited for (see `awaitParent`) ended, and is held. */
  parentEnded(spanId: string): void {
    if (this._awaiting.size > 0) this._awaiting.delete(spanId);
  }

  /** The run of `spanId` has had its turn (judged, recorded, or waiting for late spans). */
  markEvaluated(spanId: string): void {
    if (this._evaluated === NO_SPANS) this._evaluated = new Set();
    this._evaluated.add(spanId);
  }

  /** Whether the execution span `spanId` was already counted in `toolwatch.tool.executions`; it is now. */
  countOnce(spanId: string): boolean {
    if (this._counted.has(spanId)) return true;
    if (this._counted === NO_SPANS) this._counted = new Set();
    this._counted.add(spanId);
    return false;
  }

  /** The run of `spanId` waits for its late spans. */
  addLate(spanId: string, late: LateRun): void {
    if (this._late === NO_LATE_RUNS) this._late = new Map();
    this._late.set(spanId, late);
  }

  /** A late run's wait is over: judged on the next microtask (`lateFinished` then). */
  lateQueued(): void {
    this._finishing++;
  }

  /** A queued late run's microtask has come. */
  lateFinished(): void {
    this._finishing--;
  }

  /** The late run of `spanId` is judged or given its record now: it no longer holds the trace. */
  removeLate(spanId: string): void {
    this._late.delete(spanId);
  }

  /**
   * A top-level run of a trace that goes on has been judged: its ended entries go (see
   * `TraceBuffer.releaseRun`), unless an OpenInference span is held (a run started later may
   * name one of them as its source). The caller reads `held` and `bytes` before and after.
   */
  releaseRun(agent: SpanEntry): void {
    // Whether each entry is in the run, found once per entry (parents are mostly held
    // before their children, but not always: entries held late come after).
    const inRun = new Map<SpanEntry, boolean>([[agent, true]]);
    const path: SpanEntry[] = [];
    for (const entry of this._spans.values()) {
      const attributes = (entry.like ?? entry.span)?.attributes;
      if (attributes !== undefined && attributes[ATTR_OPENINFERENCE_SPAN_KIND] !== undefined) return;
      let at: SpanEntry | undefined = entry;
      let known = at === undefined ? false : inRun.get(at);
      while (at !== undefined && known === undefined) {
        path.push(at);
        at = at.parent ?? (at.parentId === undefined ? undefined : this._spans.get(at.parentId));
        known = at === undefined ? false : inRun.get(at);
      }
      for (const step of path) inRun.set(step, known === true);
      path.length = 0;
    }
    for (const [entry, doomed] of inRun) {
      if (!doomed || entry.open || !this._spans.delete(entry.spanId)) continue;
      unlinkEntry(entry);
      this._held--;
      this._bytes -= entry.bytes;
      if (entry.role === SpanRole.AGENT) this._agents--;
      if (this._evaluated.size > 0) this._evaluated.delete(entry.spanId);
      if (this._counted.size > 0) this._counted.delete(entry.spanId);
    }
  }

  /** What a held entry's role adds to the counts: agents, calls, and calls with no agent above. */
  private _countRole(entry: SpanEntry): void {
    const role = entry.role;
    if (role === SpanRole.AGENT) this._agents++;
    else if (role === SpanRole.TOOL || role === SpanRole.LLM) {
      this._hasCalls = true;
      if (entry.agent === undefined) this._looseCalls++;
    }
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
