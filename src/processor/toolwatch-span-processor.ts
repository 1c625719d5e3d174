import type { Attributes, Context, MeterProvider, SpanContext, TracerProvider } from '@opentelemetry/api';
import { context, diag, ROOT_CONTEXT, TraceFlags, trace } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { classifySpan } from '../conventions/classify.js';
import { fromReadableSpan, hrTimeToMs } from '../conventions/from-readable-span.js';
import { verdictAttributes } from '../emission/attributes.js';
import { addEvaluationEvents } from '../emission/events.js';
import { ToolwatchMetrics } from '../emission/metrics.js';
import { completeRunAsync, evaluateRunSync, finalizeVerdict } from '../evaluation/evaluate-run.js';
import { JudgeLimiter } from '../evaluation/judge-limiter.js';
import { matchRules } from '../evaluation/match-rules.js';
import { isSampled } from '../evaluation/sampling.js';
import { reconstructTrace } from '../reconstruction/reconstruct-trace.js';
import { errorResult } from '../scorers/scorer-result.js';
import {
  ATTR_AI_TOOL_CALL_ARGS,
  ATTR_AI_TOOL_CALL_INPUT,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_MASTRA_TOOL_INPUT,
  ATTR_OI_INPUT_VALUE,
  ATTR_TRACELOOP_ENTITY_INPUT,
} from '../semconv.js';
import type {
  AgentRun,
  JudgeFunction,
  MisuseEvent,
  Policy,
  ReconstructedTrace,
  Rule,
  ScorerResult,
  SpanLike,
  ToolExecution,
  Verdict,
} from '../types.js';
import { mergeAttributes } from '../util/merge-attributes.js';
import { decoratedSpan } from './decorated-span.js';
import { type LiveAgent, LiveMisuseMonitor } from './live-misuse.js';
import { raceAbort } from './race-abort.js';
import { findRun, walkRuns } from './run-tree.js';
import { agentNameOf, lateSpanRole, SpanRole, spanRole, toolNameOf } from './span-role.js';

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
  /** Spans held per agent trace; further spans are dropped (and counted). Default: 10000. */
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

/** One span the processor holds for a trace with agent activity. */
interface SpanEntry {
  span: ReadableSpan;
  parentId: string | undefined;
  role: SpanRole;
  open: boolean;
  /** An ordinary span that sits between agent-related spans: reconstruction needs it to link them. */
  needed: boolean;
  like?: SpanLike;
  live?: LiveAgent | null;
  /** High-resolution start (epoch ms) taken in `onStart`. */
  t0?: number;
  /** First seen when it ended, so its place in the map says nothing of its start. */
  outOfOrder?: boolean;
}

interface LateRun {
  span: ReadableSpan;
  timer: ReturnType<typeof setTimeout>;
  done: Promise<void>;
  resolve: () => void;
}

interface TraceState {
  traceId: string;
  spans: Map<string, SpanEntry>;
  openCount: number;
  lastActivity: number;
  hasTool: boolean;
  /** The trace was first recognised when one of its spans ended (no agent-related span was known at start). */
  seenLate: boolean;
  evaluated: Set<string>;
  /** Execution spans already counted in `toolwatch.tool.executions`. */
  counted: Set<string>;
  /**
   * Untracked local parents of tracked tool/LLM spans: maybe agent spans whose attributes
   * come later. The trace is kept until they end.
   */
  awaiting: Set<string>;
  late: Map<string, LateRun>;
}

/** Where a verdict's telemetry goes: the ending span itself, a decorated view, or a new span. */
type Emission = 'inline' | 'view' | 'span';

interface Decoration {
  attributes: Attributes;
  results: ScorerResult[];
}

const DEFAULTS = {
  lateSpanTimeoutMs: 5000,
  maxTraces: 10_000,
  maxSpansPerTrace: 10_000,
  maxBufferedSpans: 100_000,
  traceTtlMs: 300_000,
  judgeTimeoutMs: 60_000,
} as const;

const TIME_ORIGIN = performance.timeOrigin;

/**
 * Scorers and judges run here: tracing suppressed, and none of the application's context
 * (its active span, its baggage) leaks into what they do. Built once, not per run.
 */
const UNTRACED = suppressTracing(ROOT_CONTEXT);

// Most traces never need these; they are allocated on first write.
const NO_SPANS: Set<string> = new Set();
const NO_LATE_RUNS: Map<string, LateRun> = new Map();

const ARG_KEYS = [
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_AI_TOOL_CALL_ARGS,
  ATTR_AI_TOOL_CALL_INPUT,
  ATTR_OI_INPUT_VALUE,
  ATTR_MASTRA_TOOL_INPUT,
  ATTR_TRACELOOP_ENTITY_INPUT,
] as const;

/**
 * Judges every agent run as its agent span ends and writes the verdict onto that span, so
 * every exporter sees it. Register it beside the exporting processor, in any order:
 *
 * ```ts
 * const toolwatch = new ToolwatchSpanProcessor({ policy, meterProvider, onMisuse });
 * new BasicTracerProvider({ spanProcessors: [toolwatch, new BatchSpanProcessor(exporter)] });
 * ```
 *
 * Where the verdict goes:
 * - on the agent span itself, written in `onEnding` (the first matching rule);
 * - on a new `evaluate {agent}` span parented to (and linked to) the run span, for every
 *   further matching rule, for judges' results, for runs that waited for late spans, and for
 *   runs whose spans were recognised only as they ended (OpenInference bridges write every
 *   attribute at the end; such traces are judged when their outermost span ends);
 * - in wrapping mode (`next`, SDKs without `onEnding`), on the view of the agent span handed
 *   to `next`.
 *
 * Ordinary spans (HTTP, DB) in traces without agent activity cost a few attribute reads (and
 * one map lookup while some agent trace is held). Hooks never throw: problems go to `diag`, once per kind, then are counted.
 */
export class ToolwatchSpanProcessor implements SpanProcessor {
  private readonly _policy: Policy;
  private readonly _metrics: ToolwatchMetrics;
  private readonly _live: LiveMisuseMonitor;
  private readonly _limiter: JudgeLimiter;
  private readonly _next: SpanProcessor | undefined;
  private readonly _options: ToolwatchSpanProcessorOptions;
  private readonly _lateSpanTimeoutMs: number;
  private readonly _maxTraces: number;
  private readonly _maxSpansPerTrace: number;
  private readonly _maxBufferedSpans: number;
  /** Spans held in all trace states. */
  private _held = 0;
  private readonly _traceTtlMs: number;
  private readonly _judgeTimeoutMs: number;
  private readonly _allRulesRootOnly: boolean;
  private readonly _rulesReadAttributes: boolean;
  /** Out-of-sample runs need no rebuild unless judges escalate on ERROR spans, which needs the whole run. */
  private readonly _sampledOutFastPath: boolean;
  private readonly _traces = new Map<string, TraceState>();
  /** Recently evicted traces: their late spans must not start a new, partial evaluation. */
  private readonly _evicted = new Set<string>();
  private readonly _pending = new Set<Promise<unknown>>();
  private readonly _problems = new Map<string, number>();
  private readonly _sweeper: ReturnType<typeof setInterval>;
  private readonly _sweepPeriodMs: number;
  /** Epoch ms of the last sweep: a clock read per span would cost more than TTL precision needs. */
  private _clock = Date.now();
  private readonly _abort = new AbortController();
  /** Set by the first `onEnding` call: the SDK supports it, so agent spans are written in place. */
  private _sdkCallsOnEnding = false;
  private _shutdownPromise: Promise<void> | undefined;
  private _isShutdown = false;
  private _emittedSpans = false;
  private _flushing = false;

  constructor(options: ToolwatchSpanProcessorOptions) {
    this._options = options;
    this._policy = options.policy;
    this._next = options.next;
    this._lateSpanTimeoutMs = positive(
      options.lateSpanTimeoutMs,
      DEFAULTS.lateSpanTimeoutMs,
      'lateSpanTimeoutMs',
    );
    this._maxTraces = positive(options.maxTraces, DEFAULTS.maxTraces, 'maxTraces');
    this._maxSpansPerTrace = positive(
      options.maxSpansPerTrace,
      DEFAULTS.maxSpansPerTrace,
      'maxSpansPerTrace',
    );
    this._maxBufferedSpans = positive(
      options.maxBufferedSpans,
      DEFAULTS.maxBufferedSpans,
      'maxBufferedSpans',
    );
    this._traceTtlMs = positive(options.traceTtlMs, DEFAULTS.traceTtlMs, 'traceTtlMs');
    this._judgeTimeoutMs = positive(options.judgeTimeoutMs, DEFAULTS.judgeTimeoutMs, 'judgeTimeoutMs');
    this._metrics = new ToolwatchMetrics({ meterProvider: options.meterProvider, policy: options.policy });
    this._live = new LiveMisuseMonitor(options.policy, (event) => this._reportMisuse(event));
    this._limiter = new JudgeLimiter(options.policy.judge);
    this._allRulesRootOnly = options.policy.rules.every((rule) => rule.match.rootOnly);
    this._rulesReadAttributes = options.policy.rules.some((rule) => rule.match.attributes !== undefined);
    this._sampledOutFastPath = !options.policy.judge.escalateOn.includes('error_span');
    this._sweepPeriodMs = Math.max(10, Math.min(this._traceTtlMs / 2, 30_000));
    this._sweeper = setInterval(() => this._sweep(), this._sweepPeriodMs);
    // The processor must never keep the process alive.
    this._sweeper.unref?.();
  }

  onStart(span: Span, parentContext: Context): void {
    try {
      if (!this._isShutdown) this._onStart(span);
    } catch (error) {
      this._problem('on_start', 'onStart failed', error);
    }
    this._next?.onStart(span, parentContext);
  }

  onEnding(span: Span): void {
    this._sdkCallsOnEnding = true;
    try {
      if (!this._isShutdown) this._onEnding(span);
    } catch (error) {
      this._problem('on_ending', 'onEnding failed', error);
    }
    this._next?.onEnding?.(span);
  }

  onEnd(span: ReadableSpan): void {
    let forwarded = span;
    try {
      if (!this._isShutdown) forwarded = this._onEnd(span);
    } catch (error) {
      this._problem('on_end', 'onEnd failed', error);
    }
    this._next?.onEnd(forwarded);
  }

  /** Waits for pending judges and late evaluations, then flushes what they emitted. */
  async forceFlush(): Promise<void> {
    await this._drain();
    await this._flushEmitted();
    await this._next?.forceFlush();
  }

  /** Idempotent: judges every run still waiting for late spans, drains judges, then shuts `next` down. */
  shutdown(): Promise<void> {
    this._shutdownPromise ??= this._shutdown();
    return this._shutdownPromise;
  }

  // -------------------------------------------------------------------------------------
  // Hooks

  private _onStart(span: Span): void {
    const role = spanRole(span.name, span.attributes);
    // The hot path: ordinary spans while no agent trace is held stop here, before any lookup.
    if (role === SpanRole.NONE && this._traces.size === 0) return;
    const ctx = span.spanContext();
    let state = this._traces.get(ctx.traceId);
    if (state === undefined) {
      // Ordinary spans of traces with no agent activity stop here.
      if (role === SpanRole.NONE) return;
      state = this._createTrace(ctx.traceId);
    }
    if (state.spans.size >= this._maxSpansPerTrace) {
      this._drop('max_spans_per_trace', `trace ${ctx.traceId} holds ${this._maxSpansPerTrace} spans`);
      return;
    }
    const parentId = parentIdOf(span);
    const entry: SpanEntry = {
      span,
      parentId,
      role,
      open: true,
      needed: false,
      t0: highResolutionStart(span),
    };
    // A start time given by the caller (spans replayed by an exporter bridge) is the truth, and
    // the order in which such spans start says nothing.
    if (entry.t0 === undefined) entry.outOfOrder = true;
    state.spans.set(ctx.spanId, entry);
    state.openCount++;
    state.lastActivity = this._clock;
    if (++this._held > this._maxBufferedSpans) this._evictForRoom(state);
    if (role === SpanRole.NONE) return;
    if (role === SpanRole.TOOL) state.hasTool = true;
    if (
      (role === SpanRole.TOOL || role === SpanRole.LLM) &&
      parentId !== undefined &&
      !state.spans.has(parentId) &&
      span.parentSpanContext?.isRemote !== true
    ) {
      if (state.awaiting === NO_SPANS) state.awaiting = new Set();
      state.awaiting.add(parentId);
    }
    // Ordinary spans between agent-related ones are kept so reconstruction can link through them.
    let ancestor = parentId === undefined ? undefined : state.spans.get(parentId);
    while (ancestor !== undefined && ancestor.role === SpanRole.NONE && !ancestor.needed) {
      ancestor.needed = true;
      ancestor = ancestor.parentId === undefined ? undefined : state.spans.get(ancestor.parentId);
    }
    if (role === SpanRole.TOOL && this._live.enabled) this._toolStarted(state, entry, ctx.spanId);
  }

  private _onEnding(span: Span): void {
    if (this._traces.size === 0 && lateSpanRole(span.name, span.attributes) === SpanRole.NONE) return;
    const ctx = span.spanContext();
    let state = this._traces.get(ctx.traceId);
    let entry = state?.spans.get(ctx.spanId);
    if (entry === undefined) {
      const role =
        state === undefined ? lateSpanRole(span.name, span.attributes) : spanRole(span.name, span.attributes);
      if (state === undefined) {
        // Recognised only as it ends: OpenInference bridges write every attribute at the end.
        if (role === SpanRole.NONE || this._evicted.has(ctx.traceId)) return;
        state = this._createTrace(ctx.traceId, true);
      }
      entry = this._trackLate(state, span, ctx.spanId, role);
    } else if (entry.role === SpanRole.NONE) {
      // Attributes set after start can still make a span an agent or a tool.
      entry.role = lateSpanRole(span.name, span.attributes);
      if (entry.role === SpanRole.TOOL) state!.hasTool = true;
    }
    if (state === undefined) return;
    if (!this._judgesAt(state, entry, span)) return;
    if (this._hasOpenDescendant(state, ctx.spanId)) {
      this._waitForLateSpans(state, span);
      return;
    }
    this._evaluate(state, span, 'inline');
  }

  private _onEnd(span: ReadableSpan): ReadableSpan {
    // With `onEnding` (SDK 2.x) every span worth keeping is tracked by now: nothing held, nothing to do.
    if (this._sdkCallsOnEnding && this._traces.size === 0) return span;
    const ctx = span.spanContext();
    let state = this._traces.get(ctx.traceId);
    let entry = state?.spans.get(ctx.spanId);
    if (entry === undefined) {
      // With `onEnding` (SDK 2.x) every span worth keeping is tracked by now.
      if (this._sdkCallsOnEnding || this._evicted.has(ctx.traceId)) return span;
      const role = spanRole(span.name, span.attributes);
      if (state === undefined) {
        if (role === SpanRole.NONE) return span;
        state = this._createTrace(ctx.traceId, true);
      }
      entry = this._trackLate(state, span, ctx.spanId, role);
    }
    if (state === undefined) return span;
    let forwarded = span;
    entry.span = span;
    if (state.awaiting.size > 0) state.awaiting.delete(ctx.spanId);
    if (entry.open) {
      entry.open = false;
      state.openCount--;
    }
    state.lastActivity = this._clock;
    if (entry.role === SpanRole.NONE && !this._sdkCallsOnEnding) {
      entry.role = spanRole(span.name, span.attributes);
      if (entry.role === SpanRole.TOOL) state.hasTool = true;
    }
    if (entry.role === SpanRole.NONE && !entry.needed) {
      // A leaf ordinary span (an HTTP call inside a tool): nothing to reconstruct from it.
      state.spans.delete(ctx.spanId);
      this._held--;
    } else if (entry.role === SpanRole.TOOL && this._live.enabled) {
      this._toolEnded(state, entry, ctx.spanId);
    }
    if (!this._sdkCallsOnEnding && !state.evaluated.has(ctx.spanId) && this._judgesAt(state, entry, span)) {
      if (this._hasOpenDescendant(state, ctx.spanId)) {
        this._waitForLateSpans(state, span);
      } else {
        const decoration = this._evaluate(state, span, this._next ? 'view' : 'span');
        if (decoration)
          forwarded = decoratedSpan(span, decoration.attributes, decoration.results, this._policy.redact);
      }
    }
    if (state.late.size > 0) this._checkLateRuns(state);
    this._releaseIfIdle(state);
    return forwarded;
  }

  // -------------------------------------------------------------------------------------
  // Trace state

  /** Tracks a span first seen as it ends: out of start order in the map. */
  private _trackLate(state: TraceState, span: ReadableSpan, spanId: string, role: SpanRole): SpanEntry {
    const parentId = parentIdOf(span);
    const entry: SpanEntry = {
      span,
      parentId,
      role,
      open: true,
      // Its tracked children were waiting for it: it links them to what is above.
      needed: state.awaiting.has(spanId),
      outOfOrder: true,
    };
    if (entry.needed) state.awaiting.delete(spanId);
    entry.t0 = highResolutionStart(span, false);
    if (role === SpanRole.TOOL) state.hasTool = true;
    if (parentId !== undefined && !state.spans.has(parentId) && span.parentSpanContext?.isRemote !== true) {
      // Its parent is still open: keep the trace until the parent ends and is tracked too.
      if (state.awaiting === NO_SPANS) state.awaiting = new Set();
      state.awaiting.add(parentId);
    }
    state.spans.set(spanId, entry);
    state.openCount++;
    this._held++;
    return entry;
  }

  private _createTrace(traceId: string, seenLate = false): TraceState {
    if (this._traces.size >= this._maxTraces) {
      // Evict the oldest trace rather than refuse the new one: under pressure the oldest is
      // most likely a root that will never end, and refusing would stop all evaluation.
      const oldest = this._traces.values().next().value as TraceState;
      for (const late of oldest.late.values()) this._finishLate(oldest, late);
      this._drop('max_traces', `${this._maxTraces} agent traces are held`, Math.max(1, oldest.spans.size));
      this._evict(oldest);
    }
    const state: TraceState = {
      traceId,
      spans: new Map(),
      openCount: 0,
      lastActivity: this._clock,
      hasTool: false,
      seenLate,
      evaluated: new Set(),
      counted: NO_SPANS,
      awaiting: NO_SPANS,
      late: NO_LATE_RUNS,
    };
    this._traces.set(traceId, state);
    this._metrics.tracesBuffered(1);
    return state;
  }

  /** Nothing open, nothing waiting: the trace's runs are judged and its spans can go. */
  private _releaseIfIdle(state: TraceState): void {
    if (state.openCount === 0 && state.late.size === 0 && state.awaiting.size === 0)
      this._releaseTrace(state);
  }

  private _releaseTrace(state: TraceState): void {
    if (this._traces.get(state.traceId) !== state) return;
    this._traces.delete(state.traceId);
    this._held -= state.spans.size;
    this._metrics.tracesBuffered(-1);
  }

  /** Evicts the oldest traces other than `current` until the span budget holds again. */
  private _evictForRoom(current: TraceState): void {
    for (const oldest of this._traces.values()) {
      if (this._held <= this._maxBufferedSpans) return;
      if (oldest === current) continue;
      for (const late of oldest.late.values()) this._finishLate(oldest, late);
      this._drop('max_buffered_spans', `${this._maxBufferedSpans} spans are held`, oldest.spans.size);
      this._evict(oldest);
    }
  }

  private _evict(state: TraceState): void {
    this._judgeEndedRuns(state);
    this._releaseTrace(state);
    this._evicted.add(state.traceId);
    if (this._evicted.size > this._maxTraces) {
      this._evicted.delete(this._evicted.values().next().value as string);
    }
  }

  /**
   * A trace first seen as its spans ended waits for its outermost span before judging; when
   * that span will not end here (evicted, shut down), the runs that did end are judged now.
   */
  private _judgeEndedRuns(state: TraceState): void {
    if (!state.seenLate || this._policy.rules.length === 0) return;
    try {
      for (const run of walkRuns(this._reconstruct(state, undefined).runs)) {
        if (run.end === undefined || state.evaluated.has(run.spanId)) continue;
        state.evaluated.add(run.spanId);
        this._replayMisuse(run);
        this._judge(state, run, contextOnly(state.traceId, run.spanId), 'span');
      }
    } catch (error) {
      this._problem('judge_ended', 'judging the ended runs of an unfinished trace failed', error);
    }
  }

  /** Evicts traces with no activity for `traceTtlMs`: their roots will never end. */
  private _sweep(): void {
    try {
      const now = Date.now();
      this._clock = now;
      // Activity is stamped with the clock of the last sweep, up to one period early.
      const cutoff = now - this._traceTtlMs - this._sweepPeriodMs;
      for (const state of this._traces.values()) {
        if (state.lastActivity > cutoff) continue;
        if (state.late.size > 0) {
          for (const late of state.late.values()) this._finishLate(state, late);
        }
        this._drop(
          'ttl',
          `agent trace ${state.traceId} had no activity for ${this._traceTtlMs} ms`,
          state.spans.size,
        );
        this._evict(state);
      }
    } catch (error) {
      this._problem('sweep', 'trace eviction failed', error);
    }
  }

  /** Whether the ending of this span is when runs get judged. */
  private _judgesAt(state: TraceState, entry: SpanEntry, span: ReadableSpan): boolean {
    // Spans first seen as they ended: nesting is only known once the outermost span ends, and
    // every run of the trace is judged then.
    if (state.seenLate) return entry.parentId === undefined || span.parentSpanContext?.isRemote === true;
    return this._isRunCandidate(state, entry);
  }

  /** Agent spans are runs; so is the outermost chain span holding tool spans (implicit runs). */
  private _isRunCandidate(state: TraceState, entry: SpanEntry): boolean {
    if (entry.role === SpanRole.AGENT) return true;
    if (entry.role !== SpanRole.CHAIN || !state.hasTool) return false;
    return entry.parentId === undefined || !state.spans.has(entry.parentId);
  }

  private _hasOpenDescendant(state: TraceState, spanId: string): boolean {
    for (const [id, entry] of state.spans) {
      if (!entry.open || id === spanId) continue;
      let parentId = entry.parentId;
      while (parentId !== undefined) {
        if (parentId === spanId) return true;
        parentId = state.spans.get(parentId)?.parentId;
      }
    }
    return false;
  }

  // -------------------------------------------------------------------------------------
  // Evaluation

  /**
   * Rebuilds the run of `span`, judges it with the deterministic scorers, emits the verdict
   * where `emission` says, and starts its judges. Returns what a decorated view must carry.
   */
  private _evaluate(state: TraceState, span: ReadableSpan, emission: Emission): Decoration | undefined {
    const spanId = span.spanContext().spanId;
    if (!this._mayMatch(state, span)) return undefined;
    state.evaluated.add(spanId);
    if (this._sampledOutFastPath && !isSampled(state.traceId, this._policy.sampling.ratio)) {
      return this._evaluateSampledOut(state, span, emission);
    }
    const reconstructed = this._reconstruct(state, span);
    const run = findRun(reconstructed.runs, spanId);
    if (run !== undefined && state.seenLate) this._replayMisuse(run);
    const decoration = run === undefined ? undefined : this._judge(state, run, span, emission);
    if (!hasAgentAncestor(state, parentIdOf(span))) {
      // The outermost span closes: judge the runs that had no turn of their own, such as an
      // agent under a wrapper span (OpenAI Agents' "Agent workflow"), a handoff target, or an
      // implicit run inside a chain. Their spans have ended, so results go on evaluate spans.
      for (const other of walkRuns(reconstructed.runs)) {
        if (other === run || other.end === undefined || state.evaluated.has(other.spanId)) continue;
        state.evaluated.add(other.spanId);
        if (state.seenLate) this._replayMisuse(other);
        this._judge(state, other, contextOnly(state.traceId, other.spanId), 'span');
      }
    }
    return decoration;
  }

  private _judge(
    state: TraceState,
    run: AgentRun,
    span: ReadableSpan,
    emission: Emission,
  ): Decoration | undefined {
    const rules = matchRules(run, this._policy);
    if (rules.length === 0) return undefined;
    this._countExecutions(state, run);
    return this._evaluateRules(run, rules, span, emission);
  }

  /** Each matching rule's verdict; the first goes on the run span, the others on evaluate spans. */
  private _evaluateRules(
    run: AgentRun,
    rules: Rule[],
    span: ReadableSpan,
    emission: Emission,
  ): Decoration | undefined {
    let decoration: Decoration | undefined;
    for (let index = 0; index < rules.length; index++) {
      const emitted = this._evaluateRule(run, rules[index]!, span, emission, index === 0);
      decoration ??= emitted;
    }
    return decoration;
  }

  /** Skips reconstruction for runs no rule can match: nested runs when every rule is root_only. */
  private _mayMatch(state: TraceState, span: ReadableSpan): boolean {
    if (this._policy.rules.length === 0) return false;
    return !this._allRulesRootOnly || !hasAgentAncestor(state, parentIdOf(span));
  }

  /**
   * A run out of the policy's sample gets its record (every scorer `skipped: sampled_out`)
   * without being rebuilt: rule matching only needs the agent span itself, so runs out of
   * the sample skip reconstruction and scoring, the bulk of the cost.
   */
  private _evaluateSampledOut(
    state: TraceState,
    span: ReadableSpan,
    emission: Emission,
  ): Decoration | undefined {
    const stub = this._stubRun(state, span);
    return this._evaluateRules(stub, matchRules(stub, this._policy), span, emission);
  }

  /** The fields of a run that rule matching and skipped records read, from the agent span alone. */
  private _stubRun(state: TraceState, span: ReadableSpan): AgentRun {
    const context = span.spanContext();
    const like = fromReadableSpan(span);
    const facts = classifySpan(like).adapter?.agent(like);
    return {
      agent: facts?.name ?? agentNameOf(span.name, span.attributes),
      ...(facts?.agentId !== undefined ? { agentId: facts.agentId } : {}),
      traceId: context.traceId,
      spanId: context.spanId,
      implicit: false,
      ...(hasAgentAncestor(state, parentIdOf(span)) ? { parent: {} as AgentRun } : {}),
      children: [],
      executions: [],
      requests: [],
      calls: [],
      history: [],
      start: like.startTime,
      status: like.status.code,
      // Merging in the resource costs a copy per run; only `match.attributes` reads it.
      attributes: this._rulesReadAttributes
        ? mergeAttributes(span.resource?.attributes, span.attributes)
        : span.attributes,
      hasErrorSpan: false,
    };
  }

  /** Tool executions of a watched run and its members, each counted once per trace. */
  private _countExecutions(state: TraceState, run: AgentRun): void {
    for (const execution of run.executions) {
      if (state.counted.has(execution.spanId)) continue;
      if (state.counted === NO_SPANS) state.counted = new Set();
      state.counted.add(execution.spanId);
      this._metrics.recordToolExecution(execution.name, execution.status, run.agent);
    }
    for (const child of run.children) this._countExecutions(state, child);
  }

  private _evaluateRule(
    run: AgentRun,
    rule: Rule,
    span: ReadableSpan,
    emission: Emission,
    primary: boolean,
  ): Decoration | undefined {
    let evaluation: ReturnType<typeof evaluateRunSync>;
    try {
      // Arguments passed through, not captured: no closure per run.
      evaluation = context.with(UNTRACED, evaluateRunSync, undefined, run, rule, this._policy);
    } catch (error) {
      this._problem('evaluate', `evaluating rule ${rule.name} failed`, error);
      return undefined;
    }
    const { verdict } = evaluation;
    for (const result of verdict.results) {
      this._metrics.recordResult(result, run.agent, rule.name);
      if (result.label === 'error') {
        this._problem(
          `scorer_error_${result.scorer}`,
          `scorer ${result.scorer} failed: ${result.reason ?? ''}`,
        );
      }
    }
    // Several matching rules: the first one owns the span's summary attributes, the others
    // are emitted on their own `evaluate` span so that no attribute is overwritten.
    const where: Emission = primary ? emission : 'span';
    const decoration: Decoration = { attributes: verdictAttributes(verdict), results: verdict.results };
    if (where === 'inline') {
      const writable = span as Span;
      writable.setAttributes(decoration.attributes);
      addEvaluationEvents(writable, verdict.results, this._policy.redact);
    } else if (where === 'span') {
      this._emitEvaluationSpan(span.spanContext(), run.agent, decoration.attributes, verdict.results);
    }
    if (evaluation.pending.length === 0) {
      this._deliverVerdict(verdict);
    } else {
      this._track(this._completeAsync(run, rule, span.spanContext(), evaluation));
    }
    return where === 'view' ? decoration : undefined;
  }

  private async _completeAsync(
    run: AgentRun,
    rule: Rule,
    runSpan: SpanContext,
    evaluation: ReturnType<typeof evaluateRunSync>,
  ): Promise<void> {
    const abort = new AbortController();
    const onShutdownAbort = () => abort.abort(this._abort.signal.reason);
    this._abort.signal.addEventListener('abort', onShutdownAbort, { once: true });
    const timer = setTimeout(
      () => abort.abort(new Error(`judge timed out after ${this._judgeTimeoutMs} ms`)),
      this._judgeTimeoutMs,
    );
    timer.unref?.();
    let extra: ScorerResult[];
    try {
      const judged = context.with(UNTRACED, () =>
        completeRunAsync(run, rule, this._policy, evaluation, {
          judges: this._options.judges,
          limiter: this._limiter,
          signal: abort.signal,
        }),
      );
      extra = await raceAbort(judged, abort.signal);
    } catch (error) {
      this._problem('judge', `judges of rule ${rule.name} failed`, error);
      extra = evaluation.pending.map((scorer) => errorResult(scorer, error));
    } finally {
      clearTimeout(timer);
      this._abort.signal.removeEventListener('abort', onShutdownAbort);
    }
    const pendingNames = new Set(evaluation.pending.map((scorer) => scorer.name));
    for (const result of extra) {
      this._metrics.recordResult(result, run.agent, rule.name);
      if (!pendingNames.has(result.scorer)) continue;
      if (result.label === 'skipped') {
        if (result.reason === 'budget') this._metrics.recordJudgeCall(result.scorer, 'skipped_budget');
      } else {
        this._metrics.recordJudgeCall(result.scorer, result.label === 'error' ? 'error' : 'ok');
      }
    }
    const final = finalizeVerdict(evaluation.verdict, extra, rule);
    this._emitEvaluationSpan(runSpan, run.agent, verdictAttributes(final), extra);
    this._deliverVerdict(final);
  }

  /** Rebuilds the trace from the spans held, with `span` (when given) as it is ending now. */
  private _reconstruct(state: TraceState, span: ReadableSpan | undefined): ReconstructedTrace {
    const spanId = span?.spanContext().spanId;
    const spans: SpanLike[] = [];
    let ownSeen = false;
    let previous = Number.NEGATIVE_INFINITY;
    for (const [id, entry] of state.spans) {
      let like: SpanLike;
      if (span !== undefined && id === spanId) {
        like = toSpanLike(entry, span, true);
        ownSeen = true;
      } else if (entry.role === SpanRole.NONE && !entry.needed) {
        continue;
      } else if (entry.open) {
        // Open ancestors place the run (nested or not); open descendants are incomplete calls.
        like = toSpanLike(entry, entry.span, false);
      } else {
        entry.like ??= toSpanLike(entry, entry.span, false);
        like = entry.like;
      }
      // Spans tracked from their start sit in the map in start order: a tie on the clock is
      // broken the way the application ran them.
      if (!entry.outOfOrder) {
        if (like.startTime <= previous) {
          const shift = previous + 0.001 - like.startTime;
          like.startTime += shift;
          if (like.endTime !== undefined) like.endTime += shift;
        }
        previous = like.startTime;
      }
      spans.push(like);
    }
    if (span !== undefined && !ownSeen) {
      const own = fromReadableSpan(span);
      own.endTime = hrTimeToMs(span.endTime);
      spans.push(own);
    }
    return reconstructTrace(spans);
  }

  private _waitForLateSpans(state: TraceState, span: ReadableSpan): void {
    const spanId = span.spanContext().spanId;
    if (state.late.has(spanId)) return;
    state.evaluated.add(spanId);
    let resolve!: () => void;
    const done = new Promise<void>((r) => {
      resolve = r;
    });
    const late: LateRun = {
      span,
      done,
      resolve,
      timer: setTimeout(() => this._finishLate(state, late), this._lateSpanTimeoutMs),
    };
    late.timer.unref?.();
    if (state.late === NO_LATE_RUNS) state.late = new Map();
    state.late.set(spanId, late);
    this._track(done);
  }

  private _checkLateRuns(state: TraceState): void {
    for (const [spanId, late] of state.late) {
      if (!this._hasOpenDescendant(state, spanId)) this._finishLate(state, late);
    }
  }

  /** Judges a run that waited for late spans; its verdict goes on a new `evaluate` span. */
  private _finishLate(state: TraceState, late: LateRun): void {
    const spanId = late.span.spanContext().spanId;
    if (state.late.get(spanId) !== late) return;
    state.late.delete(spanId);
    clearTimeout(late.timer);
    // Out of the SDK's hook: emitting a span from inside another span's `onEnd` would re-enter it.
    queueMicrotask(() => {
      try {
        this._evaluate(state, late.span, 'span');
      } catch (error) {
        this._problem('late', 'late evaluation failed', error);
      } finally {
        late.resolve();
        this._releaseIfIdle(state);
      }
    });
  }

  // -------------------------------------------------------------------------------------
  // Live misuse

  private _liveAgentsOf(state: TraceState, entry: SpanEntry): LiveAgent[] {
    const agents: LiveAgent[] = [];
    let parentId = entry.parentId;
    while (parentId !== undefined) {
      const ancestor = state.spans.get(parentId);
      if (ancestor === undefined) break;
      if (ancestor.role === SpanRole.AGENT && ancestor.open) {
        if (ancestor.live === undefined) ancestor.live = this._watchAgent(state, ancestor);
        if (ancestor.live) agents.push(ancestor.live);
      }
      parentId = ancestor.parentId;
    }
    return agents;
  }

  private _watchAgent(state: TraceState, entry: SpanEntry): LiveAgent | null {
    const stub = this._stubRun(state, entry.span);
    return (
      this._live.watch({
        agent: stub.agent,
        spanId: stub.spanId,
        traceId: state.traceId,
        attributes: stub.attributes,
        nested: stub.parent !== undefined,
      }) ?? null
    );
  }

  private _toolStarted(state: TraceState, entry: SpanEntry, spanId: string): void {
    const tool = toolNameOf(entry.span.name, entry.span.attributes);
    if (tool === undefined) return;
    for (const agent of this._liveAgentsOf(state, entry)) this._live.toolStarted(agent, tool, spanId);
  }

  private _toolEnded(state: TraceState, entry: SpanEntry, spanId: string): void {
    const attributes = entry.span.attributes;
    const tool = toolNameOf(entry.span.name, attributes);
    if (tool === undefined) return;
    let args: unknown;
    for (const key of ARG_KEYS) {
      args = attributes[key];
      if (args !== undefined) break;
    }
    for (const agent of this._liveAgentsOf(state, entry)) this._live.toolEnded(agent, tool, args, spanId);
  }

  /**
   * Tool names were unknown while the run went on (every attribute came at span end), so the
   * live checks run now, on the rebuilt run, still before its verdict is delivered.
   */
  private _replayMisuse(run: AgentRun): void {
    if (!this._live.enabled) return;
    const agent = this._live.watch({
      agent: run.agent,
      spanId: run.spanId,
      traceId: run.traceId,
      attributes: run.attributes,
      nested: run.parent !== undefined,
    });
    if (agent === undefined) return;
    const executions: ToolExecution[] = [];
    const collect = (r: AgentRun) => {
      executions.push(...r.executions);
      for (const child of r.children) collect(child);
    };
    collect(run);
    executions.sort((a, b) => a.start - b.start);
    for (const execution of executions) {
      this._live.toolStarted(agent, execution.name, execution.spanId);
      this._live.toolEnded(agent, execution.name, execution.args ?? execution.argsRaw, execution.spanId);
    }
  }

  private _reportMisuse(event: MisuseEvent): void {
    this._metrics.recordMisuse(event.kind, event.tool, event.agent, event.rule);
    diag.warn(
      `toolwatch: ${event.kind} tool call ${event.tool} by agent ${event.agent} (rule ${event.rule})`,
    );
    const onMisuse = this._options.onMisuse;
    if (onMisuse === undefined) return;
    try {
      onMisuse(event);
    } catch (error) {
      this._problem('on_misuse', 'onMisuse callback threw', error);
    }
  }

  // -------------------------------------------------------------------------------------
  // Emission and delivery

  private _emitEvaluationSpan(
    runSpan: SpanContext,
    agent: string,
    attributes: Attributes,
    results: ScorerResult[],
  ): void {
    try {
      const provider = this._options.tracerProvider ?? trace.getTracerProvider();
      const tracer = provider.getTracer('toolwatch');
      const parent = trace.setSpanContext(ROOT_CONTEXT, runSpan);
      const span = tracer.startSpan(
        `evaluate ${agent}`,
        { attributes, links: [{ context: runSpan }] },
        parent,
      );
      if (!span.isRecording()) {
        this._problem(
          'emit_not_recording',
          'evaluate spans are not recorded: register a tracer provider globally or pass tracerProvider',
        );
      }
      addEvaluationEvents(span, results, this._policy.redact);
      span.end();
      this._emittedSpans = true;
    } catch (error) {
      this._problem('emit', 'emitting the evaluation span failed', error);
    }
  }

  private _deliverVerdict(verdict: Verdict): void {
    const onVerdict = this._options.onVerdict;
    if (onVerdict === undefined) return;
    try {
      onVerdict(verdict);
    } catch (error) {
      this._problem('on_verdict', 'onVerdict callback threw', error);
    }
  }

  // -------------------------------------------------------------------------------------
  // Lifecycle

  private _track(promise: Promise<unknown>): void {
    const tracked = promise.catch((error) => this._problem('pending', 'pending evaluation failed', error));
    this._pending.add(tracked);
    void tracked.finally(() => this._pending.delete(tracked));
  }

  private async _drain(): Promise<void> {
    // New work can be queued while waiting (a late run finishing starts its judges).
    while (this._pending.size > 0) await Promise.all([...this._pending]);
  }

  /** Results emitted on new spans during a flush must reach the exporters before it returns. */
  private async _flushEmitted(): Promise<void> {
    if (!this._emittedSpans || this._flushing) return;
    this._emittedSpans = false;
    const provider = (this._options.tracerProvider ?? trace.getTracerProvider()) as TracerProvider & {
      forceFlush?: () => Promise<void>;
      getDelegate?: () => TracerProvider & { forceFlush?: () => Promise<void> };
    };
    const flushable = provider.forceFlush ? provider : provider.getDelegate?.();
    if (!flushable?.forceFlush) return;
    this._flushing = true;
    try {
      await flushable.forceFlush();
    } finally {
      this._flushing = false;
    }
  }

  private async _shutdown(): Promise<void> {
    clearInterval(this._sweeper);
    // Runs waiting for late spans are judged now with what arrived; nothing else will.
    for (const state of this._traces.values()) {
      for (const late of state.late.values()) this._finishLate(state, late);
      this._judgeEndedRuns(state);
    }
    await this._drain();
    this._isShutdown = true;
    this._abort.abort(new Error('toolwatch processor shut down'));
    let dropped = 0;
    for (const state of this._traces.values()) dropped += state.spans.size;
    this._drop('shutdown', 'the processor shut down while agent traces were open', dropped);
    this._metrics.tracesBuffered(-this._traces.size);
    this._traces.clear();
    this._held = 0;
    await this._flushEmitted();
    await this._next?.shutdown();
    for (const [kind, count] of this._problems) {
      if (count > 1) diag.warn(`toolwatch: ${kind} happened ${count} times`);
    }
  }

  private _drop(reason: string, message: string, count = 1): void {
    if (count <= 0) return;
    this._metrics.recordSpansDropped(reason, count);
    this._problem(`dropped_${reason}`, `dropping spans: ${message}`);
  }

  /** Each kind of problem is logged once, then only counted: hooks run for every span. */
  private _problem(kind: string, message: string, error?: unknown): void {
    const seen = this._problems.get(kind) ?? 0;
    this._problems.set(kind, seen + 1);
    if (seen === 0) diag.warn(`toolwatch: ${message}`, ...(error === undefined ? [] : [error]));
  }
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (Number.isFinite(value) && value > 0) return value;
  diag.warn(`toolwatch: ${name} must be a positive number, using ${fallback}`);
  return fallback;
}

/**
 * The span as reconstruction reads it, on the processor's clock. SDK 2.x stamps a span's
 * start with `Date.now()` (whole milliseconds) and its end as start plus a high-resolution
 * duration, so a child can appear to start after its parent ended. Start times taken in
 * `onStart` from one high-resolution clock keep parents around their children.
 */
function toSpanLike(entry: SpanEntry, span: ReadableSpan, ending: boolean): SpanLike {
  const like = fromReadableSpan(span);
  // While `onEnding` runs the span is not yet marked ended, but its end time is set.
  if (ending) like.endTime = hrTimeToMs(span.endTime);
  if (entry.t0 !== undefined) {
    const duration = like.endTime === undefined ? undefined : like.endTime - like.startTime;
    like.startTime = entry.t0;
    if (duration !== undefined) like.endTime = entry.t0 + duration;
  }
  return like;
}

/**
 * The span's start on the monotonic clock, as epoch ms. SDK 2.x spans already read that clock
 * when they start (`_performanceStartTime`, to compute their end); reusing it saves a clock
 * read per span. Undefined when the caller gave the start time (the SDK then keeps it as
 * given), or, with `readClock` false, for span implementations that do not keep it.
 */
function highResolutionStart(span: ReadableSpan, readClock = true): number | undefined {
  const sdk = span as unknown as { _performanceStartTime?: unknown; _startTimeProvided?: unknown };
  if (sdk._startTimeProvided === true) return undefined;
  if (typeof sdk._performanceStartTime === 'number') return TIME_ORIGIN + sdk._performanceStartTime;
  return readClock ? TIME_ORIGIN + performance.now() : undefined;
}

/** A stand-in for a run span that has already ended: only its context is needed, to parent an evaluate span. */
function contextOnly(traceId: string, spanId: string): ReadableSpan {
  const spanContext: SpanContext = { traceId, spanId, traceFlags: TraceFlags.SAMPLED };
  return { spanContext: () => spanContext } as ReadableSpan;
}

function hasAgentAncestor(state: TraceState, parentId: string | undefined): boolean {
  while (parentId !== undefined) {
    const ancestor = state.spans.get(parentId);
    if (ancestor === undefined) return false;
    if (ancestor.role === SpanRole.AGENT) return true;
    parentId = ancestor.parentId;
  }
  return false;
}

function parentIdOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId ?? (span as unknown as { parentSpanId?: string }).parentSpanId;
}
