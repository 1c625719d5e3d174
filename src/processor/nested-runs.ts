import { readTrue } from '../conventions/read-values.js';
import { SpanRole } from '../conventions/span-role.js';
import { reconstructTrace } from '../reconstruction/reconstruct-trace.js';
import type { SpanReading } from '../reconstruction/trace-model.js';
import { ATTR_OPENINFERENCE_SPAN_KIND, ATTR_TOOLWATCH_FROM_HISTORY } from '../semconv.js';
import type { AgentRun, Problem, ReconstructedTrace, SpanLike } from '../types.js';
import { breakTie, heldView, rebuildNeeds, spanIdentity } from './run-builder.js';
import type { SpanEntry } from './span-entry.js';
import type { TraceState } from './trace-state.js';

/**
 * Nested runs judged as their agent spans end (rules with `rootOnly: false`), each rebuilt
 * from its own subtree: its spans, with the runs below it that were rebuilt at their own ends
 * taken as they are. A chain of n nested runs costs n rebuilds of a few spans each, rather
 * than n rebuilds of the whole trace (quadratic, inside `span.end()`).
 *
 * The subtree is read exactly as the whole trace would read it, or not at all (`rebuild`
 * returns undefined and the caller rebuilds the whole trace, as for an outermost run) when
 * something outside it could change the run: a span above flagged `toolwatch.from_history`
 * (the run is history then), OpenInference spans (a run may name its source anywhere in the
 * trace: `graph.node.parent_id`), spans linked or held out of start order, a span started
 * after the run's own span ended (it belongs to the run around it), a span started under one
 * that had ended (it may leave a run already rebuilt), a call in a model input that matches
 * nothing in the subtree (the rest of the trace decides whether it is history), and traces
 * first seen as their spans ended.
 *
 * Kept per nested run, while its trace is held: the rebuilt run (its calls, in the form the
 * verdict was computed from) and, per span, whether the spans above it are plain; both are
 * weakly keyed by the held entries, so they go with the trace (the span limits bound them).
 */
export class NestedRuns {
  /** The run rebuilt for a nested agent entry judged from its subtree. */
  private readonly _built = new WeakMap<SpanEntry, AgentRun>();
  /** Whether nothing at or above the entry changes how a run below it reads (see `_plainFrom`). */
  private readonly _plain = new WeakMap<SpanEntry, boolean>();
  /** Runs whose tool executions, and their nested runs', have been counted in the metrics. */
  private readonly _counted = new WeakSet<AgentRun>();

  /** The run of the nested agent entry `entry`, rebuilt from its subtree; undefined: rebuild the whole trace. */
  rebuild(
    state: TraceState,
    entry: SpanEntry,
    argumentsRead: ReadonlySet<string> | undefined,
  ): ReconstructedTrace | undefined {
    const enclosing = entry.agent;
    if (state.seenLate || state.grafted || enclosing === undefined || enclosing.span === undefined) return;
    // Rebuilt already, with the run around it judged first (its span ended while this run
    // waited to be judged): its subtree has not changed since.
    const ready = this._built.get(entry);
    if (ready !== undefined) return { traceId: state.traceId, runs: [ready], problems: [] };
    if (!this._plainFrom(state, entry.parent)) return;
    const region = this._region(entry);
    if (region === undefined) return;
    const { entries, prebuilt, final, whole } = region;
    const deferToolValues = argumentsRead !== undefined;
    const spans: SpanLike[] = new Array(entries.length);
    for (let k = 0; k < entries.length; k++) spans[k] = heldView(entries[k]!, deferToolValues);
    // In start order, as the trace's map holds them (the subtree was walked depth first).
    const order = entries.map((_, k) => k);
    order.sort((a, b) => spans[a]!.startTime - spans[b]!.startTime || a - b);
    const sorted: SpanLike[] = new Array(order.length);
    const readings: Array<SpanReading | undefined> = new Array(order.length);
    let previous = Number.NEGATIVE_INFINITY;
    for (let k = 0; k < order.length; k++) {
      const held = entries[order[k]!]!;
      const like = spans[order[k]!]!;
      previous = breakTie(like, previous);
      sorted[k] = like;
      readings[k] = held.open ? undefined : held.reading;
    }
    if (startsAfterRun(spans[0]!, sorted)) return;
    const rebuilt = reconstructTrace(sorted, readings, argumentsRead, prebuilt);
    const run = rebuilt.runs.length === 1 ? rebuilt.runs[0]! : undefined;
    if (run === undefined || run.spanId !== entry.spanId || historyFromInputs(run, prebuilt)) return;
    run.parent = enclosingRun(state.traceId, enclosing, run);
    // Kept for the run around it only when no run below will be rebuilt afresh (one still open
    // would be held twice: here and as its own); the runs below rebuilt now, whose subtrees
    // are final, are kept for their own turn.
    if (whole) this._built.set(entry, run);
    if (final !== undefined) keepFinal(run, prebuilt, final, this._built);
    return {
      traceId: rebuilt.traceId,
      runs: rebuilt.runs,
      problems: withoutOwnOrphan(rebuilt.problems, entry),
    };
  }

  /** Whether the executions of `run` and of every run below it are counted already. */
  counted(run: AgentRun): boolean {
    return this._counted.has(run);
  }

  /** The executions of `run` and of every run below it have been counted. */
  markCounted(run: AgentRun): void {
    this._counted.add(run);
  }

  /**
   * The held entries of the subtree of `root` that reconstruction reads, with the runs
   * already rebuilt below it standing for their own subtrees; undefined when the subtree
   * cannot be read alone.
   */
  private _region(root: SpanEntry):
    | {
        entries: SpanEntry[];
        prebuilt: Map<string, AgentRun> | undefined;
        final: Map<string, SpanEntry> | undefined;
        whole: boolean;
      }
    | undefined {
    const entries: SpanEntry[] = [];
    let prebuilt: Map<string, AgentRun> | undefined;
    // Agents below not rebuilt yet whose subtrees have ended (waiting for their turn), by span id.
    let final: Map<string, SpanEntry> | undefined;
    // Every agent below was rebuilt before, or is final.
    let whole = true;
    const stack: SpanEntry[] = [root];
    while (stack.length > 0) {
      const entry = stack.pop()!;
      if (!rebuildNeeds(entry)) continue;
      // Linked out of start order: spans held before it may name it as their parent unlinked.
      if (entry.outOfOrder) return;
      const attributes = (entry.span ?? entry.like)?.attributes;
      if (attributes !== undefined && attributes[ATTR_OPENINFERENCE_SPAN_KIND] !== undefined) return;
      entries.push(entry);
      const built = entry !== root && entry.role === SpanRole.AGENT ? this._built.get(entry) : undefined;
      if (built !== undefined) {
        prebuilt ??= new Map();
        prebuilt.set(entry.spanId, built);
        continue;
      }
      if (entry !== root && entry.role === SpanRole.AGENT) {
        if (entry.open || entry.activeChildren > 0) whole = false;
        else {
          final ??= new Map();
          final.set(entry.spanId, entry);
        }
      }
      const children = entry.children;
      if (children !== undefined) for (const child of children) stack.push(child);
    }
    return { entries, prebuilt, final, whole };
  }

  /**
   * Whether nothing at or above `from` changes how a run below it reads: no span flagged
   * `toolwatch.from_history` (everything below is history), no OpenInference span, and no
   * held span above the topmost linked one. Each entry is read once, when a run below it is
   * first rebuilt: a chain of n nested runs reads n entries, not n² (an attribute set on an
   * open ancestor after a run below it was judged is not read again).
   */
  private _plainFrom(state: TraceState, from: SpanEntry | undefined): boolean {
    const path: SpanEntry[] = [];
    let plain: boolean | undefined;
    let at = from;
    while (at !== undefined) {
      plain = this._plain.get(at);
      if (plain !== undefined) break;
      path.push(at);
      at = at.parent;
    }
    if (plain === undefined) {
      // The top of the linked chain: reconstruction links it on if its parent is held (linked late).
      const top = path[path.length - 1];
      plain = top === undefined || top.parentId === undefined || !state.spans.has(top.parentId);
    }
    for (let k = path.length - 1; k >= 0; k--) {
      const entry = path[k]!;
      const attributes = (entry.span ?? entry.like)?.attributes;
      plain &&=
        attributes === undefined ||
        (!readTrue(attributes[ATTR_TOOLWATCH_FROM_HISTORY]) &&
          attributes[ATTR_OPENINFERENCE_SPAN_KIND] === undefined);
      this._plain.set(entry, plain);
    }
    return plain;
  }
}

/**
 * Whether a span of the subtree of `root` (its first span) started after the root's span
 * ended: in the whole trace it belongs to a run around the root (see `startsAfterEnd` in
 * reconstruction), which the subtree does not hold.
 */
function startsAfterRun(root: SpanLike, spans: readonly SpanLike[]): boolean {
  if (root.endTime === undefined) return false;
  const last = root.endTime + (Number.isInteger(root.startTime) ? 1 : 0);
  for (const like of spans) if (like !== root && like.startTime > last) return true;
  return false;
}

/**
 * Whether a run rebuilt now (not one taken as it was) kept a call of a model input as
 * history: a call matching nothing in the subtree may match a call elsewhere in the trace.
 */
function historyFromInputs(run: AgentRun, prebuilt: ReadonlyMap<string, AgentRun> | undefined): boolean {
  const stack = [run];
  while (stack.length > 0) {
    const at = stack.pop()!;
    for (const call of at.history) if (call.reason === 'input_messages') return true;
    for (const child of at.children)
      if (prebuilt === undefined || prebuilt.get(child.spanId) !== child) stack.push(child);
  }
  return false;
}

/** Keeps, for their own turn, the runs rebuilt afresh below `run` whose subtrees are final. */
function keepFinal(
  run: AgentRun,
  prebuilt: ReadonlyMap<string, AgentRun> | undefined,
  final: ReadonlyMap<string, SpanEntry>,
  built: WeakMap<SpanEntry, AgentRun>,
): void {
  const stack = [...run.children];
  while (stack.length > 0) {
    const at = stack.pop()!;
    if (prebuilt !== undefined && prebuilt.get(at.spanId) === at) continue;
    const entry = final.get(at.spanId);
    if (entry !== undefined) built.set(entry, at);
    for (const child of at.children) stack.push(child);
  }
}

/**
 * What stands for the run around a nested run judged from its subtree (`AgentRun.parent`: the
 * run is nested): the enclosing agent's identity, span and attributes. Its calls are not
 * rebuilt; the run around is judged, whole, when its own span ends.
 */
function enclosingRun(traceId: string, agent: SpanEntry, run: AgentRun): AgentRun {
  const span = agent.span!;
  const identity = spanIdentity(span, agent.agent !== undefined, true);
  return {
    agent: identity.agent,
    traceId,
    spanId: agent.spanId,
    implicit: false,
    children: [run],
    executions: [],
    requests: [],
    calls: [],
    history: [],
    start: agent.t0 ?? span.startTime[0] * 1000 + span.startTime[1] / 1e6,
    status: span.status.code,
    attributes: identity.attributes,
    hasErrorSpan: false,
  };
}

/** The subtree's own span has its parent outside the subtree: not an orphan. */
function withoutOwnOrphan(problems: Problem[], root: SpanEntry): Problem[] {
  return problems.filter((p) => p.code !== 'orphan_span' || p.spanId !== root.spanId);
}
