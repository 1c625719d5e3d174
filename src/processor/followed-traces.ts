import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span } from '@opentelemetry/sdk-trace-base';
import { announcesAgentName, SpanRole } from '../conventions/span-role.js';
import { matchRules } from '../evaluation/match-rules.js';
import { isSampled } from '../evaluation/sampling.js';
import { ATTR_OPENINFERENCE_SPAN_KIND, ATTR_TOOLWATCH_FROM_HISTORY } from '../semconv.js';
import type { Policy } from '../types.js';
import type { LiveChecks } from './live-checks.js';
import type { PolicyTraits } from './policy-traits.js';
import { announcedRuleMatches, spanIdentity } from './run-builder.js';
import { parentIdOf, parentSpanOf } from './sdk-span.js';
import { NOTHING, recordSkipped, type SpanEnd } from './span-end.js';
import { followedAgent, NO_SCOPE, type SpanEntry, toolScopeOf } from './span-entry.js';
import type { TraceBuffer } from './trace-buffer.js';
import { REFUSED_AGENT, REFUSED_NESTED, TraceMode, type TraceState } from './trace-state.js';

export interface FollowedTracesOptions {
  policy: Policy;
  traits: PolicyTraits;
  buffer: TraceBuffer;
  live: LiveChecks;
}

/**
 * Traces followed without holding their spans: out of the policy's sample (`SAMPLED_OUT`), or
 * whose root agent no rule can match (`UNMATCHED`). Only agent spans are held, enough for
 * nesting, live checks and the `skipped: sampled_out` record; nothing is rebuilt. Also
 * decides, at a trace's first span, whether it is followed this way or held whole.
 */
export class FollowedTraces {
  private readonly _policy: Policy;
  private readonly _buffer: TraceBuffer;
  private readonly _live: LiveChecks;
  private readonly _allRulesRootOnly: boolean;
  private readonly _sampledOutFastPath: boolean;
  private readonly _unmatchedFastPath: boolean;

  constructor(options: FollowedTracesOptions) {
    this._policy = options.policy;
    this._buffer = options.buffer;
    this._live = options.live;
    this._allRulesRootOnly = options.traits.allRulesRootOnly;
    this._sampledOutFastPath = options.traits.sampledOutFastPath;
    this._unmatchedFastPath = options.traits.unmatchedFastPath;
  }

  /** An agent-related span of a followed trace starts. */
  started(
    state: TraceState,
    span: Span,
    spanId: string,
    role: SpanRole,
    parentId: string | undefined,
    parentContext: Context,
  ): void {
    // Model spans are not followed, like ordinary ones: nothing of theirs is checked live, and
    // a span below one finds its agent through the model span's parent (`_aboveOrdinary`).
    if (role === SpanRole.LLM) return;
    let parent = parentId === undefined ? undefined : state.spans.get(parentId);
    if (parent === undefined && parentId !== undefined)
      parent = this._followedParent(state, parentId, parentContext);
    const above =
      parent ?? (parentId === undefined ? undefined : this._aboveOrdinary(state, parentContext, parentId));
    if (!this._buffer.admit(state)) {
      // Refused (span limits, counted): an agent span is remembered by id while it is open, so
      // that its end still gives its run the record it is due.
      if (role === SpanRole.AGENT)
        state.refuse(
          spanId,
          REFUSED_AGENT | (above !== undefined && above !== NO_SCOPE ? REFUSED_NESTED : 0),
        );
      return;
    }
    this._startedSampledOut(state, span, spanId, role, above);
  }

  /**
   * Sampled traces are held whole; only traces that start with an agent span can be followed
   * without it: out of the sample, or when no rule can match any of their runs.
   */
  modeOf(traceId: string, role: SpanRole, span: Span): TraceMode {
    if (role !== SpanRole.AGENT) return TraceMode.JUDGED;
    if (this._sampledOutFastPath && !isSampled(traceId, this._policy.sampling.ratio))
      return TraceMode.SAMPLED_OUT;
    return this._unmatchedAtStart(span) ? TraceMode.UNMATCHED : TraceMode.JUDGED;
  }

  /**
   * Whether no rule can match any run of a trace whose root is this agent span: every
   * rule is root-only and reads only the name (so the runs below it cannot match, and its own
   * identity is known now), no rule matches the name it has now, and it is surely a run
   * (not an OpenInference span, which may be a wrapper whose children are the top-level runs;
   * not one flagged as history).
   */
  private _unmatchedAtStart(span: Span): boolean {
    if (!this._unmatchedFastPath) return false;
    // Only the trace's root: under any other span, agents side by side with this one (an HTTP
    // handler running two) are root runs too, and one of them may match a rule.
    if (span.parentSpanContext !== undefined) return false;
    const attributes = span.attributes;
    if (
      attributes[ATTR_OPENINFERENCE_SPAN_KIND] !== undefined ||
      attributes[ATTR_TOOLWATCH_FROM_HISTORY] !== undefined
    )
      return false;
    // The common case, a rule for the name the span announces: followed in full, no adapter read.
    if (announcedRuleMatches(span, false, this._policy)) return false;
    // A name not stated yet (an attribute set after start is common) may still match a rule:
    // followed in full rather than risk an incomplete record for a run that could be judged.
    if (!announcesAgentName(span.name, attributes)) return false;
    return matchRules(spanIdentity(span, false, false), this._policy).length === 0;
  }

  /**
   * Out of the sample, a trace holds its agent spans only; tools and chains map to the agent
   * above them (no allocation), enough for nesting, live checks and the skipped record.
   * Ordinary and model spans are not followed: a span under one finds its agent through that
   * span's own parent, else is placed under the agent that started last and is still open.
   */
  private _startedSampledOut(
    state: TraceState,
    span: Span,
    spanId: string,
    role: SpanRole,
    above: SpanEntry | undefined,
  ): void {
    // A tool's children belong to the tool's agent.
    const scope = above === undefined ? NO_SCOPE : above.role === SpanRole.TOOL ? above.agent! : above;
    if (role === SpanRole.AGENT) {
      const entry = followedAgent(span, spanId, parentIdOf(span), scope === NO_SCOPE ? undefined : scope);
      this._buffer.hold(state, entry);
      state.followAgent(span, entry);
    } else if (role === SpanRole.TOOL && scope !== NO_SCOPE) {
      this._buffer.holdScope(state, span, toolScopeOf(scope));
      if (this._live.enabled) this._live.toolStarted(state.traceId, scope, span, spanId);
    } else {
      this._buffer.holdScope(state, span, scope);
    }
  }

  /**
   * The agent above an agent-related span whose parent is an ordinary span (not followed): the
   * ordinary parent's own parent when that is a held agent; none when the ordinary parent is
   * the trace's local root (an HTTP handler running agents side by side); else, not knowing,
   * the agent that started last and is still open.
   */
  private _aboveOrdinary(state: TraceState, parentContext: Context, parentId: string): SpanEntry | undefined {
    const candidate = parentSpanOf(parentContext, parentId);
    if (candidate !== undefined) {
      const above = parentIdOf(candidate);
      if (above === undefined || candidate.parentSpanContext?.isRemote === true) return undefined;
      const agent = state.spans.get(above);
      if (agent !== undefined) return agent;
    }
    return state.lastAgent;
  }

  /**
   * SAMPLED_OUT traces: the scope of a followed parent that is not an agent (held by object
   * only), through the span object of the start context; undefined for any other parent.
   */
  private _followedParent(
    state: TraceState,
    parentId: string,
    parentContext: Context,
  ): SpanEntry | undefined {
    if (state.followed.size === 0) return undefined;
    const candidate = parentSpanOf(parentContext, parentId);
    return candidate === undefined ? undefined : state.followed.get(candidate);
  }

  /**
   * A span of a followed trace ends: an agent span's run gets its record (`sampled_out`, or,
   * for a trace no rule matched at its start, `incomplete_trace` when one matches now); a tool
   * span's end is checked live. Returns the record for the processor to write.
   */
  ending(state: TraceState, span: ReadableSpan, spanId: string): SpanEnd {
    // Ordinary spans (not followed out of the sample) and spans refused when they started
    // (span limits: counted then) have nothing to do now.
    const held = state.unfollow(span);
    if (held === undefined) {
      const flags = state.refusedEnded(spanId);
      if (flags === undefined) return NOTHING;
      // An agent span refused at its start (span limits): its run's record all the same.
      this._buffer.touch(state);
      return this._record(state, (flags & REFUSED_NESTED) !== 0);
    }
    let next = NOTHING;
    const isAgent = held.spanId === spanId && held !== NO_SCOPE;
    if (isAgent) {
      state.close(held);
      // The agent that started before this one and is still open takes its place.
      state.followedAgentEnded(held);
      next = this._record(state, held.agent !== undefined);
      this._buffer.forget(state, spanId);
    } else {
      if (held.role === SpanRole.TOOL && this._live.enabled)
        this._live.toolEnded(state.traceId, held.agent, span, spanId);
      this._buffer.releaseScope(state);
    }
    this._buffer.touch(state);
    this._buffer.releaseIfIdle(state);
    return next;
  }

  /**
   * The record of a followed agent span's run as it ends: `sampled_out`, or, matched by no rule
   * when it started, `incomplete_trace` if one matches now (its spans were not held).
   */
  private _record(state: TraceState, nested: boolean): SpanEnd {
    if (nested && this._allRulesRootOnly) return NOTHING;
    return recordSkipped(
      state.mode === TraceMode.SAMPLED_OUT ? 'sampled_out' : 'matched_after_start',
      nested,
    );
  }
}
