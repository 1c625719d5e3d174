import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { SpanRole } from '../conventions/span-role.js';
import type { LiveAgent } from '../guard/live-misuse.js';
import type { LiveScope } from '../guard/live-scope.js';
import type { SpanReading } from '../reconstruction/trace-model.js';
import type { SpanLike } from '../types.js';

/** One span the processor holds for a trace with agent activity; an agent's entry is the live checks' scope of its run. */
export interface SpanEntry extends LiveScope {
  /**
   * The span; let go (undefined) once a span that is not an agent span has ended and been
   * converted (`like`), so the SDK can free it as soon as it is exported rather than when
   * the run ends.
   */
  span: ReadableSpan | undefined;
  spanId: string;
  parentId: string | undefined;
  /** The parent's entry when it was held as this span started: links are pointers, not lookups. */
  parent: SpanEntry | undefined;
  /**
   * The held entries linked below this one (`linkEntry`), in no particular order (undefined
   * while there are none): a nested run is rebuilt from its own subtree, found through them.
   */
  children: SpanEntry[] | undefined;
  /** Its place in its parent's `children`, or -1 (not listed there). */
  childIndex: number;
  /** The nearest agent span above this one, when known at start. */
  agent: SpanEntry | undefined;
  role: SpanRole;
  open: boolean;
  /**
   * Held children that are open or have open descendants themselves. A span has an open
   * descendant exactly when this is above 0: kept up to date in O(1) amortised per span,
   * so no hook ever walks the tree to find out.
   */
  activeChildren: number;
  /** An ordinary span that sits between agent-related spans: reconstruction needs it to link them. */
  needed: boolean;
  /** The span as reconstruction reads it, built once when it ended. */
  like: SpanLike | undefined;
  /** Its facts, read when it ended. */
  reading: SpanReading | undefined;
  /** Live counts of an agent span (null: no rule with live limits applies). */
  live: LiveAgent | null | undefined;
  /** High-resolution start (epoch ms) taken in `onStart`. */
  t0: number | undefined;
  /** SAMPLED_OUT traces: what this agent's open tool spans map to (role TOOL, `agent` = this entry). */
  toolScope: SpanEntry | undefined;
  /** First seen when it ended, or started at a time given by the caller: its place in the map says nothing of its start. */
  outOfOrder: boolean;
  /** What holding it after its end costs (`retainedBytes`), counted in its trace's `bytes`. */
  bytes: number;
  /** Some held span has had it as its parent: it links that span to its run. */
  hasHeldChild: boolean;
  /**
   * Agent entries: a model span below it was kept as it ended (it said something, or could not
   * be let go). A silent model span ending after it may be its run's last model call, which
   * decides whether requests that never ran are pending: it is kept too.
   */
  modelKept: boolean;
}

export function newEntry(
  span: ReadableSpan,
  spanId: string,
  parentId: string | undefined,
  role: SpanRole,
): SpanEntry {
  return {
    span,
    spanId,
    parentId,
    parent: undefined,
    children: undefined,
    childIndex: -1,
    agent: undefined,
    role,
    open: true,
    activeChildren: 0,
    needed: false,
    like: undefined,
    reading: undefined,
    live: undefined,
    t0: undefined,
    toolScope: undefined,
    outOfOrder: false,
    bytes: 0,
    hasHeldChild: false,
    modelKept: false,
  };
}

/**
 * The one place an entry is linked below its parent: its agent is the parent, or the parent's
 * agent, and an open entry keeps its parent (and what is above) active until it closes.
 */
export function linkEntry(entry: SpanEntry, parent: SpanEntry): void {
  entry.parent = parent;
  if (parent.children === undefined) parent.children = [];
  entry.childIndex = parent.children.length;
  parent.children.push(entry);
  entry.agent = parent.role === SpanRole.AGENT ? parent : parent.agent;
  parent.hasHeldChild = true;
  if (entry.open) childStarted(parent);
}

/** A let-go entry leaves its parent's `children`, in O(1) (the last child takes its place). */
export function unlinkEntry(entry: SpanEntry): void {
  const siblings = entry.parent?.children;
  const at = entry.childIndex;
  if (siblings === undefined || at < 0 || siblings[at] !== entry) return;
  const last = siblings.pop()!;
  if (last !== entry) {
    siblings[at] = last;
    last.childIndex = at;
  }
  entry.childIndex = -1;
}

/**
 * SAMPLED_OUT and UNMATCHED traces: the entry of an agent span, under the agent `above` it
 * (none: a root run). Its spans are not held, so it has no parent entry.
 */
export function followedAgent(
  span: ReadableSpan,
  spanId: string,
  parentId: string | undefined,
  above: SpanEntry | undefined,
): SpanEntry {
  const entry = newEntry(span, spanId, parentId, SpanRole.AGENT);
  entry.agent = above;
  return entry;
}

/** SAMPLED_OUT and UNMATCHED traces: what the open tool spans of `agent` map to (role TOOL, made once). */
export function toolScopeOf(agent: SpanEntry): SpanEntry {
  if (agent.toolScope === undefined) {
    agent.toolScope = newEntry(agent.span!, '', undefined, SpanRole.TOOL);
    agent.toolScope.agent = agent;
  }
  return agent.toolScope;
}

/** A child started under `entry`: it (and, if it was idle, what is above it) has an open descendant. */
function childStarted(entry: SpanEntry): void {
  let at: SpanEntry | undefined = entry;
  while (at !== undefined) {
    const wasActive = at.open || at.activeChildren > 0;
    at.activeChildren++;
    if (wasActive) return;
    at = at.parent;
  }
}

/** `entry` closed: when nothing below it is open either, its ancestors lose an active child. */
export function entryClosed(entry: SpanEntry): void {
  if (!entry.open) return;
  entry.open = false;
  let at = entry;
  while (at.activeChildren === 0 && !at.open) {
    const parent = at.parent;
    if (parent === undefined) return;
    parent.activeChildren--;
    at = parent;
  }
}

/** Stands for "no agent above" in SAMPLED_OUT scope maps. */
export const NO_SCOPE: SpanEntry = newEntry(
  undefined as unknown as ReadableSpan,
  '',
  undefined,
  SpanRole.NONE,
);
