import type { Context, MeterProvider, TracerProvider } from '@opentelemetry/api';
import { diag, trace } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { DetachedSpanWatch } from '../conventions/detached-spans.js';
import {
  agentNameOf,
  announcesAgentName,
  lateSpanRole,
  SpanRole,
  spanRole,
} from '../conventions/span-role.js';
import { ToolwatchMetrics } from '../emission/metrics.js';
import { type Placement, VerdictWriter } from '../emission/verdict-writer.js';
import { JudgeLimiter } from '../evaluation/judge-limiter.js';
import { matchRules, type RunIdentity, ruleMatches, runIdentity } from '../evaluation/match-rules.js';
import { isSampled } from '../evaluation/sampling.js';
import { findRun, runsInOrder } from '../reconstruction/run-tree.js';
import { ATTR_OPENINFERENCE_SPAN_KIND, ATTR_TOOLWATCH_FROM_HISTORY } from '../semconv.js';
import type { AgentRun, JudgeFunction, MisuseEvent, Policy, Verdict } from '../types.js';
import { LiveChecks } from './live-checks.js';
import { PendingJudges } from './pending-judges.js';
import { ProblemLog } from './problem-log.js';
import { highResolutionStart, parentIdOf, rebuildRuns, spanIdentity, spanLikeOf } from './run-builder.js';
import { contextOnly, RunJudge } from './run-judge.js';
import {
  childStarted,
  entryClosed,
  type LateRun,
  NO_SCOPE,
  newEntry,
  type SpanEntry,
  type Tombstone,
  TraceBuffer,
  TraceMode,
  type TraceState,
} from './trace-buffer.js';

export interface ToolwatchSpanProcessorOptions {
  /** The policy runs are judged by (from `loadPolicy`, or built in code). Required. */
  policy: Policy;
  /** Where toolwatch's metrics go. Default: none (a no-op meter). */
  meterProvider?: MeterProvider;
  /** Judges by name for `llm_judge` scorers; `default` is used when a scorer names none. Default: none. */
  judges?: Record<string, JudgeFunction | unknown>;
  /** Called with every verdict, once it is final (after its judges, if any). Default: none. */
  onVerdict?: (verdict: Verdict) => void;
  /** Called for every live misuse, while the run is still going. Default: none. */
  onMisuse?: (misuse: MisuseEvent) => void;
  /**
   * How long a run whose agent span ended waits for descendant spans that are still open
   * (streaming, fire-and-forget tools) before it is judged anyway. The verdict then goes on
   * a new `evaluate {agent}` span. Default: 5000 ms.
   */
  lateSpanTimeoutMs?: number;
  /** Agent traces held at once; beyond it the oldest trace is evicted and its spans counted as dropped. Default: 10000. */
  maxTraces?: number;
  /**
   * Spans held per agent trace; further spans are dropped (and counted), and the trace's runs
   * get `skipped: incomplete_trace` records instead of verdicts. Default: 10000.
   */
  maxSpansPerTrace?: number;
  /**
   * Spans held over all traces; beyond it the oldest traces are evicted and their spans
   * counted as dropped. Bounds memory whatever the mix of traces. Default: 100000.
   */
  maxBufferedSpans?: number;
  /** An agent trace with no span activity for this long is evicted (roots that never end). Default: 300000 ms. */
  traceTtlMs?: number;
  /** A judge call still running after this long is aborted and yields an `error` result. Default: 60000 ms. */
  judgeTimeoutMs?: number;
  /**
   * Creates the `evaluate {agent}` spans for results that arrive after the agent span ended.
   * Default: the global tracer provider at the time of emission.
   */
  tracerProvider?: TracerProvider;
  /**
   * Wrapping mode, for SDKs without `onEnding` (sdk-trace-base 1.x): every hook is forwarded
   * to `next`, and agent spans are handed to it with the verdict's attributes and events added
   * to their view. Default: none (register toolwatch beside the exporting processor).
   */
  next?: SpanProcessor;
}

const DEFAULTS = {
  lateSpanTimeoutMs: 5000,
  maxTraces: 10_000,
  maxSpansPerTrace: 10_000,
  maxBufferedSpans: 100_000,
  traceTtlMs: 300_000,
  judgeTimeoutMs: 60_000,
} as const;

/**
 * Judges every agent run as its agent span ends and writes the verdict onto that span, so
 * every exporter sees it. Register it beside the exporting processor (before it, so that
 * what is emitted during `shutdown()` is still exported):
 *
 * ```ts
 * const toolwatch = new ToolwatchSpanProcessor({ policy, meterProvider, onMisuse });
 * new BasicTracerProvider({ spanProcessors: [toolwatch, new BatchSpanProcessor(exporter)] });
 * ```
 *
 * The cost follows the work. Ordinary spans of traces without agent activity cost a
 * name/attribute check. Runs out of the policy's sample hold only their agent spans (rule
 * matching, live checks and a `skipped: sampled_out` record). Sampled runs are held span by
 * span, each converted once as it ends, and rebuilt, scored and written when the agent span
 * ends. Hooks never throw: problems go to `diag`, once per kind, then are counted.
 *
 * Where the verdict goes:
 * - on the agent span itself, written in `onEnding` (the first matching rule), when the span
 *   has room for it under its limits;
 * - on a new `evaluate {agent}` span parented to (and linked to) the run span, for every
 *   further matching rule, for judges' results, for runs that waited for late spans, for runs
 *   whose spans were recognised only as they ended (OpenInference bridges), and for agent
 *   spans without room;
 * - in wrapping mode (`next`, SDKs without `onEnding`), on the view of the agent span handed
 *   to `next`.
 */
export class ToolwatchSpanProcessor implements SpanProcessor {
  private readonly _policy: Policy;
  private readonly _next: SpanProcessor | undefined;
  private readonly _metrics: ToolwatchMetrics;
  private readonly _problems: ProblemLog;
  private readonly _buffer: TraceBuffer;
  private readonly _live: LiveChecks;
  private readonly _judges: PendingJudges;
  private readonly _writer: VerdictWriter;
  private readonly _runs: RunJudge;
  private readonly _lateSpanTimeoutMs: number;
  /** A policy without rules judges nothing and checks nothing: every hook returns at once. */
  private readonly _idle: boolean;
  private readonly _allRulesRootOnly: boolean;
  private readonly _rulesReadAttributes: boolean;
  /** Out-of-sample traces hold no span state unless judges escalate on ERROR spans, which needs the whole run. */
  private readonly _sampledOutFastPath: boolean;
  /** Traces whose root agent matches no rule at its start can be followed without holding their spans (see `_unmatchedAtStart`). */
  private readonly _unmatchedFastPath: boolean;
  private readonly _sweeper: ReturnType<typeof setInterval>;
  /** Warns once when agent and tool spans are all roots (no context manager): every verdict would be wrong. */
  private readonly _detached = new DetachedSpanWatch();
  /** Set by the first `onEnding` call: the SDK supports it, so agent spans are written in place. */
  private _sdkCallsOnEnding = false;
  private _shutdownPromise: Promise<void> | undefined;
  private _isShutdown = false;

  constructor(options: ToolwatchSpanProcessorOptions) {
    const policy = options.policy;
    this._policy = policy;
    this._next = options.next;
    this._metrics = new ToolwatchMetrics({ meterProvider: options.meterProvider, policy });
    this._problems = new ProblemLog(this._metrics);
    const problem = (kind: string, message: string, error?: unknown) =>
      this._problems.report(kind, message, error);
    this._lateSpanTimeoutMs = positive(
      options.lateSpanTimeoutMs,
      DEFAULTS.lateSpanTimeoutMs,
      'lateSpanTimeoutMs',
    );
    this._buffer = new TraceBuffer(
      {
        maxTraces: positive(options.maxTraces, DEFAULTS.maxTraces, 'maxTraces'),
        maxSpansPerTrace: positive(options.maxSpansPerTrace, DEFAULTS.maxSpansPerTrace, 'maxSpansPerTrace'),
        maxBufferedSpans: positive(options.maxBufferedSpans, DEFAULTS.maxBufferedSpans, 'maxBufferedSpans'),
        traceTtlMs: positive(options.traceTtlMs, DEFAULTS.traceTtlMs, 'traceTtlMs'),
      },
      this._metrics,
      this._problems,
      (state) => this._evicting(state),
    );
    this._live = new LiveChecks({
      policy,
      metrics: this._metrics,
      problems: this._problems,
      onMisuse: options.onMisuse,
      withResource: policy.rules.some((rule) => rule.match.attributes !== undefined),
    });
    this._judges = new PendingJudges({
      policy,
      judges: options.judges,
      limiter: new JudgeLimiter(policy.judge),
      timeoutMs: positive(options.judgeTimeoutMs, DEFAULTS.judgeTimeoutMs, 'judgeTimeoutMs'),
      problem,
    });
    this._writer = new VerdictWriter({
      redact: policy.redact,
      ...(options.tracerProvider ? { tracerProvider: options.tracerProvider } : {}),
      problem,
    });
    this._runs = new RunJudge({
      policy,
      metrics: this._metrics,
      writer: this._writer,
      judges: this._judges,
      onVerdict: options.onVerdict,
      problem,
    });
    this._idle = policy.rules.length === 0;
    this._allRulesRootOnly = policy.rules.every((rule) => rule.match.rootOnly);
    this._rulesReadAttributes = policy.rules.some((rule) => rule.match.attributes !== undefined);
    this._sampledOutFastPath = !policy.judge.escalateOn.includes('error_span');
    this._unmatchedFastPath = this._allRulesRootOnly && !this._rulesReadAttributes;
    this._sweeper = setInterval(() => this._sweep(), this._buffer.sweepPeriodMs);
    // The processor must never keep the process alive.
    this._sweeper.unref?.();
  }

  onStart(span: Span, parentContext: Context): void {
    if (!this._idle) {
      try {
        if (this._isShutdown) this._startedAfterShutdown(span);
        else this._started(span, parentContext);
      } catch (error) {
        this._problems.report('on_start', 'onStart failed', error);
      }
    }
    this._next?.onStart(span, parentContext);
  }

  onEnding(span: Span): void {
    this._sdkCallsOnEnding = true;
    if (!this._idle && !this._isShutdown) {
      try {
        this._ending(span, 'inline');
      } catch (error) {
        this._problems.report('on_ending', 'onEnding failed', error);
      }
    }
    this._next?.onEnding?.(span);
  }

  onEnd(span: ReadableSpan): void {
    let forwarded: ReadableSpan = span;
    // SDKs without `onEnding` (1.x): the same flow, run here; the verdict rides on a view.
    if (!this._sdkCallsOnEnding && !this._idle && !this._isShutdown) {
      try {
        forwarded = this._ending(span, this._next ? 'view' : 'span') ?? span;
      } catch (error) {
        this._problems.report('on_end', 'onEnd failed', error);
      }
    }
    this._next?.onEnd(forwarded);
  }

  /** Waits for pending judges and late evaluations, then flushes what they emitted. */
  async forceFlush(): Promise<void> {
    await this._judges.drain();
    await this._writer.flush();
    await this._next?.forceFlush();
  }

  /**
   * Idempotent. Judges, synchronously, every run still waiting for late spans and the ended
   * runs of unfinished traces, aborts running judges at once (their results become `error`),
   * and emits all of it before yielding, so that exporting processors registered after
   * toolwatch still export it; then flushes and shuts `next` down.
   */
  shutdown(): Promise<void> {
    this._shutdownPromise ??= this._shutdown();
    return this._shutdownPromise;
  }

  // -------------------------------------------------------------------------------------
  // Span start

  private _started(span: Span, parentContext: Context): void {
    const role = spanRole(span.name, span.attributes);
    // The hot path: ordinary spans stop here, before any lookup, unless some held trace is
    // judged (out of the sample, and in traces without agent activity, they are not followed).
    if (role === SpanRole.NONE && this._buffer.judged === 0 && !this._buffer.hasTombstones) return;
    if (this._detached.watching && role !== SpanRole.NONE && role !== SpanRole.CHAIN) {
      const kind = role === SpanRole.AGENT ? 'agent' : role === SpanRole.TOOL ? 'tool' : 'llm';
      this._detached.observe(kind, span.parentSpanContext !== undefined);
    }
    const ctx = span.spanContext();
    let state = this._buffer.get(ctx.traceId);
    if (state === undefined) {
      const tombstone = this._buffer.tombstone(ctx.traceId);
      if (tombstone !== undefined) {
        this._startedAfterEviction(tombstone, ctx.spanId, role);
        return;
      }
      // Ordinary spans of traces with no agent activity stop here.
      if (role === SpanRole.NONE) return;
      state = this._buffer.create(ctx.traceId, this._modeOf(ctx.traceId, role, span), false);
    }
    const parentId = parentIdOf(span);
    if (role === SpanRole.NONE) {
      // Out of the sample (or of every rule), ordinary spans are not followed at all.
      if (state.mode !== TraceMode.JUDGED) return;
      this._startedOrdinary(state, span, ctx.spanId, parentId, parentContext);
      return;
    }
    if (!this._buffer.admit(state)) return;
    let parent = parentId === undefined ? undefined : state.spans.get(parentId);
    if (parent === undefined && parentId !== undefined && state.mode === TraceMode.JUDGED) {
      if (state.ordinary.has(parentId)) parent = this._materialize(state, parentId);
      else parent = this._materializeUnheld(state, parentId, parentContext);
    }
    if (parent === undefined && parentId !== undefined && state.mode !== TraceMode.JUDGED)
      parent = this._followedParent(state, parentId, parentContext);
    if (state.mode !== TraceMode.JUDGED) {
      this._startedSampledOut(
        state,
        span,
        ctx.spanId,
        role,
        parent ?? (parentId === undefined ? undefined : state.lastAgent),
      );
      return;
    }
    const entry = newEntry(span, ctx.spanId, parentId, role);
    entry.t0 = highResolutionStart(span);
    // A start time given by the caller (spans replayed by an exporter bridge) is the truth, and
    // the order in which such spans start says nothing.
    if (entry.t0 === undefined) entry.outOfOrder = true;
    if (parent !== undefined) {
      entry.parent = parent;
      entry.agent = parent.role === SpanRole.AGENT ? parent : parent.agent;
      childStarted(parent);
    }
    this._buffer.hold(state, entry);
    state.openCount++;
    if (role === SpanRole.TOOL) state.hasTool = true;
    if (
      (role === SpanRole.TOOL || role === SpanRole.LLM) &&
      parentId !== undefined &&
      parent === undefined &&
      span.parentSpanContext?.isRemote !== true
    ) {
      this._buffer.awaitParent(state, parentId);
    }
    // Ordinary spans between agent-related ones are kept so reconstruction can link through them.
    let ancestor = parent;
    while (ancestor !== undefined && ancestor.role === SpanRole.NONE && !ancestor.needed) {
      ancestor.needed = true;
      ancestor = ancestor.parent;
    }
    if (role === SpanRole.TOOL && this._live.enabled)
      this._live.toolStarted(state.traceId, entry.agent, span, ctx.spanId);
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
    if (!this._buffer.admit(state)) return;
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
    const candidate = trace.getSpan(parentContext) as unknown as Span | undefined;
    if (candidate === undefined || typeof (candidate as { ended?: unknown }).ended !== 'boolean')
      return undefined;
    if ((candidate.ended && !ended) || candidate.spanContext().spanId !== parentId) return undefined;
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
    const parent = state.spans.get(entry.parentId!)!;
    entry.parent = parent;
    entry.agent = parent.role === SpanRole.AGENT ? parent : parent.agent;
    childStarted(parent);
    this._buffer.hold(state, entry);
    state.openCount++;
    if (span.ended) {
      // Its end has passed: converted now, closed (the span below keeps its parent active).
      entry.like = spanLikeOf(entry, span, true);
      entry.span = undefined;
      state.openCount--;
      entryClosed(entry);
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
      const span = state.ordinary.get(id)!;
      state.ordinary.delete(id);
      const entry = newEntry(span, id, parentIdOf(span), SpanRole.NONE);
      entry.needed = true;
      // Held after spans that started later: its place in the map says nothing of its start.
      entry.outOfOrder = true;
      entry.t0 = highResolutionStart(span, false);
      if (parent !== undefined) {
        entry.parent = parent;
        entry.agent = parent.role === SpanRole.AGENT ? parent : parent.agent;
        childStarted(parent);
      }
      this._buffer.adopt(state, entry);
      state.openCount++;
      parent = entry;
    }
    return parent!;
  }

  /**
   * Out of the sample, a trace holds its agent spans only; other agent-related spans (tools,
   * models, chains) map to the agent above them (no allocation), enough for nesting, live
   * checks and the skipped record. Ordinary spans are not followed: an agent-related span
   * under one is placed under the agent that started last and is still open.
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
      const entry = newEntry(span, spanId, parentIdOf(span), role);
      if (scope !== NO_SCOPE) entry.agent = scope;
      this._buffer.hold(state, entry);
      this._buffer.follow(state, span, entry);
      state.lastAgent = entry;
    } else if (role === SpanRole.TOOL && scope !== NO_SCOPE) {
      if (scope.toolScope === undefined) {
        scope.toolScope = newEntry(scope.span!, '', undefined, SpanRole.TOOL);
        scope.toolScope.agent = scope;
      }
      this._buffer.holdScope(state, span, scope.toolScope);
      if (this._live.enabled) this._live.toolStarted(state.traceId, scope, span, spanId);
    } else {
      this._buffer.holdScope(state, span, scope);
    }
    state.openCount++;
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
    const candidate = trace.getSpan(parentContext);
    if (candidate === undefined || candidate.spanContext().spanId !== parentId) return undefined;
    return state.followed.get(candidate as unknown as ReadableSpan);
  }

  /**
   * Sampled traces are held whole; only traces that start with an agent span can be followed
   * without it: out of the sample, or when no rule can match any of their runs.
   */
  private _modeOf(traceId: string, role: SpanRole, span: Span): TraceMode {
    if (role !== SpanRole.AGENT) return TraceMode.JUDGED;
    if (this._sampledOutFastPath && !isSampled(traceId, this._policy.sampling.ratio))
      return TraceMode.SAMPLED_OUT;
    return this._unmatchedAtStart(span) ? TraceMode.UNMATCHED : TraceMode.JUDGED;
  }

  /**
   * Whether no rule can match any run of a trace whose first span is this agent span: every
   * rule is root-only and reads only the name (so the runs below it cannot match, and its own
   * identity is known now), no rule matches the name it has now, and it is surely a run
   * (not an OpenInference span, which may be a wrapper whose children are the top-level runs;
   * not one flagged as history).
   */
  private _unmatchedAtStart(span: Span): boolean {
    if (!this._unmatchedFastPath) return false;
    const attributes = span.attributes;
    if (
      attributes[ATTR_OPENINFERENCE_SPAN_KIND] !== undefined ||
      attributes[ATTR_TOOLWATCH_FROM_HISTORY] !== undefined
    )
      return false;
    // The common case, a rule for the name the span announces: followed in full, no adapter read.
    if (this._ruleForAnnounced(span, false)) return false;
    // A name not stated yet (an attribute set after start is common) may still match a rule:
    // followed in full rather than risk an incomplete record for a run that could be judged.
    if (!announcesAgentName(span.name, attributes)) return false;
    return matchRules(spanIdentity(span, false, false), this._policy).length === 0;
  }

  /** Whether some rule matches the name the agent span announces (cheap: no adapter read). */
  private _ruleForAnnounced(span: ReadableSpan, nested: boolean): boolean {
    if (this._rulesReadAttributes) return false;
    const attributes = span.attributes;
    const announced: RunIdentity = { agent: agentNameOf(span.name, attributes), attributes, nested };
    for (const rule of this._policy.rules) if (ruleMatches(announced, rule.match)) return true;
    return false;
  }

  /** A span of an evicted trace: counted, never the start of a new, partial trace. */
  private _startedAfterEviction(tombstone: Tombstone, spanId: string, role: SpanRole): void {
    this._buffer.touchTombstone(tombstone);
    this._problems.dropped(
      'evicted_trace',
      `trace ${tombstone.traceId} was evicted; its later spans are not held`,
    );
    if (role === SpanRole.AGENT && tombstone.openAgents.size < 1000) {
      tombstone.openAgents.set(spanId, tombstone.openAgents.size > 0);
    }
  }

  /** The processor was shut down, maybe by another tracer provider it is attached to: said, and counted. */
  private _startedAfterShutdown(span: Span): void {
    if (spanRole(span.name, span.attributes) === SpanRole.NONE) return;
    this._problems.dropped(
      'after_shutdown',
      'agent spans arrive after shutdown() (is the processor shared by several tracer providers?): they are not evaluated',
    );
  }

  // -------------------------------------------------------------------------------------
  // Span end: one flow for both SDK generations

  /** Returns the decorated view of the span for `view` placement, when it carries a verdict. */
  private _ending(span: ReadableSpan, placement: Placement): ReadableSpan | undefined {
    const buffer = this._buffer;
    if (
      buffer.size === 0 &&
      !buffer.hasTombstones &&
      lateSpanRole(span.name, span.attributes) === SpanRole.NONE
    )
      return undefined;
    const ctx = span.spanContext();
    let state = buffer.get(ctx.traceId);
    if (state === undefined) {
      const tombstone = buffer.tombstone(ctx.traceId);
      if (tombstone !== undefined) return this._endedAfterEviction(tombstone, span, ctx.spanId, placement);
      // Recognised only as it ends: OpenInference bridges write every attribute at the end.
      if (lateSpanRole(span.name, span.attributes) === SpanRole.NONE) return undefined;
      state = buffer.create(ctx.traceId, TraceMode.JUDGED, true);
    }
    if (state.mode !== TraceMode.JUDGED) return this._endingSampledOut(state, span, ctx.spanId, placement);
    let entry = state.spans.get(ctx.spanId);
    if (entry === undefined && state.ordinary.size > 0 && state.ordinary.has(ctx.spanId)) {
      if (lateSpanRole(span.name, span.attributes) === SpanRole.NONE) {
        // An ordinary span nothing agent-related started under: it goes as it came.
        buffer.forgetOrdinary(state, ctx.spanId);
        buffer.touch(state);
        this._releaseIfIdle(state);
        return undefined;
      }
      // Attributes set after start made it agent-related.
      entry = this._materialize(state, ctx.spanId);
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
        if (role === SpanRole.NONE && (state.awaiting.size === 0 || !state.awaiting.has(ctx.spanId))) {
          buffer.touch(state);
          return undefined;
        }
      } else {
        role = state.seenLate
          ? lateSpanRole(span.name, span.attributes)
          : spanRole(span.name, span.attributes);
        // Refused when it started (counted then): never held.
        if (startedSince(span, state.since)) {
          if (role === SpanRole.AGENT) return this._recordIncomplete(state, span, ctx.spanId, placement);
          return undefined;
        }
      }
      if (!buffer.admit(state)) {
        if (role === SpanRole.AGENT) return this._recordIncomplete(state, span, ctx.spanId, placement);
        return undefined;
      }
      entry = this._holdLate(state, span, ctx.spanId, role);
    } else if (entry.role === SpanRole.NONE) {
      // Attributes set after start can still make a span an agent or a tool.
      entry.role = lateSpanRole(span.name, span.attributes);
      if (entry.role === SpanRole.TOOL) state.hasTool = true;
      if (entry.role === SpanRole.AGENT) state.agents++;
      else if (entry.role === SpanRole.TOOL && entry.agent === undefined) state.looseTools++;
    }
    entry.span = span;
    if (state.awaiting.size > 0) state.awaiting.delete(ctx.spanId);
    const leaf = entry.role === SpanRole.NONE && !entry.needed;
    if (!leaf && entry.role !== SpanRole.AGENT) {
      // Converted now and the span let go: held until the run ends, the SDK's span (and all
      // its parts) would outlive the young generation while runs interleave, and be promoted.
      // Its facts are read when the run is rebuilt (objects made then die young).
      entry.like = spanLikeOf(entry, span, true);
      entry.span = undefined;
    }
    if (entry.open) state.openCount--;
    entryClosed(entry);
    buffer.touch(state);
    if (entry.role === SpanRole.TOOL && this._live.enabled)
      this._live.toolEnded(state.traceId, entry.agent, span, ctx.spanId);
    let view: ReadableSpan | undefined;
    if (!state.evaluated.has(ctx.spanId) && this._judgesAt(state, entry, span)) {
      if (state.incomplete) {
        this._buffer.markEvaluated(state, ctx.spanId);
        view = this._recordIncomplete(state, span, ctx.spanId, placement, this._hasAgentAbove(state, entry));
      } else if (entry.activeChildren > 0) {
        this._waitForLateSpans(state, entry, span);
      } else {
        view = this._evaluate(state, entry, span, placement);
      }
    }
    if (leaf) buffer.forget(state, ctx.spanId);
    if (state.late.size > 0) this._checkLateRuns(state);
    this._releaseIfIdle(state);
    return view;
  }

  private _endingSampledOut(
    state: TraceState,
    span: ReadableSpan,
    spanId: string,
    placement: Placement,
  ): ReadableSpan | undefined {
    // Ordinary spans (not followed out of the sample) and spans refused when they started
    // (span limits: counted then) have nothing to do now.
    const held = this._buffer.unfollow(state, span);
    if (held === undefined) return undefined;
    let view: ReadableSpan | undefined;
    const isAgent = held.spanId === spanId && held !== NO_SCOPE;
    if (isAgent) {
      held.open = false;
      // The agent that started before this one and is still open takes its place.
      if (state.lastAgent === held) {
        let above = held.agent;
        while (above !== undefined && !above.open) above = above.agent;
        state.lastAgent = above;
      }
      const nested = held.agent !== undefined;
      if (!nested || !this._allRulesRootOnly) {
        const identity = spanIdentity(span, nested, this._rulesReadAttributes);
        if (state.mode === TraceMode.SAMPLED_OUT) {
          view = this._runs.skipped(
            identity,
            subjectOf(span, identity.agent),
            span,
            placement,
            'sampled_out',
          );
        } else if (matchRules(identity, this._policy).length > 0) {
          // Matched no rule when it started, one now: its spans were not held.
          this._problems.report(
            'matched_after_start',
            `agent span ${spanId} matched no rule when it started and matches one as it ends (attributes set later): its run gets an incomplete_trace record`,
          );
          view = this._runs.skipped(
            identity,
            subjectOf(span, identity.agent),
            span,
            placement,
            'incomplete_trace',
          );
        }
      }
    } else if (held.role === SpanRole.TOOL && this._live.enabled) {
      this._live.toolEnded(state.traceId, held.agent, span, spanId);
    }
    if (isAgent) this._buffer.forget(state, spanId);
    else this._buffer.releaseScope(state);
    state.openCount--;
    this._buffer.touch(state);
    this._releaseIfIdle(state);
    return view;
  }

  /** An agent span of an evicted trace ends: its run gets an `incomplete_trace` record, no verdict. */
  private _endedAfterEviction(
    tombstone: Tombstone,
    span: ReadableSpan,
    spanId: string,
    placement: Placement,
  ): ReadableSpan | undefined {
    this._buffer.touchTombstone(tombstone);
    const known = tombstone.openAgents.get(spanId);
    if (known === undefined && spanRole(span.name, span.attributes) !== SpanRole.AGENT) return undefined;
    tombstone.openAgents.delete(spanId);
    const nested = known ?? tombstone.openAgents.size > 0;
    if (nested && this._allRulesRootOnly) return undefined;
    const identity = spanIdentity(span, nested, this._rulesReadAttributes);
    return this._runs.skipped(identity, subjectOf(span, identity.agent), span, placement, 'incomplete_trace');
  }

  /** The run of an agent span in a trace that lost spans to the limits: a record, not a verdict that could be false. */
  private _recordIncomplete(
    state: TraceState,
    span: ReadableSpan,
    spanId: string,
    placement: Placement,
    nested = this._parentHasAgent(state, parentIdOf(span)),
  ): ReadableSpan | undefined {
    this._buffer.markEvaluated(state, spanId);
    if (nested && this._allRulesRootOnly) return undefined;
    const identity = spanIdentity(span, nested, this._rulesReadAttributes);
    return this._runs.skipped(identity, subjectOf(span, identity.agent), span, placement, 'incomplete_trace');
  }

  /** Holds a span first seen as it ends: out of start order in the map. */
  private _holdLate(state: TraceState, span: ReadableSpan, spanId: string, role: SpanRole): SpanEntry {
    const parentId = parentIdOf(span);
    const entry = newEntry(span, spanId, parentId, role);
    entry.outOfOrder = true;
    // Its held children were waiting for it: it links them to what is above.
    entry.needed = state.awaiting.has(spanId);
    entry.t0 = highResolutionStart(span, false);
    if (role === SpanRole.TOOL) state.hasTool = true;
    const parent = parentId === undefined ? undefined : state.spans.get(parentId);
    if (parent !== undefined) {
      entry.parent = parent;
      entry.agent = parent.role === SpanRole.AGENT ? parent : parent.agent;
      // Balanced by `entryClosed` as the span's end is handled, right after.
      childStarted(parent);
    } else if (parentId !== undefined && span.parentSpanContext?.isRemote !== true) {
      // Its parent is still open: keep the trace until the parent ends and is held too.
      this._buffer.awaitParent(state, parentId);
    }
    this._buffer.hold(state, entry);
    state.openCount++;
    if (entry.needed && entry.agent !== undefined) this._adoptWaitingChildren(state, entry);
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
      child.parent = entry;
      child.agent = entry.agent;
      // An open child keeps its new parent, and so its agent, active until it ends.
      if (child.open) childStarted(entry);
      if (child.role !== SpanRole.TOOL || !this._live.enabled) continue;
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
    // The outermost chain span holding tool spans is an implicit run.
    if (entry.role !== SpanRole.CHAIN || !state.hasTool) return false;
    return entry.parentId === undefined || !state.spans.has(entry.parentId);
  }

  /** Nearest agent above, by pointer when the parent was held at start, else by walking the held parents (late traces). */
  private _hasAgentAbove(state: TraceState, entry: SpanEntry): boolean {
    if (entry.agent !== undefined) return true;
    if (entry.parent !== undefined) return false;
    return this._parentHasAgent(state, entry.parentId);
  }

  private _parentHasAgent(state: TraceState, parentId: string | undefined): boolean {
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

  /** Nothing open, nothing waiting: the trace's runs are judged and its spans can go. */
  private _releaseIfIdle(state: TraceState): void {
    if (state.openCount === 0 && state.late.size === 0 && state.awaiting.size === 0)
      this._buffer.release(state);
  }

  // -------------------------------------------------------------------------------------
  // Evaluation

  /**
   * Rebuilds the run of `span`, judges it and emits the verdict where `placement` says. When
   * the outermost span closes, the runs that had no turn of their own are judged too.
   */
  private _evaluate(
    state: TraceState,
    entry: SpanEntry,
    span: ReadableSpan,
    placement: Placement,
  ): ReadableSpan | undefined {
    const spanId = entry.spanId;
    const nested = this._hasAgentAbove(state, entry);
    if (nested && this._allRulesRootOnly) return undefined;
    this._buffer.markEvaluated(state, spanId);
    if (
      this._sampledOutFastPath &&
      !state.seenLate &&
      !isSampled(state.traceId, this._policy.sampling.ratio)
    ) {
      // Out of the sample (a trace that did not start with an agent span): no rebuild.
      const identity = spanIdentity(span, nested, this._rulesReadAttributes);
      return this._runs.skipped(identity, subjectOf(span, identity.agent), span, placement, 'sampled_out');
    }
    const single = !state.seenLate && state.agents === 1 && state.looseTools === 0;
    if (single && !this._ruleForAnnounced(span, nested)) {
      // The only run the trace can hold is this one: no rule for its identity, no rebuild.
      const identity = spanIdentity(span, nested, this._rulesReadAttributes);
      if (matchRules(identity, this._policy).length === 0) return undefined;
    }
    const reconstructed = rebuildRuns(state);
    for (const problem of reconstructed.problems) {
      this._problems.report(`reconstruction_${problem.code}`, `trace ${state.traceId}: ${problem.message}`);
    }
    const run = findRun(reconstructed.runs, spanId);
    let view: ReadableSpan | undefined;
    if (run !== undefined) view = this._judgeRun(state, run, span, placement, single);
    if (!nested) {
      // The outermost span closes: judge the runs that had no turn of their own, such as an
      // agent under a wrapper span (OpenAI Agents' "Agent workflow"), a handoff target, or an
      // implicit run inside a chain. Their spans have ended, so results go on evaluate spans.
      for (const other of runsInOrder(reconstructed.runs)) {
        if (other === run || other.end === undefined || state.evaluated.has(other.spanId)) continue;
        this._buffer.markEvaluated(state, other.spanId);
        this._judgeRun(state, other, contextOnly(state.traceId, other.spanId), 'span');
      }
    }
    return view;
  }

  /** `only`: the run is the only one its trace can hold, so its executions are counted without remembering them. */
  private _judgeRun(
    state: TraceState,
    run: AgentRun,
    span: ReadableSpan,
    placement: Placement,
    only = false,
  ): ReadableSpan | undefined {
    if (state.seenLate) this._live.replay(run);
    const outcome = this._runs.judge(run, span, placement);
    if (outcome.matched) this._countExecutions(state, run, only);
    return outcome.view;
  }

  /** Tool executions of a judged run and its members, each counted once per trace. */
  private _countExecutions(state: TraceState, run: AgentRun, only: boolean): void {
    if (only && run.children.length === 0) {
      for (const execution of run.executions)
        this._metrics.recordToolExecution(execution.name, execution.status, run.agent);
      return;
    }
    for (const member of runsInOrder([run])) {
      for (const execution of member.executions) {
        if (this._buffer.counted(state, execution.spanId)) continue;
        this._metrics.recordToolExecution(execution.name, execution.status, member.agent);
      }
    }
  }

  private _waitForLateSpans(state: TraceState, entry: SpanEntry, span: ReadableSpan): void {
    if (state.late.has(entry.spanId)) return;
    this._buffer.markEvaluated(state, entry.spanId);
    let resolve!: () => void;
    const done = new Promise<void>((r) => {
      resolve = r;
    });
    const late: LateRun = {
      span,
      entry,
      done,
      resolve,
      timer: setTimeout(() => this._finishLate(state, late, false), this._lateSpanTimeoutMs),
    };
    late.timer.unref?.();
    this._buffer.addLate(state, entry.spanId, late);
    this._judges.track(done);
  }

  private _checkLateRuns(state: TraceState): void {
    for (const late of state.late.values()) {
      if (late.entry.activeChildren === 0) this._finishLate(state, late, false);
    }
  }

  /**
   * Judges a run that waited for late spans; its verdict goes on a new `evaluate` span. Out of
   * the SDK's hook (a microtask) unless `now`: emitting a span from inside another span's
   * `onEnd` would re-enter the SDK.
   */
  private _finishLate(state: TraceState, late: LateRun, now: boolean): void {
    const spanId = late.entry.spanId;
    if (state.late.get(spanId) !== late) return;
    state.late.delete(spanId);
    clearTimeout(late.timer);
    const finish = () => {
      try {
        this._evaluate(state, late.entry, late.span, 'span');
      } catch (error) {
        this._problems.report('late', 'late evaluation failed', error);
      } finally {
        late.resolve();
        this._releaseIfIdle(state);
      }
    };
    if (now) finish();
    else queueMicrotask(finish);
  }

  /**
   * A trace is evicted (limits, inactivity): runs waiting for late spans, and the ended runs
   * of a trace recognised only at span ends, get `incomplete_trace` records; open agent runs
   * get theirs when their span ends (the tombstone remembers them).
   */
  private _evicting(state: TraceState): void {
    for (const late of [...state.late.values()]) {
      state.late.delete(late.entry.spanId);
      clearTimeout(late.timer);
      late.resolve();
      const nested = this._hasAgentAbove(state, late.entry);
      if (nested && this._allRulesRootOnly) continue;
      const identity = spanIdentity(late.span, nested, this._rulesReadAttributes);
      this._runs.skipped(
        identity,
        subjectOf(late.span, identity.agent),
        contextOnly(state.traceId, late.entry.spanId),
        'span',
        'incomplete_trace',
      );
    }
    if (!state.seenLate) return;
    for (const run of runsInOrder(rebuildRuns(state).runs)) {
      if (run.end === undefined || state.evaluated.has(run.spanId)) continue;
      this._buffer.markEvaluated(state, run.spanId);
      this._runs.skipped(
        runIdentity(run),
        { traceId: run.traceId, spanId: run.spanId, agent: run.agent },
        contextOnly(state.traceId, run.spanId),
        'span',
        'incomplete_trace',
      );
    }
  }

  /**
   * A trace first seen as its spans ended waits for its outermost span before judging; when
   * that span will not end here (shut down), the runs that did end are judged now.
   */
  private _judgeEndedRuns(state: TraceState): void {
    if (!state.seenLate || state.incomplete) return;
    try {
      for (const run of runsInOrder(rebuildRuns(state).runs)) {
        if (run.end === undefined || state.evaluated.has(run.spanId)) continue;
        this._buffer.markEvaluated(state, run.spanId);
        this._judgeRun(state, run, contextOnly(state.traceId, run.spanId), 'span');
      }
    } catch (error) {
      this._problems.report('judge_ended', 'judging the ended runs of an unfinished trace failed', error);
    }
  }

  private _sweep(): void {
    try {
      this._buffer.sweep();
    } catch (error) {
      this._problems.report('sweep', 'trace eviction failed', error);
    }
  }

  // -------------------------------------------------------------------------------------
  // Lifecycle

  private async _shutdown(): Promise<void> {
    clearInterval(this._sweeper);
    // Everything below runs before the first await: exporting processors shut down in
    // parallel with this one, and must still receive what is emitted here.
    for (const state of [...this._buffer.traces()]) {
      for (const late of [...state.late.values()]) this._finishLate(state, late, true);
      this._judgeEndedRuns(state);
    }
    this._judges.abortAll(new Error('toolwatch processor shut down'));
    this._isShutdown = true;
    this._problems.dropped(
      'shutdown',
      'the processor shut down while agent traces were open',
      this._buffer.clear(),
    );
    await this._judges.drain();
    await this._writer.flush();
    await this._next?.shutdown();
    this._problems.summarize();
  }
}

/** Whether the span started after `since` (both on `performance.now()`'s clock), so went through `onStart` while its trace was followed. */
function startedSince(span: ReadableSpan, since: number): boolean {
  const start = (span as unknown as { _performanceStartTime?: unknown })._performanceStartTime;
  return typeof start === 'number' && start >= since;
}

function subjectOf(span: ReadableSpan, agent: string) {
  const ctx = span.spanContext();
  return { traceId: ctx.traceId, spanId: ctx.spanId, agent };
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (Number.isFinite(value) && value > 0) return value;
  diag.warn(`toolwatch: ${name} must be a positive number, using ${fallback}`);
  return fallback;
}
