import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span } from '@opentelemetry/sdk-trace-base';
import { isSilentModelSpan } from '../conventions/silent-model-span.js';
import { lateSpanRole, SpanRole, spanRole } from '../conventions/span-role.js';
import { ATTR_OPENINFERENCE_SPAN_KIND } from '../semconv.js';
import type { SpanLike } from '../types.js';
import type { LiveChecks } from './live-checks.js';
import { retainedBytes } from './retained-bytes.js';
import { spanLikeOf } from './run-builder.js';
import { highResolutionStart, parentIdOf, parentSpanOf, startedSince } from './sdk-span.js';
import { judge, NOTHING, recordSkipped, SETTLE, type SpanEnd, waitLate } from './span-end.js';
import { linkEntry, newEntry, type SpanEntry } from './span-entry.js';
import type { TraceBuffer } from './trace-buffer.js';
import {
  hasAgentAbove,
  parentHasAgent,
  REFUSED_AGENT,
  REFUSED_NESTED,
  type TraceState,
} from './trace-state.js';

export interface HeldTracesOptions {
  buffer: TraceBuffer;
  live: LiveChecks;
}

/**
 * Traces held whole (`JUDGED`): every agent-related span as an entry linked to its parent and
 * agent, and the ordinary spans that link them, each converted once as it ends, until the
 * run is judged at its agent span's end.
 */
export class HeldTraces {
  private readonly _buffer: TraceBuffer;
  private readonly _live: LiveChecks;

  constructor(options: HeldTracesOptions) {
    this._buffer = options.buffer;
    this._live = options.live;
  }

  /** A span of a held trace starts. */
  started(
    state: TraceState,
    span: Span,
    spanId: string,
    role: SpanRole,
    parentId: string | undefined,
    parentContext: Context,
  ): void {
    if (role === SpanRole.NONE) {
      this._startedOrdinary(state, span, spanId, parentId, parentContext);
      return;
    }
    if (!this._buffer.admit(state)) {
      this._refused(state, spanId, role, parentId, parentContext);
      return;
    }
    let parent = parentId === undefined ? undefined : state.spans.get(parentId);
    if (parent === undefined && parentId !== undefined) {
      if (state.ordinary.has(parentId)) parent = this._materialize(state, parentId);
      else parent = this._materializeUnheld(state, parentId, parentContext);
    }
    const entry = newEntry(span, spanId, parentId, role);
    entry.t0 = highResolutionStart(span);
    // A start time given by the caller (spans replayed by an exporter bridge) is the truth, and
    // the order in which such spans start says nothing.
    if (entry.t0 === undefined) entry.outOfOrder = true;
    if (parent !== undefined) linkEntry(entry, parent);
    this._buffer.hold(state, entry);
    // Their open parent, not held, may be where an implicit run begins (or links them to an
    // agent, if attributes come later): the trace waits for it, and holds it as it ends.
    if (
      (role === SpanRole.TOOL || role === SpanRole.LLM || role === SpanRole.CHAIN) &&
      parentId !== undefined &&
      parent === undefined &&
      span.parentSpanContext?.isRemote !== true
    ) {
      state.awaitParent(parentId);
    }
    // Ordinary spans between agent-related ones are kept so reconstruction can link through them.
    let ancestor = parent;
    while (ancestor !== undefined && ancestor.role === SpanRole.NONE && !ancestor.needed) {
      ancestor.needed = true;
      ancestor = ancestor.parent;
    }
    if (role === SpanRole.TOOL && this._live.enabled)
      this._live.toolStarted(state.traceId, entry.agent, span, spanId);
  }

  /**
   * A span of a held trace ends: it is converted and kept, or let go, and the trace's counts
   * follow. Returns what should happen next (its run judged, waiting for late spans, or
   * recorded), for the processor to do.
   */
  ending(state: TraceState, span: ReadableSpan, spanId: string): SpanEnd {
    const buffer = this._buffer;
    let entry = state.spans.get(spanId);
    if (entry === undefined && state.ordinary.size > 0 && state.ordinary.has(spanId)) {
      if (lateSpanRole(span.name, span.attributes) === SpanRole.NONE) {
        // An ordinary span nothing agent-related started under: it goes as it came.
        buffer.forgetOrdinary(state, spanId);
        buffer.touch(state);
        buffer.releaseIfIdle(state);
        return NOTHING;
      }
      // Attributes set after start made it agent-related.
      entry = this._materialize(state, spanId);
    }
    if (entry === undefined) {
      let role: SpanRole;
      if (startedSince(span, state.since) && !state.incomplete) {
        // Started while the trace was followed, in a trace that refused nothing, and not held:
        // an ordinary span under a held entry (see `_startedOrdinary`). It goes as it came,
        // unless attributes set after its start made it agent-related, or an agent-related
        // span below it could not find it when it started (its context carried only the
        // span context, not the span): then it is held now, to link that span to its run.
        role = lateSpanRole(span.name, span.attributes);
        if (role === SpanRole.NONE && (state.awaiting.size === 0 || !state.awaiting.has(spanId))) {
          buffer.touch(state);
          return NOTHING;
        }
      } else {
        role = state.seenLate
          ? lateSpanRole(span.name, span.attributes)
          : spanRole(span.name, span.attributes);
        // Refused when it started (counted then): never held.
        if (startedSince(span, state.since)) {
          const nested = this._refusedNested(state, span, spanId);
          return role === SpanRole.AGENT ? this._incomplete(state, spanId, nested) : NOTHING;
        }
      }
      if (!buffer.admit(state)) {
        if (role !== SpanRole.AGENT) return NOTHING;
        return this._incomplete(state, spanId, parentHasAgent(state, parentIdOf(span)));
      }
      entry = this._holdLate(state, span, spanId, role);
    } else if (entry.role === SpanRole.NONE) {
      // Attributes set after start can still make a span an agent or a tool.
      state.setRole(entry, lateSpanRole(span.name, span.attributes));
    }
    entry.span = span;
    state.parentEnded(spanId);
    let leaf = entry.role === SpanRole.NONE && !entry.needed;
    if (!leaf && entry.role !== SpanRole.AGENT) {
      // Converted now and the span let go: held until the run ends, the SDK's span (and all
      // its parts) would outlive the young generation while runs interleave, and be promoted.
      // Its facts are read when the run is rebuilt (objects made then die young).
      const like = spanLikeOf(entry, span, true);
      if (entry.role === SpanRole.LLM && silentModelCall(state, entry, span, like)) {
        // Nothing of it reaches the run: it goes now, like an ordinary leaf.
        leaf = true;
      } else {
        if (entry.role === SpanRole.LLM && entry.agent !== undefined) entry.agent.modelKept = true;
        entry.like = like;
        entry.span = undefined;
        entry.bytes = retainedBytes(span);
        if (!buffer.holdBytes(state, entry.bytes)) return this._tooLarge(state, entry, span, spanId);
      }
    }
    state.close(entry);
    buffer.touch(state);
    if (entry.role === SpanRole.TOOL && this._live.enabled)
      this._live.toolEnded(state.traceId, entry.agent, span, spanId);
    // A leaf goes now: a rebuild would not read it (ordinary, not needed) or it says nothing (a
    // silent model call, never where runs are judged).
    if (leaf) buffer.forget(state, spanId);
    if (state.evaluated.has(spanId) || !this._judgesAt(state, entry, span)) return SETTLE;
    if (state.incomplete) {
      // Not rebuilt: a chain or root span is taken for an implicit run only when calls ran outside every agent.
      if (entry.role === SpanRole.AGENT || state.looseCalls > 0)
        return this._incomplete(state, spanId, hasAgentAbove(state, entry));
      state.markEvaluated(spanId);
      return SETTLE;
    }
    return entry.activeChildren > 0 ? waitLate(entry) : judge(entry);
  }

  /** The run of an agent span in a trace that lost spans to the limits: a record, not a verdict that could be false. */
  private _incomplete(state: TraceState, spanId: string, nested: boolean): SpanEnd {
    state.markEvaluated(spanId);
    return recordSkipped('incomplete_trace', nested);
  }

  /** Whether a refused span has an agent above it (remembered at its start, and forgotten now it ends), else what the held spans say. */
  private _refusedNested(state: TraceState, span: ReadableSpan, spanId: string): boolean {
    const flags = state.refusedEnded(spanId);
    if (flags === undefined) return parentHasAgent(state, parentIdOf(span));
    return (flags & REFUSED_NESTED) !== 0;
  }

  /**
   * An agent-related span refused at its start (span limits): whether an agent is above it is
   * remembered while it is open, when its parent can still be found, so that its own
   * `incomplete_trace` record (an agent's) goes to the rules of the run it is, and spans
   * refused below it know theirs.
   */
  private _refused(
    state: TraceState,
    spanId: string,
    role: SpanRole,
    parentId: string | undefined,
    parentContext: Context,
  ): void {
    const nested = parentId !== undefined && agentAbove(state, parentId, parentContext);
    state.refuse(spanId, (nested ? REFUSED_NESTED : 0) | (role === SpanRole.AGENT ? REFUSED_AGENT : 0));
  }

  /**
   * The trace alone holds more than `maxBufferedBytes`: it is evicted whole (counted, with a
   * tombstone: its later spans are counted, its run gets `skipped: incomplete_trace`). Live
   * checks do not need the trace: a tool span ending now is still checked.
   */
  private _tooLarge(state: TraceState, entry: SpanEntry, span: ReadableSpan, spanId: string): SpanEnd {
    // A chain or root span that would be judged now (an implicit run's) gets its record.
    const judged = state.looseCalls > 0 && !state.evaluated.has(spanId) && this._judgesAt(state, entry, span);
    this._buffer.evict(
      state,
      'max_buffered_bytes',
      `agent trace ${state.traceId} alone holds more than maxBufferedBytes of ended spans`,
    );
    if (entry.role === SpanRole.TOOL && this._live.enabled)
      this._live.toolEnded(state.traceId, entry.agent, span, spanId);
    return judged ? this._incomplete(state, spanId, hasAgentAbove(state, entry)) : NOTHING;
  }

  /**
   * An ordinary span of a judged trace. Under a held entry (most: HTTP and DB calls of model
   * and tool spans) it is not held at all: an agent-related span starting below it finds it
   * through its start context (`_materializeUnheld`), and one that turns agent-related as it
   * ends is held then. Under anything else (an ordinary span, or a parent never seen) it is
   * held by id until it ends, so that a chain of ordinary spans can still link an agent-related
   * span to the run above; a parent that was not held because it sits under an entry is held
   * with it.
   */
  private _startedOrdinary(
    state: TraceState,
    span: Span,
    spanId: string,
    parentId: string | undefined,
    parentContext: Context,
  ): void {
    if (parentId !== undefined && state.spans.has(parentId)) {
      this._buffer.touch(state);
      return;
    }
    if (parentId !== undefined && (state.ordinary.size === 0 || !state.ordinary.has(parentId)))
      this._holdUnheldParent(state, parentId, parentContext);
    if (!this._buffer.admit(state)) {
      this._refused(state, spanId, SpanRole.NONE, parentId, parentContext);
      return;
    }
    this._buffer.holdOrdinary(state, spanId, span);
  }

  /**
   * The span `parentId`, from the start context of a span below it, when it is an ordinary
   * span that was not held because its own parent is a held entry; else undefined (a parent
   * outside this process, or one started before the trace was followed). One that ended
   * already only when `ended` allows it (work started after its parent returned).
   */
  private _unheldParent(
    state: TraceState,
    parentId: string,
    parentContext: Context,
    ended = false,
  ): Span | undefined {
    const candidate = parentSpanOf(parentContext, parentId) as Span | undefined;
    if (candidate === undefined || typeof (candidate as { ended?: unknown }).ended !== 'boolean')
      return undefined;
    if (candidate.ended && !ended) return undefined;
    const above = parentIdOf(candidate);
    return above !== undefined && state.spans.has(above) ? candidate : undefined;
  }

  /** Holds, by id, the unheld ordinary parent of an ordinary span (see `_startedOrdinary`). */
  private _holdUnheldParent(state: TraceState, parentId: string, parentContext: Context): void {
    const parent = this._unheldParent(state, parentId, parentContext);
    if (parent === undefined || !this._buffer.admit(state)) return;
    this._buffer.holdOrdinary(state, parentId, parent);
  }

  /**
   * The entry of the unheld ordinary parent of an agent-related span that starts now (see
   * `_startedOrdinary`), held from its span object, open or already ended (a tool started by
   * work its HTTP handler left running); undefined when there is none or the limits refuse
   * it (the trace is then incomplete).
   */
  private _materializeUnheld(
    state: TraceState,
    parentId: string,
    parentContext: Context,
  ): SpanEntry | undefined {
    const span = this._unheldParent(state, parentId, parentContext, true);
    if (span === undefined || !this._buffer.admit(state)) return undefined;
    const entry = newEntry(span, parentId, parentIdOf(span), SpanRole.NONE);
    entry.needed = true;
    // Held after spans that started later: its place in the map says nothing of its start.
    entry.outOfOrder = true;
    entry.t0 = highResolutionStart(span, false);
    linkEntry(entry, state.spans.get(entry.parentId!)!);
    this._buffer.hold(state, entry);
    if (span.ended) {
      // Its end has passed: converted now, closed (the span below keeps its parent active).
      entry.like = spanLikeOf(entry, span, true);
      entry.span = undefined;
      state.close(entry);
      // Over the byte bound, the next span to end evicts the trace (not while a child starts under it).
      entry.bytes = retainedBytes(span);
      this._buffer.holdBytes(state, entry.bytes);
    }
    return entry;
  }

  /**
   * Holds the ordinary span `spanId` (and the ordinary spans above it not held yet) now that an
   * agent-related span starts below it: reconstruction links through it. Top-down, iteratively.
   */
  private _materialize(state: TraceState, spanId: string): SpanEntry {
    const chain: string[] = [spanId];
    let above = parentIdOf(state.ordinary.get(spanId)!);
    while (above !== undefined && !state.spans.has(above) && state.ordinary.has(above)) {
      chain.push(above);
      above = parentIdOf(state.ordinary.get(above)!);
    }
    let parent = above === undefined ? undefined : state.spans.get(above);
    for (let i = chain.length - 1; i >= 0; i--) {
      const id = chain[i]!;
      const span = state.takeOrdinary(id)!;
      const entry = newEntry(span, id, parentIdOf(span), SpanRole.NONE);
      entry.needed = true;
      // Held after spans that started later: its place in the map says nothing of its start.
      entry.outOfOrder = true;
      entry.t0 = highResolutionStart(span, false);
      if (parent !== undefined) linkEntry(entry, parent);
      state.adopt(entry);
      parent = entry;
    }
    return parent!;
  }

  /** Holds a span first seen as it ends: out of start order in the map. */
  private _holdLate(state: TraceState, span: ReadableSpan, spanId: string, role: SpanRole): SpanEntry {
    const parentId = parentIdOf(span);
    const entry = newEntry(span, spanId, parentId, role);
    entry.outOfOrder = true;
    // Its held children were waiting for it: it links them to what is above.
    entry.needed = state.awaiting.has(spanId);
    entry.t0 = highResolutionStart(span, false);
    const parent = parentId === undefined ? undefined : state.spans.get(parentId);
    if (parent !== undefined) {
      // Open until `entryClosed` as the span's end is handled, right after.
      linkEntry(entry, parent);
    } else if (parentId !== undefined && span.parentSpanContext?.isRemote !== true) {
      // Its parent is still open: keep the trace until the parent ends and is held too.
      state.awaitParent(parentId);
    }
    this._buffer.hold(state, entry);
    // Spans below it that could not find it when they started: linked now, to its agent, or
    // (none above) to the implicit run it may anchor, which then waits for those still open.
    if (entry.needed) this._adoptWaitingChildren(state, entry);
    return entry;
  }

  /**
   * Held spans that could not find `entry` when they started (their context held only its span
   * context) reach their agent through it now: their live checks run now, late but not lost.
   * A rare path, so a scan of the trace's held spans.
   */
  private _adoptWaitingChildren(state: TraceState, entry: SpanEntry): void {
    for (const child of state.spans.values()) {
      if (child.parentId !== entry.spanId || child.parent !== undefined || child === entry) continue;
      // An open child keeps its new parent, and so its agent, active until it ends.
      linkEntry(child, entry);
      if (child.role !== SpanRole.TOOL || child.agent === undefined || !this._live.enabled) continue;
      // Name and attributes are all the live checks read: the converted view serves once the span is let go.
      const view = (child.span ?? child.like) as ReadableSpan | undefined;
      if (view === undefined) continue;
      this._live.toolStarted(state.traceId, child.agent, view, child.spanId);
      if (!child.open) this._live.toolEnded(state.traceId, child.agent, view, child.spanId);
    }
  }

  /** Whether the ending of this span is when runs get judged. */
  private _judgesAt(state: TraceState, entry: SpanEntry, span: ReadableSpan): boolean {
    // Spans first seen as they ended: nesting is only known once the outermost span ends, and
    // every run of the trace is judged then.
    if (state.seenLate) return entry.parentId === undefined || span.parentSpanContext?.isRemote === true;
    if (entry.role === SpanRole.AGENT) return true;
    // The outermost span holding tool calls (executed, or only requested by a model) with no
    // agent above them is an implicit run: a chain span whose parent is not held and will not be.
    if (entry.role === SpanRole.CHAIN) {
      const parentId = entry.parentId;
      return (
        state.hasCalls &&
        (parentId === undefined || (!state.spans.has(parentId) && !state.awaiting.has(parentId)))
      );
    }
    // So is the trace's local root when tools ran with no agent above them (held as it ended,
    // with the spans between, to link them): an HTTP handler that calls tools itself, or a
    // model span (a chat call, a Mastra step) whose tool calls ran below it.
    return (
      (entry.role === SpanRole.NONE || entry.role === SpanRole.LLM) &&
      state.looseCalls > 0 &&
      (entry.parentId === undefined || span.parentSpanContext?.isRemote === true)
    );
  }
}

/**
 * Whether an agent is above a span whose parent is `parentId`: through held entries, open
 * ordinary spans held by id, and open refused spans; the first step also through the span
 * object of the start context (a parent held nowhere).
 */
function agentAbove(state: TraceState, parentId: string, parentContext: Context): boolean {
  let id: string | undefined = parentId;
  for (let step = 0; id !== undefined && step < 100_000; step++) {
    const entry = state.spans.get(id);
    if (entry !== undefined) {
      if (entry.role === SpanRole.AGENT || entry.agent !== undefined) return true;
      return entry.parent === undefined && parentHasAgent(state, entry.parentId);
    }
    const flags = state.refused.get(id);
    if (flags !== undefined) return flags !== 0;
    const ordinary = state.ordinary.size > 0 ? state.ordinary.get(id) : undefined;
    if (ordinary !== undefined) {
      id = parentIdOf(ordinary);
      continue;
    }
    if (step > 0) return false;
    const candidate = parentSpanOf(parentContext, parentId);
    id = candidate === undefined ? undefined : parentIdOf(candidate);
  }
  return false;
}

/**
 * Whether a model span that ends now adds nothing to its run, so it need not be held until the
 * run is judged (most model spans, recorded without content, say nothing: holding them cost a
 * third of a judged run's entries). Reconstruction would read no calls, definitions or
 * decisions from it (`isSilentModelSpan`), and its place among the run's model calls changes
 * nothing either: it is a direct child of an open agent span whose run has kept no model span
 * so far (the run's last model call decides whether requests that never ran are pending, so a
 * silent span after a kept one stays), and no other child of that agent is open (a kept one
 * could end later yet have started earlier). Not an OpenInference agent (a resumed agno run
 * reads its pending calls from its first model call; a bridge's wrapper is no run), status
 * not ERROR (an ERROR span marks its run), no children held, its trace's spans seen as they
 * started. A span that became a model call only as it ended, running beside this one,
 * is not counted among the open children: that pair is not covered.
 */
function silentModelCall(state: TraceState, entry: SpanEntry, span: ReadableSpan, like: SpanLike): boolean {
  const agent = entry.agent;
  if (
    agent === undefined ||
    entry.parent !== agent ||
    agent.modelKept ||
    agent.activeChildren !== 1 ||
    entry.hasHeldChild ||
    entry.outOfOrder ||
    state.seenLate ||
    span.status.code === 2
  )
    return false;
  const agentSpan = agent.span;
  if (agentSpan === undefined || agentSpan.attributes[ATTR_OPENINFERENCE_SPAN_KIND] !== undefined)
    return false;
  return isSilentModelSpan(like);
}
