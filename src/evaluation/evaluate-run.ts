import { errorResult } from '../scorers/scorer-result.js';
import type { AgentRun, JudgeFunction, Policy, Rule, Scorer, ScorerResult, Verdict } from '../types.js';
import type { JudgeLimiter } from './judge-limiter.js';
import { matchRules, runIdentity } from './match-rules.js';
import { isSampled } from './sampling.js';

/** The synchronous part of a run's evaluation, and the judges still to run. */
export interface RunEvaluation {
  verdict: Verdict;
  /** Async scorers (judges) selected by sampling or escalation, in rule order. */
  pending: Scorer[];
  /** Why each pending judge runs, by scorer name. */
  reasons: Record<string, 'sampled' | 'failure' | 'error_span'>;
}

export interface AsyncContext {
  /** Judges by name, for `llm_judge` scorers. */
  judges?: Record<string, JudgeFunction | unknown>;
  limiter: JudgeLimiter;
  signal?: AbortSignal;
}

/** One matching rule of a run and the synchronous part of its evaluation. */
export interface RuleEvaluation extends RunEvaluation {
  rule: Rule;
}

/**
 * The one evaluation pipeline, live and offline: the rules that match the run's identity, in
 * policy order, each evaluated (deterministic scorers now, judges pending). A run whose span
 * never ended gets `skipped: incomplete_trace` for every scorer: its calls may be missing.
 */
export function evaluateRun(run: AgentRun, policy: Policy): RuleEvaluation[] {
  const out: RuleEvaluation[] = [];
  for (const rule of matchRules(runIdentity(run), policy)) {
    const evaluation =
      run.end === undefined
        ? skippedEvaluation(run, rule, policy, 'incomplete_trace')
        : evaluateRunSync(run, rule, policy);
    out.push({ rule, ...evaluation });
  }
  return out;
}

/** Which run a verdict is about, when the run itself could not be (or need not be) rebuilt. */
export interface VerdictSubject {
  traceId: string;
  spanId: string;
  agent: string;
}

/**
 * A record for a run that was matched but not scored: every scorer `skipped` with `reason`
 * (`sampled_out`, `incomplete_trace`), so coverage stays measurable.
 */
export function skippedEvaluation(
  subject: VerdictSubject,
  rule: Rule,
  policy: Policy,
  reason: string,
): RunEvaluation {
  const results: ScorerResult[] = [];
  for (const scorer of rule.scorers) results.push(skippedResult(scorer, reason));
  const verdict: Verdict = {
    trace_id: subject.traceId,
    span_id: subject.spanId,
    agent: subject.agent,
    rule: rule.name,
    // Judged by nobody: neither a pass nor a failure.
    passed: null,
    policy_digest: policy.digest,
    sampled: isSampled(subject.traceId, policy.sampling.ratio),
    results,
  };
  return { verdict, pending: [], reasons: {} };
}

/**
 * Runs the rule's deterministic scorers on `run` (those the sample selects; the rest get
 * `skipped: sampled_out`) and decides which judges should run: sampled, or
 * escalated because a deterministic scorer failed (`escalate_on: failure`) or the run has
 * an ERROR span (`error_span`). Never throws: a scorer that throws yields an `error` result.
 */
export function evaluateRunSync(run: AgentRun, rule: Rule, policy: Policy): RunEvaluation {
  const results: ScorerResult[] = [];
  let judges: Scorer[] | undefined;
  for (const scorer of rule.scorers) {
    if (scorer.async) {
      if (judges === undefined) judges = [];
      judges.push(scorer);
      continue;
    }
    if (!isSampled(run.traceId, effectiveRatio(scorer, policy))) {
      results.push(skippedResult(scorer, 'sampled_out'));
      continue;
    }
    results.push(runSync(scorer, run, policy));
  }

  const pending: Scorer[] = [];
  const reasons: RunEvaluation['reasons'] = {};
  if (judges !== undefined) decideJudges(run, policy, judges, results, pending, reasons);

  const verdict: Verdict = {
    trace_id: run.traceId,
    span_id: run.spanId,
    agent: run.agent,
    rule: rule.name,
    passed: allPassed(results),
    policy_digest: policy.digest,
    sampled: isSampled(run.traceId, policy.sampling.ratio),
    results: orderByRule(results, rule),
  };
  return { verdict, pending, reasons };
}

/** Which judges run (into `pending`, with their reason) and which are `skipped: sampled_out`. */
function decideJudges(
  run: AgentRun,
  policy: Policy,
  judges: readonly Scorer[],
  results: ScorerResult[],
  pending: Scorer[],
  reasons: RunEvaluation['reasons'],
): void {
  const failed = results.some((r) => r.label === 'fail' || r.label === 'error');
  const escalateOn = policy.judge.escalateOn;
  for (const judge of judges) {
    const reason = isSampled(run.traceId, effectiveRatio(judge, policy))
      ? 'sampled'
      : escalateOn.includes('failure') && failed
        ? 'failure'
        : escalateOn.includes('error_span') && run.hasErrorSpan
          ? 'error_span'
          : undefined;
    if (reason) {
      pending.push(judge);
      reasons[judge.name] = reason;
    } else {
      results.push(skippedResult(judge, 'sampled_out'));
    }
  }
}

/**
 * Runs the pending judges one after another, each under the limiter: a refused call is not
 * made and yields `skipped: budget`. Never rejects.
 */
export async function completeRunAsync(
  run: AgentRun,
  _rule: Rule,
  policy: Policy,
  evaluation: Pick<RunEvaluation, 'pending'> & Partial<RunEvaluation>,
  ctx: AsyncContext,
): Promise<ScorerResult[]> {
  const out: ScorerResult[] = [];
  for (const scorer of evaluation.pending) {
    if (ctx.signal?.aborted) {
      out.push(skippedResult(scorer, 'aborted'));
      continue;
    }
    if (!ctx.limiter.tryAcquire()) {
      out.push(skippedResult(scorer, 'budget'));
      continue;
    }
    try {
      const result = validResult(
        scorer,
        await scorer.score(run, {
          ...(ctx.judges ? { judges: ctx.judges } : {}),
          redact: policy.redact,
          ...(ctx.signal ? { signal: ctx.signal } : {}),
        }),
      );
      const reason = evaluation.reasons?.[scorer.name];
      out.push(reason && reason !== 'sampled' ? withEscalation(result, reason) : result);
    } catch (err) {
      out.push(errorResult(scorer, err));
    } finally {
      ctx.limiter.release();
    }
  }
  return out;
}

/**
 * The verdict with the judges' results added (in the rule's scorer order when `rule` is
 * given) and `passed` recomputed: every scorer that ran passed; skipped ones don't count.
 */
export function finalizeVerdict(verdict: Verdict, extra: ScorerResult[], rule?: Rule): Verdict {
  const replaced = new Set(extra.map((r) => r.scorer));
  const merged = [...verdict.results.filter((r) => !replaced.has(r.scorer)), ...extra];
  const results = rule ? orderByRule(merged, rule) : merged;
  return { ...verdict, passed: allPassed(results), results };
}

/**
 * A scorer's sampling ratio within the policy's: per-scorer ratio (deterministic default
 * 1.0, judges 0) capped by the policy-wide ratio. Samples are nested, so this is the
 * intersection of both samples.
 */
export function effectiveRatio(scorer: Scorer, policy: Policy): number {
  const own = scorer.sampling?.ratio ?? (scorer.async ? 0 : 1);
  return Math.min(own, policy.sampling.ratio);
}

export function skippedResult(scorer: Scorer, reason: string): ScorerResult {
  return {
    scorer: scorer.name,
    kind: scorer.kind,
    passed: false,
    score: 0,
    label: 'skipped',
    reason,
    digest: scorer.digest,
    detail: {},
  };
}

function runSync(scorer: Scorer, run: AgentRun, policy: Policy): ScorerResult {
  try {
    const result = scorer.score(run, { redact: policy.redact });
    if (result && typeof (result as Promise<ScorerResult>).then === 'function') {
      // A promise from a scorer declared synchronous cannot be awaited on the hot path.
      (result as Promise<ScorerResult>).then(undefined, () => {});
      return errorResult(scorer, new Error('scorer returned a promise but is not declared async'));
    }
    return validResult(scorer, result as ScorerResult);
  } catch (err) {
    return errorResult(scorer, err);
  }
}

const isLabel = (label: unknown): boolean =>
  label === 'pass' || label === 'fail' || label === 'error' || label === 'skipped';

/**
 * A scorer's result as emitted, or an `error` result saying what was wrong with it: custom
 * scorers may return nothing, a label outside the four, or a score outside [0, 1], and
 * none of that may reach a span, a metric or the verdict of the other scorers.
 */
export function validResult(scorer: Scorer, result: ScorerResult | null | undefined): ScorerResult {
  const problem = resultProblem(result);
  if (problem === undefined) return result!;
  return errorResult(scorer, new Error(`scorer ${scorer.name} returned an invalid result: ${problem}`));
}

function resultProblem(result: ScorerResult | null | undefined): string | undefined {
  if (result === null || typeof result !== 'object') return `expected a result object, got ${String(result)}`;
  if (!isLabel(result.label))
    return `label ${JSON.stringify(result.label)} is not pass, fail, error or skipped`;
  if (typeof result.score !== 'number' || !(result.score >= 0 && result.score <= 1))
    return `score ${String(result.score)} is not a number in [0, 1]`;
  if (typeof result.passed !== 'boolean') return 'passed is not a boolean';
  if (result.reason !== null && result.reason !== undefined && typeof result.reason !== 'string')
    return 'reason is neither a string nor null';
  if (result.detail !== undefined && (result.detail === null || typeof result.detail !== 'object'))
    return 'detail is not an object';
  return undefined;
}

function withEscalation(result: ScorerResult, reason: string): ScorerResult {
  return { ...result, detail: { ...result.detail, escalated: reason } };
}

/** Whether every scorer that ran passed; null when none ran (all `skipped`). */
function allPassed(results: ScorerResult[]): boolean | null {
  let judged = false;
  for (const r of results) {
    if (r.label === 'skipped') continue;
    if (!(r.passed && r.label === 'pass')) return false;
    judged = true;
  }
  return judged ? true : null;
}

function orderByRule(results: ScorerResult[], rule: Rule): ScorerResult[] {
  // Results usually come in rule order already: check before indexing and sorting.
  let previous = -1;
  let ordered = true;
  for (const r of results) {
    const at = lastIndexOf(rule.scorers, r.scorer);
    if (at < previous) {
      ordered = false;
      break;
    }
    previous = at;
  }
  if (ordered) return results;
  const index = new Map(rule.scorers.map((s, i) => [s.name, i]));
  return results
    .map((r, i) => ({ r, i }))
    .sort((a, b) => (index.get(a.r.scorer) ?? 1e9) - (index.get(b.r.scorer) ?? 1e9) || a.i - b.i)
    .map((x) => x.r);
}

/** The index the sort key map below gives `name` (the last scorer of that name), or 1e9. */
function lastIndexOf(scorers: readonly Scorer[], name: string): number {
  for (let i = scorers.length - 1; i >= 0; i--) if (scorers[i]!.name === name) return i;
  return 1e9;
}
