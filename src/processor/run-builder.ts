import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { classifySpan } from '../conventions/classify.js';
import { hrTimeToMs } from '../conventions/from-readable-span.js';
import { agentNameOf, SpanRole } from '../conventions/span-role.js';
import { type RunIdentity, ruleMatches } from '../evaluation/match-rules.js';
import { readAhead, safeAgentName } from '../reconstruction/read-facts.js';
import { reconstructTrace } from '../reconstruction/reconstruct-trace.js';
import type { SpanReading } from '../reconstruction/trace-model.js';
import type { Policy, ReconstructedTrace, SpanEventLike, SpanLike, StatusCode } from '../types.js';
import { mergeAttributes } from '../util/merge-attributes.js';
import type { SpanEntry } from './span-entry.js';
import type { TraceState } from './trace-state.js';

/**
 * The span as reconstruction reads it, on the processor's clock, built once, when its run is
 * first rebuilt after it ended (its data is final then). SDK 2.x stamps a span's start with
 * `Date.now()` (whole milliseconds) and its end as start plus a high-resolution duration,
 * so a child can appear to start after its parent ended. Start times taken in `onStart`
 * from one high-resolution clock keep parents around their children.
 */
export function spanLikeOf(entry: SpanEntry, span: ReadableSpan, ending: boolean): SpanLike {
  // Built here rather than by `fromReadableSpan`: constant status and empty events are
  // shared, and the scope is referenced, not copied (this runs for every held span).
  const status = span.status;
  const events = span.events;
  const recorded = hrTimeToMs(span.startTime);
  // While `onEnding` runs the span is not yet marked ended, but its end time is set.
  let endTime = ending || span.ended ? hrTimeToMs(span.endTime) : undefined;
  let startTime = recorded;
  if (entry.t0 !== undefined) {
    startTime = entry.t0;
    if (endTime !== undefined) endTime = entry.t0 + (endTime - recorded);
  }
  // Every field in one literal (absent ones undefined): properties added later would each
  // grow a backing store.
  return {
    traceId: span.spanContext().traceId,
    spanId: entry.spanId,
    parentSpanId: entry.parentId,
    name: span.name,
    kind: span.kind,
    startTime,
    endTime,
    status: status === undefined || (status.code === 0 && !status.message) ? STATUS_UNSET : statusOf(status),
    attributes: span.attributes,
    events: events.length === 0 ? NO_EVENTS : events.map(toEvent),
    resource: span.resource?.attributes,
    scope: span.instrumentationScope,
    droppedAttributesCount: span.droppedAttributesCount > 0 ? span.droppedAttributesCount : undefined,
  };
}

const STATUS_UNSET: SpanLike['status'] = Object.freeze({ code: 0 }) as SpanLike['status'];
const NO_EVENTS: SpanEventLike[] = Object.freeze([]) as unknown as SpanEventLike[];

/**
 * The span as classification and the adapters' agent-name readers see it: its name,
 * attributes and events, in one literal with shared constants (rule matching asks this of
 * every agent span, sampled or not: twice per run out of the sample). The readers never read
 * times, ids or status; `fromReadableSpan` builds the full view field by field.
 */
function identityView(span: ReadableSpan): SpanLike {
  const events = span.events;
  return {
    traceId: '',
    spanId: '',
    parentSpanId: undefined,
    name: span.name,
    kind: span.kind,
    startTime: 0,
    endTime: undefined,
    status: STATUS_UNSET,
    attributes: span.attributes,
    events: events.length === 0 ? NO_EVENTS : events.map(toEvent),
    resource: span.resource?.attributes,
    scope: span.instrumentationScope,
    droppedAttributesCount: undefined,
  };
}

function statusOf(status: ReadableSpan['status']): SpanLike['status'] {
  const code = status.code as StatusCode;
  return status.message ? { code, message: status.message } : { code };
}

function toEvent(event: ReadableSpan['events'][number]): SpanEventLike {
  return { name: event.name, time: hrTimeToMs(event.time), attributes: event.attributes ?? {} };
}

/**
 * The runs of a held trace: the spans reconstruction needs (agent-related ones, and the
 * ordinary spans linking them), each converted once when it ended, through the same
 * `reconstructTrace` as offline evaluation.
 */
export function rebuildRuns(
  state: TraceState,
  argumentsRead: ReadonlySet<string> | undefined,
): ReconstructedTrace {
  // Reused from one rebuild to the next (reconstruction keeps neither list): no arrays grown per run.
  const spans = SCRATCH_SPANS;
  const readings = SCRATCH_READINGS;
  try {
    return reconstructTrace(
      collect(state, spans, readings, argumentsRead !== undefined),
      readings,
      argumentsRead,
    );
  } finally {
    spans.length = 0;
    readings.length = 0;
  }
}

const SCRATCH_SPANS: SpanLike[] = [];
const SCRATCH_READINGS: Array<SpanReading | undefined> = [];

function collect(
  state: TraceState,
  spans: SpanLike[],
  readings: Array<SpanReading | undefined>,
  deferToolValues: boolean,
): SpanLike[] {
  let previous = Number.NEGATIVE_INFINITY;
  for (const entry of state.spans.values()) {
    if (!rebuildNeeds(entry)) continue;
    const like = heldView(entry, deferToolValues);
    // Spans tracked from their start sit in the map in start order: a tie on the clock is
    // broken the way the application ran them.
    if (!entry.outOfOrder) previous = breakTie(like, previous);
    spans.push(like);
    readings.push(entry.open ? undefined : entry.reading);
  }
  return spans;
}

/** Whether reconstruction reads the held entry: agent-related spans, and the ordinary spans linking them. */
export function rebuildNeeds(entry: SpanEntry): boolean {
  return entry.role !== SpanRole.NONE || entry.needed;
}

/**
 * The held entry as reconstruction reads it. Open ancestors place the run (nested or not);
 * open descendants are incomplete calls.
 */
export function heldView(entry: SpanEntry, deferToolValues: boolean): SpanLike {
  // Open entries and agent entries keep their span; the others were converted as they ended
  // (one whose end is being handled is converted and let go while still open: a trace
  // evicted at that moment, over `maxBufferedBytes`, is rebuilt with it so).
  if (entry.open && entry.span !== undefined) return spanLikeOf(entry, entry.span, false);
  // Built once, after the span ended (its data is final then).
  entry.like ??= spanLikeOf(entry, entry.span!, true);
  const like = entry.like;
  // Arguments, results and model outputs are parsed once, at the first rebuild (tool
  // arguments and results only if a scorer reads them, see `reconstructTrace`).
  if (entry.reading === undefined && entry.role !== SpanRole.NONE)
    entry.reading = readAhead(like, deferToolValues);
  return like;
}

/**
 * A span that starts no later than the one before it in start order is moved just after it
 * (the application ran them in that order); returns its start, the next one's `previous`.
 */
export function breakTie(like: SpanLike, previous: number): number {
  if (like.startTime <= previous) {
    const shift = previous + 0.001 - like.startTime;
    like.startTime += shift;
    if (like.endTime !== undefined) like.endTime += shift;
  }
  return like.startTime;
}

/**
 * The identity rule matching reads, from an agent span alone (no rebuild): the name as its
 * convention's adapter reads it, and span plus resource attributes when some rule matches
 * on attributes (merging costs a copy per run).
 */
export function spanIdentity(span: ReadableSpan, nested: boolean, withResource: boolean): RunIdentity {
  const like = identityView(span);
  // Classified once: the claimed reader does not ask the role again.
  const { adapter, role } = classifySpan(like);
  const name = adapter !== undefined && role === 'agent' ? safeAgentName(adapter, like) : undefined;
  return {
    agent: name ?? agentNameOf(span.name, span.attributes),
    attributes: withResource ? mergeAttributes(span.resource?.attributes, span.attributes) : span.attributes,
    nested,
  };
}

/**
 * Whether some rule matches the name the agent span announces (cheap: no adapter read). Only
 * meaningful when no rule matches on attributes: the announced identity carries none of the
 * resource's.
 */
export function announcedRuleMatches(span: ReadableSpan, nested: boolean, policy: Policy): boolean {
  const attributes = span.attributes;
  const announced: RunIdentity = { agent: agentNameOf(span.name, attributes), attributes, nested };
  for (const rule of policy.rules) if (ruleMatches(announced, rule.match)) return true;
  return false;
}
