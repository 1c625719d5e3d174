import type { Gate, Policy, ScorerResult, Verdict } from '../types.js';

/** One gate's outcome. `held` is true for gates that could not be measured (`value: null`). */
export interface GateOutcome {
  gate: string;
  /** The measured value, or null when there was nothing to measure (no trajectory results, no baseline). */
  value: number | null;
  /** The baseline's value, for the `*_vs_baseline` gates. */
  baseline?: number | null;
  threshold: Gate;
  held: boolean;
  /** Why a gate could not be measured. */
  note?: string;
}

/** The aggregates gates are computed from (seed 003's eval-dataset report). */
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

/** Aggregates over verdicts; `policy` supplies the scorers' risk tags. */
export function summarizeVerdicts(verdicts: readonly Verdict[], policy?: Policy): VerdictSummary {
  const risk = new Map<string, string | undefined>();
  for (const rule of policy?.rules ?? []) {
    for (const s of rule.scorers) {
      risk.set(`${rule.name}\u0000${s.name}`, s.tags?.risk ?? (s.config.risk as string | undefined));
    }
  }
  const sum: VerdictSummary = {
    runs: verdicts.length,
    passed: 0,
    trajectoryResults: 0,
    toolSelectionPasses: 0,
    argAccuracySum: 0,
    forbiddenToolCalls: 0,
    highRiskResults: 0,
    highRiskPasses: 0,
    callsSum: 0,
  };
  for (const v of verdicts) {
    if (v.passed) sum.passed++;
    for (const r of v.results) {
      if (r.kind !== 'trajectory' || (r.label !== 'pass' && r.label !== 'fail')) continue;
      sum.trajectoryResults++;
      const d = r.detail;
      if (d.tool_selection_pass === true) sum.toolSelectionPasses++;
      if (typeof d.arg_accuracy === 'number') sum.argAccuracySum += d.arg_accuracy;
      if (typeof d.calls === 'number') sum.callsSum += d.calls;
      sum.forbiddenToolCalls += forbiddenCount(r);
      const level = risk.get(`${v.rule}\u0000${r.scorer}`);
      if (level === 'high' || level === 'critical') {
        sum.highRiskResults++;
        if (r.passed) sum.highRiskPasses++;
      }
    }
  }
  return sum;
}

function forbiddenCount(result: ScorerResult): number {
  const errors = result.detail.errors;
  return Array.isArray(errors)
    ? errors.filter((e) => (e as { code?: unknown })?.code === 'forbidden_tool').length
    : 0;
}

/**
 * Checks the policy's gates (interfaces.md) against verdicts, and against a baseline's
 * verdicts for `avg_calls_vs_baseline` and `regression_vs_baseline`. A gate with nothing to
 * measure holds, with a note, so a missing baseline never fails a build by itself.
 */
export function checkGates(
  verdicts: readonly Verdict[],
  policy: Policy,
  baseline?: readonly Verdict[],
): GateOutcome[] {
  const now = summarizeVerdicts(verdicts, policy);
  const before = baseline ? summarizeVerdicts(baseline, policy) : undefined;
  const ratio = (a: number, b: number) => (b === 0 ? null : a / b);
  const out: GateOutcome[] = [];
  for (const [gate, threshold] of Object.entries(policy.gates)) {
    let value: number | null = null;
    let base: number | null | undefined;
    let note: string | undefined;
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
        note = 'unknown gate';
    }
    if (value === null && note === undefined) note = 'nothing to measure';
    if (base === null && note === undefined)
      note = baseline ? 'nothing to measure in the baseline' : 'no baseline';
    out.push({
      gate,
      value,
      ...(base !== undefined ? { baseline: base } : {}),
      threshold,
      held: holds(threshold, value, base),
      ...(note ? { note } : {}),
    });
  }
  return out;
}

/** Rounding slack, so that 0.9 − 0.88 counts as a drop of 0.02. */
const EPSILON = 1e-9;

function holds(threshold: Gate, value: number | null, base: number | null | undefined): boolean {
  if (value === null) return true;
  if ('min' in threshold) return value >= threshold.min - EPSILON;
  if ('max' in threshold) return value <= threshold.max + EPSILON;
  if (base === null || base === undefined) return true;
  if ('max_ratio' in threshold)
    return base === 0 ? value === 0 : value / base <= threshold.max_ratio + EPSILON;
  return base - value <= threshold.max_drop + EPSILON;
}
