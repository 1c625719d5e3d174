import type { Context, MeterProvider, TracerProvider } from '@opentelemetry/api';
import { context as contextApi, diag } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { DetachedSpanWatch } from '../conventions/detached-spans.js';
import { lateSpanRole, SpanRole, spanRole } from '../conventions/span-role.js';
import { ToolwatchMetrics } from '../emission/metrics.js';
import { type Placement, VerdictWriter } from '../emission/verdict-writer.js';
import { JudgeLimiter } from '../evaluation/judge-limiter.js';
import { ALLOW } from '../guard/decide-tool-call.js';
import { type GuardFailure, ToolCallGuard } from '../guard/tool-call-guard.js';
import type { JudgeFunction, MisuseEvent, Policy, ToolCall, ToolCallDecision, Verdict } from '../types.js';
import { FollowedTraces } from './followed-traces.js';
import { HeldTraces } from './held-traces.js';
import { LiveChecks } from './live-checks.js';
import { LiveRunLocator } from './live-runs.js';
import { PendingJudges } from './pending-judges.js';
import { policyTraits } from './policy-traits.js';
import { ProblemLog } from './problem-log.js';
import { RunEvaluator } from './run-evaluator.js';
import { RunJudge } from './run-judge.js';
import { parentIdOf } from './sdk-span.js';
import { NOTHING, type SpanEnd } from './span-end.js';
import { TraceBuffer } from './trace-buffer.js';
import { TraceMode, type TraceState } from './trace-state.js';

export interface ToolwatchSpanProcessorOptions {
  /** The policy runs are judged by (from `loadPolicy`, or built in code). Required. */
  policy: Policy;
  /** Where toolwatch's metrics go. Default: none (a no-op meter). */
  meterProvider?: MeterProvider;
  /** Judges by name for `llm_judge` scorers; `default` is used when a scorer names none. Default: none. */
  judges?: Record<string, JudgeFunction | unknown>;
  /** Called with every verdict, once it is final (after its judges, if any). Default: none. */
  onVerdict?: (verdict: Verdict) => void;
  /**
   * Whether `onVerdict` is also called for runs out of the policy's sample, with their
   * `skipped: sampled_out` verdict (every scorer skipped, as `evaluateTraces` gives it). Such a
   * run's span carries one attribute either way, `toolwatch.evaluation.skipped: sampled_out`,
   * and the metrics count it (`toolwatch.runs.skipped`, by rule and reason). Default: false.
   */
  sampledOutVerdicts?: boolean;
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
   * counted as dropped. Bounds memory whatever the mix of traces, with `maxBufferedBytes`. Default: 100000.
   */
  maxBufferedSpans?: number;
  /**
   * About how many bytes of ended spans are held over all traces (their attribute and event
   * values, plus ~0.5 KB a span): the span counts bound memory only while spans are small, and
   * agent spans carry whole arguments, results and model messages. Beyond it the oldest traces
   * are evicted (counted as `max_buffered_bytes`); a trace that alone passes it is evicted too,
   * and its run gets `skipped: incomplete_trace`. Default: 134217728 (128 MiB).
   */
  maxBufferedBytes?: number;
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
  /**
   * What `checkToolCall` answers when the guard itself fails (a bug in toolwatch, or a call it
   * cannot read): `allow` lets the call run (the verdict and the live checks still see it),
   * `deny` refuses it with the reason that the guard failed. Either way the failure is logged
   * once through `diag` and counted (`toolwatch.tool.guard.decisions`, decision `error`).
   * Default: `allow`.
   */
  guardFailure?: GuardFailure;
}

const DEFAULTS = {
  lateSpanTimeoutMs: 5000,
  maxTraces: 10_000,
  maxSpansPerTrace: 10_000,
  maxBufferedSpans: 100_000,
  maxBufferedBytes: 128 * 1024 * 1024,
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
 * matching, live checks, a count and one attribute saying so). Sampled runs are held span by
 * span, each converted once as it ends, and rebuilt, scored and written when the agent span
 * ends. Hooks never throw: problems go to `diag`, once per kind, then are counted.
 *
 * The class holds the hooks and the lifecycle; the work is its collaborators': `TraceBuffer`
 * (what is held, limits, eviction), `HeldTraces` (sampled traces, span by span),
 * `FollowedTraces` (traces followed without their spans), `RunEvaluator` (when and how runs
 * are judged, late spans), `RunJudge` (the evaluation pipeline and delivery), `LiveChecks`,
 * `VerdictWriter`, `PendingJudges` and `ProblemLog`.
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
  private readonly _next: SpanProcessor | undefined;
  private readonly _problems: ProblemLog;
  private readonly _buffer: TraceBuffer;
  private readonly _judges: PendingJudges;
  private readonly _writer: VerdictWriter;
  private readonly _held: HeldTraces;
  private readonly _followed: FollowedTraces;
  private readonly _evaluator: RunEvaluator;
  private readonly _guard: ToolCallGuard;
  /** A policy without rules judges nothing and checks nothing: every hook returns at once. */
  private readonly _idle: boolean;
  private readonly _sweeper: ReturnType<typeof setInterval>;
  /** Warns once when agent and tool spans are all roots (no context manager): every verdict would be wrong. */
  private readonly _detached = new DetachedSpanWatch();
  /** Set by the first `onEnding` call: the SDK supports it, so agent spans are written in place. */
  private _sdkCallsOnEnding = false;
  private _shutdownPromise: Promise<void> | undefined;
  private _isShutdown = false;

  constructor(options: ToolwatchSpanProcessorOptions) {
    const policy = options.policy;
    const traits = policyTraits(policy);
    this._next = options.next;
    const metrics = new ToolwatchMetrics({ meterProvider: options.meterProvider, policy });
    const problems = new ProblemLog(metrics);
    this._problems = problems;
    const problem = (kind: string, message: string, error?: unknown) => problems.report(kind, message, error);
    this._buffer = new TraceBuffer(
      {
        maxTraces: positive(options.maxTraces, DEFAULTS.maxTraces, 'maxTraces'),
        maxSpansPerTrace: positive(options.maxSpansPerTrace, DEFAULTS.maxSpansPerTrace, 'maxSpansPerTrace'),
        maxBufferedSpans: positive(options.maxBufferedSpans, DEFAULTS.maxBufferedSpans, 'maxBufferedSpans'),
        maxBufferedBytes: positive(options.maxBufferedBytes, DEFAULTS.maxBufferedBytes, 'maxBufferedBytes'),
        traceTtlMs: positive(options.traceTtlMs, DEFAULTS.traceTtlMs, 'traceTtlMs'),
      },
      metrics,
      problems,
    );
    const live = new LiveChecks({
      policy,
      metrics,
      problems,
      onMisuse: options.onMisuse,
      withResource: traits.rulesReadAttributes,
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
    const runs = new RunJudge({
      policy,
      traits,
      metrics,
      writer: this._writer,
      judges: this._judges,
      onVerdict: options.onVerdict,
      sampledOutVerdicts: options.sampledOutVerdicts === true,
      problem,
    });
    this._evaluator = new RunEvaluator({
      policy,
      traits,
      buffer: this._buffer,
      live,
      runs,
      judges: this._judges,
      metrics,
      problems,
      lateSpanTimeoutMs: positive(options.lateSpanTimeoutMs, DEFAULTS.lateSpanTimeoutMs, 'lateSpanTimeoutMs'),
    });
    this._held = new HeldTraces({ buffer: this._buffer, live });
    this._followed = new FollowedTraces({ policy, traits, buffer: this._buffer, live });
    const locator = new LiveRunLocator(this._buffer, live);
    this._guard = new ToolCallGuard({
      policy,
      runsAt: (span) => locator.at(span),
      metrics,
      problem,
      onMisuse: options.onMisuse,
      tracerProvider: options.tracerProvider,
      failure: options.guardFailure === 'deny' ? 'deny' : 'allow',
    });
    this._idle = policy.rules.length === 0;
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
      if (this._buffer.hasEvicted) this._recordEvicted();
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
      if (this._buffer.hasEvicted) this._recordEvicted();
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
      if (this._buffer.hasEvicted) this._recordEvicted();
    }
    this._next?.onEnd(forwarded);
  }

  /**
   * Decides a tool call before it runs, against the agent run in `context` (default: the
   * active context): the rules that match that run, and its calls so far as the live checks
   * count them. Call it where the framework is about to run the tool; run the tool only when
   * `allowed`, else answer the model with `reasons`. A denial is written into the trace (the
   * run's verdict counts the call refused), counted in `toolwatch.tool.guard.decisions` and
   * delivered to `onMisuse` with `blocked`. No run in the context, or no rule for it: allow.
   * Synchronous, and never throws (see `guardFailure`).
   */
  checkToolCall(call: ToolCall, context: Context = contextApi.active()): ToolCallDecision {
    if (this._idle || this._isShutdown) return ALLOW;
    return this._guard.check(call, context);
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
        // A span of an evicted trace: counted, never the start of a new, partial trace.
        this._problems.dropped(
          'evicted_trace',
          `trace ${tombstone.traceId} was evicted (or cut by span limits); its later spans are not held`,
        );
        tombstone.started(span, ctx.spanId, role, parentContext, this._buffer.epoch);
        return;
      }
      // Ordinary spans of traces with no agent activity stop here.
      if (role === SpanRole.NONE) return;
      state = this._buffer.create(ctx.traceId, this._followed.modeOf(ctx.traceId, role, span), false);
    }
    if (state.mode === TraceMode.JUDGED) {
      this._held.started(state, span, ctx.spanId, role, parentIdOf(span), parentContext);
    } else if (role !== SpanRole.NONE) {
      // Out of the sample (or of every rule), ordinary spans are not followed at all.
      this._followed.started(state, span, ctx.spanId, role, parentIdOf(span), parentContext);
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
    const tombstone = state === undefined ? buffer.tombstone(ctx.traceId) : undefined;
    if (state === undefined && tombstone === undefined) {
      // Recognised only as it ends: OpenInference bridges write every attribute at the end.
      if (lateSpanRole(span.name, span.attributes) === SpanRole.NONE) return undefined;
      state = buffer.create(ctx.traceId, TraceMode.JUDGED, true);
    }
    // The trace's owner does its own bookkeeping and says what is due; the evaluator does it.
    const next =
      state === undefined
        ? tombstone!.ended(span, ctx.spanId, buffer.epoch)
        : this._ownerEnding(state, span, ctx.spanId);
    return next === NOTHING ? undefined : this._evaluator.act(next, state, span, placement);
  }

  private _ownerEnding(state: TraceState, span: ReadableSpan, spanId: string): SpanEnd {
    if (state.mode === TraceMode.JUDGED) return this._held.ending(state, span, spanId);
    return this._followed.ending(state, span, spanId);
  }

  private _sweep(): void {
    try {
      this._buffer.sweep();
    } catch (error) {
      this._problems.report('sweep', 'trace eviction failed', error);
    }
    if (this._buffer.hasEvicted) this._recordEvicted();
  }

  /**
   * Traces the buffer evicted during this hook (limits) or sweep (inactivity): their runs
   * waiting for late spans, and the ended runs of traces recognised at span ends, get their
   * records now (open runs get theirs when their span ends, from the tombstone).
   */
  private _recordEvicted(): void {
    for (const state of this._buffer.takeEvicted()) {
      try {
        this._evaluator.evicting(state);
      } catch (error) {
        this._problems.report('evict', 'giving an evicted trace its records failed', error);
      }
    }
  }

  // -------------------------------------------------------------------------------------
  // Lifecycle

  private async _shutdown(): Promise<void> {
    clearInterval(this._sweeper);
    // Everything below runs before the first await: exporting processors shut down in
    // parallel with this one, and must still receive what is emitted here.
    for (const state of [...this._buffer.traces()]) {
      for (const late of [...state.late.values()]) this._evaluator.finishLate(state, late, true);
      this._evaluator.judgeEndedRuns(state);
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

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (Number.isFinite(value) && value > 0) return value;
  diag.warn(`toolwatch: ${name} must be a positive number, using ${fallback}`);
  return fallback;
}
