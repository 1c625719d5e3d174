import type { SpanContext } from '@opentelemetry/api';
import { context } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { verdictAttributes } from '../emission/attributes.js';
import type { ToolwatchMetrics } from '../emission/metrics.js';
import {
  type Placement,
  type VerdictTelemetry,
  type VerdictWriter,
  verdictTelemetry,
} from '../emission/verdict-writer.js';
import {
  evaluateRun,
  finalizeVerdict,
  type RunEvaluation,
  skippedEvaluation,
} from '../evaluation/evaluate-run.js';
import { matchRules, type RunIdentity, runIdentity } from '../evaluation/match-rules.js';
import type { AgentRun, Policy, Rule, ScorerResult, Verdict } from '../types.js';
import { type PendingJudges, UNTRACED } from './pending-judges.js';
import type { PolicyTraits } from './policy-traits.js';
import { spanIdentity } from './run-builder.js';
import type { SkipReason } from './span-end.js';
import { UnmatchedRuns } from './unmatched-runs.js';

export interface RunJudgeOptions {
  policy: Policy;
  traits: PolicyTraits;
  metrics: ToolwatchMetrics;
  writer: VerdictWriter;
  judges: PendingJudges;
  onVerdict: ((verdict: Verdict) => void) | undefined;
  /** Whether `onVerdict` is also given the `skipped: sampled_out` verdicts (see the processor's option). */
  sampledOutVerdicts: boolean;
  problem: (kind: string, message: string, error?: unknown) => void;
}

/** The record of runs not judged under one rule for one reason: the same for every such run. */
interface SkippedRecord {
  results: ScorerResult[];
  telemetry: VerdictTelemetry;
}

/**
 * Judges one run through the shared evaluation pipeline (`evaluateRun`, as offline) and
 * delivers what comes out: metrics, the verdict on the run span (the first matching rule)
 * or on `evaluate` spans (further rules, judges' results), `onVerdict`.
 */
export class RunJudge {
  private readonly _skipped = new Map<Rule, Map<string, SkippedRecord>>();
  /** Outermost runs no rule matched, counted and logged (the callers that find one say so). */
  readonly unmatched: UnmatchedRuns;

  constructor(private readonly _options: RunJudgeOptions) {
    this.unmatched = new UnmatchedRuns(_options.metrics, _options.policy);
  }

  /** Judges a rebuilt run. Returns whether a rule matched, and the decorated view for `view`. */
  judge(run: AgentRun, span: ReadableSpan, placement: Placement): { matched: boolean; view?: ReadableSpan } {
    let evaluations: ReturnType<typeof evaluateRun>;
    try {
      // Arguments passed through, not captured: no closure per run.
      evaluations = context.with(UNTRACED, evaluateRun, undefined, run, this._options.policy);
    } catch (error) {
      this._options.problem('evaluate', `evaluating the run of ${run.agent} failed`, error);
      return { matched: false };
    }
    if (evaluations.length === 0 && run.parent === undefined) this.unmatched.note(run.agent);
    let view: ReadableSpan | undefined;
    for (let index = 0; index < evaluations.length; index++) {
      const evaluation = evaluations[index]!;
      const written = this._deliver(run, evaluation.rule, evaluation, span, index === 0 ? placement : 'span');
      view ??= written;
    }
    return { matched: evaluations.length > 0, view };
  }

  /**
   * The one place a run that is not judged gets its record: none for a nested run when every
   * rule is root-only, none (an outermost run counted as unmatched) when no rule matches the
   * identity read from its agent span `span`, else the record of `skipped` for `reason`,
   * written on `where` (the span itself, or the context of one that has ended).
   */
  recordSkipped(
    span: ReadableSpan,
    nested: boolean,
    reason: SkipReason,
    placement: Placement,
    where: ReadableSpan = span,
  ): ReadableSpan | undefined {
    const { traits, policy } = this._options;
    if (nested && traits.allRulesRootOnly) return undefined;
    const identity = spanIdentity(span, nested, traits.rulesReadAttributes);
    const rules = matchRules(identity, policy);
    if (rules.length === 0) {
      if (!nested) this.unmatched.note(identity.agent);
      return undefined;
    }
    if (reason === 'matched_after_start') {
      this._options.problem(
        'matched_after_start',
        `agent span ${span.spanContext().spanId} matched no rule when it started and matches one as it ends (attributes set later): its run gets an incomplete_trace record`,
      );
      return this._writeSkipped(identity, where, placement, 'incomplete_trace', rules);
    }
    return this._writeSkipped(identity, where, placement, reason, rules);
  }

  /**
   * A rebuilt run of an evicted trace that cannot be judged on what is left of it: its
   * `incomplete_trace` record, on an `evaluate` span under `where` (its run span's context).
   */
  recordIncompleteRun(run: AgentRun, where: ReadableSpan): void {
    this._writeSkipped(runIdentity(run), where, 'span', 'incomplete_trace');
  }

  /**
   * A record for a run that is matched but not rebuilt (out of the sample, or incomplete),
   * about the run of `span` (its context is enough), counted per rule and reason. An
   * incomplete run gets its full record, every scorer `skipped` with `reason`, where
   * `placement` says; a run out of the sample gets one attribute on its span, and its verdict
   * goes to `onVerdict` only when asked for (`sampledOutVerdicts`). Returns the decorated view
   * for `view`.
   */
  private _writeSkipped(
    identity: RunIdentity,
    span: ReadableSpan,
    placement: Placement,
    reason: string,
    // The caller's own match, when it has one: rule matching is not done twice per run.
    rules: readonly Rule[] = matchRules(identity, this._options.policy),
  ): ReadableSpan | undefined {
    const { policy, metrics, writer, onVerdict } = this._options;
    if (rules.length === 0) return undefined;
    const full = reason !== 'sampled_out';
    const deliver = onVerdict !== undefined && (full || this._options.sampledOutVerdicts);
    let view: ReadableSpan | undefined;
    for (let index = 0; index < rules.length; index++) {
      const rule = rules[index]!;
      // The same for every run: built once per rule and reason.
      const record = this._skippedRecord(rule, reason);
      metrics.recordRunSkipped(rule.name, reason);
      for (const result of record.results) metrics.recordResult(result, identity.agent, rule.name);
      if (full) {
        const where = index === 0 ? placement : 'span';
        const written = writer.writeTelemetry(span, identity.agent, record.telemetry, record.results, where);
        view ??= written;
      }
      if (deliver) {
        // Whom the record is about: built only for a listener.
        const { traceId, spanId } = span.spanContext();
        const { verdict } = skippedEvaluation(
          { traceId, spanId, agent: identity.agent },
          rule,
          policy,
          reason,
        );
        this.deliver(verdict);
      }
    }
    return full ? view : writer.markSkipped(span, reason, placement);
  }

  private _skippedRecord(rule: Rule, reason: string): SkippedRecord {
    let byReason = this._skipped.get(rule);
    if (byReason === undefined) {
      byReason = new Map();
      this._skipped.set(rule, byReason);
    }
    let record = byReason.get(reason);
    if (record === undefined) {
      const { verdict } = skippedEvaluation(
        { traceId: '', spanId: '', agent: '' },
        rule,
        this._options.policy,
        reason,
      );
      record = {
        results: verdict.results,
        telemetry: verdictTelemetry(verdict, this._options.policy.redact),
      };
      byReason.set(reason, record);
    }
    return record;
  }

  private _deliver(
    run: AgentRun | undefined,
    rule: Rule,
    evaluation: RunEvaluation,
    span: ReadableSpan,
    placement: Placement,
  ): ReadableSpan | undefined {
    const { metrics, writer } = this._options;
    const { verdict } = evaluation;
    for (const result of verdict.results) {
      metrics.recordResult(result, verdict.agent, rule.name);
      if (result.label === 'error') {
        this._options.problem(
          `scorer_error_${result.scorer}`,
          `scorer ${result.scorer} failed: ${result.reason ?? ''}`,
        );
      }
    }
    const view = writer.write(span, verdict, placement);
    if (run === undefined || evaluation.pending.length === 0) {
      this.deliver(verdict);
    } else {
      const runSpan = span.spanContext();
      this._options.judges.start(run, rule, evaluation, (extra) =>
        this._judged(rule, evaluation, runSpan, extra),
      );
    }
    return view;
  }

  private _judged(rule: Rule, evaluation: RunEvaluation, runSpan: SpanContext, extra: ScorerResult[]): void {
    const { metrics, writer } = this._options;
    const agent = evaluation.verdict.agent;
    const pendingNames = new Set(evaluation.pending.map((scorer) => scorer.name));
    for (const result of extra) {
      metrics.recordResult(result, agent, rule.name);
      if (!pendingNames.has(result.scorer)) continue;
      if (result.label === 'skipped') {
        if (result.reason === 'budget') metrics.recordJudgeCall(result.scorer, 'skipped_budget');
      } else {
        metrics.recordJudgeCall(result.scorer, result.label === 'error' ? 'error' : 'ok');
      }
    }
    const final = finalizeVerdict(evaluation.verdict, extra, rule);
    writer.evaluateSpan(runSpan, agent, verdictAttributes(final), extra);
    this.deliver(final);
  }

  deliver(verdict: Verdict): void {
    const onVerdict = this._options.onVerdict;
    if (onVerdict === undefined) return;
    try {
      onVerdict(verdict);
    } catch (error) {
      this._options.problem('on_verdict', 'onVerdict callback threw', error);
    }
  }
}
