import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { ToolwatchMetrics } from '../emission/metrics.js';
import type { Placement } from '../emission/verdict-writer.js';
import { matchRules } from '../evaluation/match-rules.js';
import { isSampled } from '../evaluation/sampling.js';
import { findRun, runsInOrder } from '../reconstruction/run-tree.js';
import type { AgentRun, Policy } from '../types.js';
import type { LiveChecks } from './live-checks.js';
import { NestedRuns } from './nested-runs.js';
import type { PendingJudges } from './pending-judges.js';
import type { PolicyTraits } from './policy-traits.js';
import type { ProblemLog } from './problem-log.js';
import { announcedRuleMatches, rebuildRuns, spanIdentity } from './run-builder.js';
import type { RunJudge } from './run-judge.js';
import { contextOnly, parentIdOf } from './sdk-span.js';
import type { SpanEnd } from './span-end.js';
import type { SpanEntry } from './span-entry.js';
import type { TraceBuffer } from './trace-buffer.js';
import { hasAgentAbove, type LateRun, type TraceState } from './trace-state.js';

export interface RunEvaluatorOptions {
  policy: Policy;
  traits: PolicyTraits;
  buffer: TraceBuffer;
  live: LiveChecks;
  runs: RunJudge;
  judges: PendingJudges;
  metrics: ToolwatchMetrics;
  problems: ProblemLog;
  lateSpanTimeoutMs: number;
}

/**
 * When and how a held trace's runs are judged: at their agent span's end on a rebuilt run,
 * after late spans (or their timeout), when the trace is evicted or the processor shuts down;
 * and the records of runs that cannot be judged (out of the sample, incomplete, evicted).
 */
export class RunEvaluator {
  private readonly _policy: Policy;
  private readonly _buffer: TraceBuffer;
  private readonly _live: LiveChecks;
  private readonly _runs: RunJudge;
  private readonly _judges: PendingJudges;
  private readonly _metrics: ToolwatchMetrics;
  private readonly _problems: ProblemLog;
  private readonly _lateSpanTimeoutMs: number;
  private readonly _allRulesRootOnly: boolean;
  private readonly _rulesReadAttributes: boolean;
  private readonly _sampledOutFastPath: boolean;
  private readonly _argumentsRead: ReadonlySet<string> | undefined;
  private readonly _nested = new NestedRuns();

  constructor(options: RunEvaluatorOptions) {
    this._policy = options.policy;
    this._buffer = options.buffer;
    this._live = options.live;
    this._runs = options.runs;
    this._judges = options.judges;
    this._metrics = options.metrics;
    this._problems = options.problems;
    this._lateSpanTimeoutMs = options.lateSpanTimeoutMs;
    this._allRulesRootOnly = options.traits.allRulesRootOnly;
    this._rulesReadAttributes = options.traits.rulesReadAttributes;
    this._sampledOutFastPath = options.traits.sampledOutFastPath;
    this._argumentsRead = options.traits.argumentsRead;
  }

  /**
   * Does what the owner of a trace (held, followed, or an evicted one's tombstone: `state` is
   * then undefined) said should happen after its span `span` ended; then a run waiting for
   * late spans may be done, and the trace, idle, is released. Returns the decorated view for
   * `view` placement, when the span carries a verdict or a record.
   */
  act(
    next: SpanEnd,
    state: TraceState | undefined,
    span: ReadableSpan,
    placement: Placement,
  ): ReadableSpan | undefined {
    let view: ReadableSpan | undefined;
    switch (next.kind) {
      case 'none':
        return undefined;
      case 'judge':
        view = this.evaluate(state!, next.entry, span, placement);
        break;
      case 'wait-late':
        this.waitForLateSpans(state!, next.entry, span);
        break;
      case 'record-skipped':
        view = this._runs.recordSkipped(span, next.nested, next.reason, placement);
        break;
    }
    if (state !== undefined) {
      if (state.late.size > 0) this.checkLateRuns(state, span);
      this._buffer.releaseIfIdle(state);
    }
    return view;
  }

  /**
   * Rebuilds the run of `span`, judges it and emits the verdict where `placement` says. When
   * the outermost span closes, the runs that had no turn of their own are judged too.
   */
  evaluate(
    state: TraceState,
    entry: SpanEntry,
    span: ReadableSpan,
    placement: Placement,
  ): ReadableSpan | undefined {
    const spanId = entry.spanId;
    const nested = hasAgentAbove(state, entry);
    if (nested && this._allRulesRootOnly) return undefined;
    state.markEvaluated(spanId);
    if (
      this._sampledOutFastPath &&
      !state.seenLate &&
      !isSampled(state.traceId, this._policy.sampling.ratio)
    ) {
      // Out of the sample (a trace that did not start with an agent span): no rebuild.
      return this._runs.recordSkipped(span, nested, 'sampled_out', placement);
    }
    const single = !state.seenLate && state.agents === 1 && state.looseCalls === 0;
    if (single && (this._rulesReadAttributes || !announcedRuleMatches(span, nested, this._policy))) {
      // The only run the trace can hold is this one: no rule for its identity, no rebuild.
      const identity = spanIdentity(span, nested, this._rulesReadAttributes);
      if (matchRules(identity, this._policy).length === 0) {
        if (!nested) this._runs.unmatched.note(identity.agent);
        return undefined;
      }
    }
    // A nested run from its own subtree when that reads as the whole trace would (see `NestedRuns`).
    const own = nested ? this._nested.rebuild(state, entry, this._argumentsRead) : undefined;
    const reconstructed = own ?? rebuildRuns(state, this._argumentsRead);
    for (const problem of reconstructed.problems) {
      this._problems.report(`reconstruction_${problem.code}`, `trace ${state.traceId}: ${problem.message}`);
    }
    const run = own !== undefined ? own.runs[0] : findRun(reconstructed.runs, spanId);
    let view: ReadableSpan | undefined;
    if (run !== undefined) view = this._judgeRun(state, run, span, placement, single);
    if (!nested) {
      // The outermost span closes: judge the runs that had no turn of their own, such as an
      // agent under a wrapper span (OpenAI Agents' "Agent workflow"), a handoff target, or an
      // implicit run inside a chain. Their spans have ended, so results go on evaluate spans.
      for (const other of runsInOrder(reconstructed.runs)) {
        if (other === run || other.end === undefined || state.evaluated.has(other.spanId)) continue;
        // An implicit run whose outermost span is still to come (its root waits for its parent
        // here) has its turn when that span ends: it may hold more tools by then.
        if (other.implicit && awaitsParent(state, other.spanId)) continue;
        state.markEvaluated(other.spanId);
        this._judgeRun(state, other, contextOnly(state.traceId, other.spanId), 'span');
      }
      // In a trace that goes on (a workflow or session span above), the judged run is let go.
      if (state.openCount > 0 && !state.seenLate && entry.activeChildren === 0) {
        this._buffer.releaseRun(state, entry);
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
    // Nested runs counted with a run judged before (taken as they were into this one) are not walked again.
    const stack = [run];
    while (stack.length > 0) {
      const member = stack.pop()!;
      if (this._nested.counted(member)) continue;
      for (const execution of member.executions) {
        if (state.countOnce(execution.spanId)) continue;
        this._metrics.recordToolExecution(execution.name, execution.status, member.agent);
      }
      for (const child of member.children) stack.push(child);
    }
    this._nested.markCounted(run);
  }

  waitForLateSpans(state: TraceState, entry: SpanEntry, span: ReadableSpan): void {
    if (state.late.has(entry.spanId)) return;
    state.markEvaluated(entry.spanId);
    let resolve!: () => void;
    const done = new Promise<void>((r) => {
      resolve = r;
    });
    const late: LateRun = {
      span,
      entry,
      done,
      resolve,
      queued: false,
      timer: setTimeout(() => this.finishLate(state, late, false), this._lateSpanTimeoutMs),
    };
    late.timer.unref?.();
    state.addLate(entry.spanId, late);
    this._judges.track(done);
  }

  /**
   * Queues the waiting runs whose descendants have all ended now that `ended` has: the runs
   * on its way up whose subtrees closed with it, innermost first, so a run nested in another
   * is judged before it and the run around takes it as built (see `NestedRuns`) rather than
   * rebuilding it. No scan of every waiting run: a chain whose spans end outermost first
   * costs time linear in its depth. (The ended span itself, if held, is not ready: it was
   * judged, or waits for its own open descendants.)
   */
  checkLateRuns(state: TraceState, ended: ReadableSpan): void {
    const parentId = parentIdOf(ended);
    const ready: LateRun[] = [];
    let at = parentId === undefined ? undefined : state.spans.get(parentId);
    for (; at !== undefined; at = at.parent) {
      if (at.open || at.activeChildren > 0) break;
      const late = state.late.get(at.spanId);
      if (late !== undefined) ready.push(late);
    }
    for (const late of ready) this.finishLate(state, late, false);
  }

  /**
   * Judges a run that waited for late spans; its verdict goes on a new `evaluate` span. Out of
   * the SDK's hook (a microtask) unless `now`: emitting a span from inside another span's
   * `onEnd` would re-enter the SDK.
   */
  finishLate(state: TraceState, late: LateRun, now: boolean): void {
    const spanId = late.entry.spanId;
    if (state.late.get(spanId) !== late) return;
    clearTimeout(late.timer);
    if (!now) {
      // It stays in `state.late` until judged: the trace is not released meanwhile, so a
      // shutdown (or an eviction) in the same tick still finds it, and judges it (or gives it
      // its record) while the exporters accept spans.
      if (late.queued) return;
      late.queued = true;
      state.lateQueued();
      queueMicrotask(() => {
        state.lateFinished();
        this.finishLate(state, late, true);
      });
      return;
    }
    state.removeLate(spanId);
    try {
      // Evicted (or over a span limit) since: judged on part of its run, a verdict could be false.
      if (state.incomplete) {
        state.markEvaluated(spanId);
        this._runs.recordSkipped(late.span, hasAgentAbove(state, late.entry), 'incomplete_trace', 'span');
      } else this.evaluate(state, late.entry, late.span, 'span');
    } catch (error) {
      this._problems.report('late', 'late evaluation failed', error);
    } finally {
      late.resolve();
      this._buffer.releaseIfIdle(state);
    }
  }

  /**
   * A trace is evicted (limits, inactivity): runs waiting for late spans, and the ended runs
   * of a trace recognised only at span ends, get `incomplete_trace` records; open agent runs
   * get theirs when their span ends (the tombstone remembers them).
   */
  evicting(state: TraceState): void {
    for (const late of [...state.late.values()]) {
      state.removeLate(late.entry.spanId);
      clearTimeout(late.timer);
      late.resolve();
      const where = contextOnly(state.traceId, late.entry.spanId);
      this._runs.recordSkipped(
        late.span,
        hasAgentAbove(state, late.entry),
        'incomplete_trace',
        'span',
        where,
      );
    }
    if (!state.seenLate) return;
    for (const run of runsInOrder(rebuildRuns(state, this._argumentsRead).runs)) {
      if (run.end === undefined || state.evaluated.has(run.spanId)) continue;
      state.markEvaluated(run.spanId);
      this._runs.recordIncompleteRun(run, contextOnly(state.traceId, run.spanId));
    }
  }

  /**
   * A trace first seen as its spans ended waits for its outermost span before judging; when
   * that span will not end here (shut down), the runs that did end are judged now.
   */
  judgeEndedRuns(state: TraceState): void {
    if (!state.seenLate || state.incomplete) return;
    try {
      for (const run of runsInOrder(rebuildRuns(state, this._argumentsRead).runs)) {
        if (run.end === undefined || state.evaluated.has(run.spanId)) continue;
        state.markEvaluated(run.spanId);
        this._judgeRun(state, run, contextOnly(state.traceId, run.spanId), 'span');
      }
    } catch (error) {
      this._problems.report('judge_ended', 'judging the ended runs of an unfinished trace failed', error);
    }
  }
}

/** Whether the held span `spanId` has a local parent that has not been held yet (it is still open). */
function awaitsParent(state: TraceState, spanId: string): boolean {
  const parentId = state.spans.get(spanId)?.parentId;
  return parentId !== undefined && state.awaiting.has(parentId);
}
