import type { Gate, Policy, ScorerResult, Verdict } from '../types.js';
import { isJudged } from './is-judged.js';

/**
 * One gate's outcome. `held` (kept for callers of the first version) is `status !== 'failed'`:
 * a skipped gate does not fail a build by itself.
 */
export interface GateOutcome {
  gate: string;
  /** The measured value, or null when there was nothing to measure. */
  value: number | null;
  /** The baseline's value, for the `*_vs_baseline` gates. */
  baseline?: number | null;
  threshold: Gate;
  /**
   * `failed` also when the gate's population is missing from a run set that was scored (a
   * `tool_selection_accuracy` gate over runs without trajectory results measures nothing);
   * `skipped` when a comparison has no baseline or a subset is legitimately empty
   * (no high-risk results).
   */
  status: 'held' | 'failed' | 'skipped';
  held: boolean;
  /** Why a gate was skipped or could not be measured. */
  note?: string;
}

/** The aggregates gates are computed from (an eval-dataset report). */
export interface VerdictSummary {
  runs: number;
  passed: number;
  /** Trajectory results that ran (pass/fail). */
  trajectoryResults: number;
  toolSelectionPasses: number;
  argAccuracySum: number;
  forbiddenToolCalls: number;
  highRiskResults: number;
  highRiskPasses: number;
  callsSum: number;
}

export function emptySummary(): VerdictSummary {
  return {
    runs: 0,
    passed: 0,
    trajectoryResults: 0,
    toolSelectionPasses: 0,
    argAccuracySum: 0,
    forbiddenToolCalls: 0,
    highRiskResults: 0,
    highRiskPasses: 0,
    callsSum: 0,
  };
}

/**
 * Adds verdicts one at a time, so a stream of any length is summarised in constant memory.
 * Risk comes from the policy (the tags of the rule's scorer that produced the result).
 */
export class VerdictSummarizer {
  readonly summary: VerdictSummary = emptySummary();
  private readonly risk = new Map<string, string | undefined>();

  constructor(policy?: Policy) {
    for (const rule of policy?.rules ?? []) {
      for (const s of rule.scorers) {
        this.risk.set(`${rule.name}\u0000${s.name}`, s.tags?.risk ?? (s.config.risk as string | undefined));
      }
    }
  }

  add(v: Verdict): void {
    // A record judged by no scorer is no run of the pass rate (regression_vs_baseline).
    if (!isJudged(v)) return;
    const sum = this.summary;
    sum.runs++;
    if (v.passed) sum.passed++;
    for (const r of v.results) {
      if (r.kind !== 'trajectory' || (r.label !== 'pass' && r.label !== 'fail')) continue;
      sum.trajectoryResults++;
      const d = r.detail;
      if (d.tool_selection_pass === true) sum.toolSelectionPasses++;
      if (typeof d.arg_accuracy === 'number') sum.argAccuracySum += d.arg_accuracy;
      if (typeof d.calls === 'number') sum.callsSum += d.calls;
      sum.forbiddenToolCalls += forbiddenCount(r);
      const level = this.risk.get(`${v.rule}\u0000${r.scorer}`);
      if (level === 'high' || level === 'critical') {
        sum.highRiskResults++;
        if (r.passed) sum.highRiskPasses++;
      }
    }
  }
}

/** Aggregates over verdicts; `policy` supplies the scorers' risk tags. */
export function summarizeVerdicts(verdicts: Iterable<Verdict>, policy?: Policy): VerdictSummary {
  const summarizer = new VerdictSummarizer(policy);
  for (const v of verdicts) summarizer.add(v);
  return summarizer.summary;
}

function forbiddenCount(result: ScorerResult): number {
  const errors = result.detail.errors;
  return Array.isArray(errors)
    ? errors.filter((e) => (e as { code?: unknown })?.code === 'forbidden_tool').length
    : 0;
}

/** Gates whose population is the trajectory results: with none, they measure nothing. */
const TRAJECTORY_GATES = new Set([
  'tool_selection_accuracy',
  'argument_accuracy',
  'forbidden_tool_calls',
  'avg_calls_vs_baseline',
]);

/**
 * Checks the policy's gates (docs/policy.md) against verdicts (or their summary), and against
 * a baseline's for `avg_calls_vs_baseline` and `regression_vs_baseline`.
 *
 * - A comparison gate without a baseline is `skipped — no baseline`.
 * - `high_risk_pass_rate` with no high-risk results is `skipped`.
 * - A gate over trajectory results when none ran (runs were scored by other scorers only)
 *   `failed`: the policy promises a measurement it cannot make.
 * - Zero runs: every gate `failed` with `nothing was scored` — an empty or unreadable input
 *   is never green.
 */
export function checkGates(
  verdicts: Iterable<Verdict> | VerdictSummary,
  policy: Policy,
  baseline?: Iterable<Verdict> | VerdictSummary,
): GateOutcome[] {
  const now = isSummary(verdicts) ? verdicts : summarizeVerdicts(verdicts, policy);
  const before =
    baseline === undefined ? undefined : isSummary(baseline) ? baseline : summarizeVerdicts(baseline, policy);
  const ratio = (a: number, b: number) => (b === 0 ? null : a / b);
  const out: GateOutcome[] = [];
  for (const [gate, threshold] of Object.entries(policy.gates)) {
    let value: number | null = null;
    let base: number | null | undefined;
    switch (gate) {
      case 'tool_selection_accuracy':
        value = ratio(now.toolSelectionPasses, now.trajectoryResults);
        break;
      case 'argument_accuracy':
        value = ratio(now.argAccuracySum, now.trajectoryResults);
        break;
      case 'forbidden_tool_calls':
        value = now.trajectoryResults === 0 ? null : now.forbiddenToolCalls;
        break;
      case 'high_risk_pass_rate':
        value = ratio(now.highRiskPasses, now.highRiskResults);
        break;
      case 'avg_calls_vs_baseline':
        value = ratio(now.callsSum, now.trajectoryResults);
        base = before ? ratio(before.callsSum, before.trajectoryResults) : null;
        break;
      case 'regression_vs_baseline':
        value = ratio(now.passed, now.runs);
        base = before ? ratio(before.passed, before.runs) : null;
        break;
      default:
        out.push({ gate, value: null, threshold, status: 'failed', held: false, note: 'unknown gate' });
        continue;
    }
    const outcome = (status: GateOutcome['status'], note?: string): GateOutcome => ({
      gate,
      value,
      ...(base !== undefined ? { baseline: base } : {}),
      threshold,
      status,
      held: status !== 'failed',
      ...(note ? { note } : {}),
    });
    if (now.runs === 0) out.push(outcome('failed', 'nothing was scored'));
    else if (value === null && TRAJECTORY_GATES.has(gate))
      out.push(outcome('failed', 'nothing to measure: no trajectory results'));
    else if (value === null) out.push(outcome('skipped', 'no high-risk results'));
    else if (base === null)
      out.push(outcome('skipped', before ? 'nothing to measure in the baseline' : 'no baseline'));
    else out.push(outcome(holds(threshold, value, base) ? 'held' : 'failed'));
  }
  return out;
}

function isSummary(value: unknown): value is VerdictSummary {
  return (
    value !== null &&
    typeof value === 'object' &&
    !(Symbol.iterator in value) &&
    typeof (value as VerdictSummary).runs === 'number'
  );
}

/** Rounding slack, so that 0.9 − 0.88 counts as a drop of 0.02. */
const EPSILON = 1e-9;

function holds(threshold: Gate, value: number, base: number | undefined): boolean {
  if ('min' in threshold) return value >= threshold.min - EPSILON;
  if ('max' in threshold) return value <= threshold.max + EPSILON;
  if (base === undefined) return true;
  if ('max_ratio' in threshold)
    return base === 0 ? value === 0 : value / base <= threshold.max_ratio + EPSILON;
  return base - value <= threshold.max_drop + EPSILON;
}
