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
  /** Judged runs and those that passed, by rule (for `pass_rate.rules`). */
  byRule?: Record<string, { runs: number; passed: number }>;
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
    byRule: {},
  };
}

/** Adds `from` into `into` (the summaries of `--jobs` threads). */
export function addSummary(into: VerdictSummary, from: VerdictSummary): void {
  for (const key of Object.keys(into) as Array<keyof VerdictSummary>) {
    if (key === 'byRule') continue;
    into[key] += from[key] as number;
  }
  for (const [rule, counts] of Object.entries(from.byRule ?? {})) {
    into.byRule ??= {};
    const mine = ruleCounts(into.byRule, rule);
    mine.runs += counts.runs;
    mine.passed += counts.passed;
  }
}

/**
 * The counts of `rule`, made on first use as an own property: rule names come from verdicts
 * (a baseline file), and `__proto__` must be a rule like any other.
 */
function ruleCounts(
  byRule: Record<string, { runs: number; passed: number }>,
  rule: string,
): { runs: number; passed: number } {
  if (Object.hasOwn(byRule, rule)) return byRule[rule]!;
  const counts = { runs: 0, passed: 0 };
  Object.defineProperty(byRule, rule, {
    value: counts,
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return counts;
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
    sum.byRule ??= {};
    const rule = ruleCounts(sum.byRule, v.rule);
    rule.runs++;
    if (v.passed) rule.passed++;
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
      case 'pass_rate':
        value = ratio(now.passed, now.runs);
        break;
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
    if (gate === 'pass_rate' && 'rules' in threshold) {
      // The overall minimum, then one outcome per named rule.
      out.push(...checkGates(now, { ...policy, gates: { pass_rate: { min: threshold.min } } }));
      for (const [rule, min] of Object.entries(threshold.rules)) {
        const counts = now.byRule && Object.hasOwn(now.byRule, rule) ? now.byRule[rule] : undefined;
        const rate = counts ? ratio(counts.passed, counts.runs) : null;
        const name = `pass_rate[${rule}]`;
        const base = { gate: name, value: rate, threshold: { min } };
        if (now.runs === 0) out.push({ ...base, status: 'failed', held: false, note: 'nothing was scored' });
        else if (rate === null)
          out.push({ ...base, status: 'failed', held: false, note: 'no run of this rule was judged' });
        else {
          const held = rate >= min - EPSILON;
          out.push({ ...base, status: held ? 'held' : 'failed', held });
        }
      }
      continue;
    }
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

/** The rule `--gate` applies to a policy without gates: every scored run passes. */
export const EVERY_RUN_PASSES: Readonly<Record<string, Gate>> = Object.freeze({ pass_rate: { min: 1 } });

/**
 * The gates `--gate` checks: the policy's, or `EVERY_RUN_PASSES` when it has none (a gate
 * that checks nothing would hold while runs fail). `implicit` says which, for the output.
 */
export function gatesApplied(policy: Policy): { policy: Policy; implicit: boolean } {
  if (Object.keys(policy.gates).length > 0) return { policy, implicit: false };
  return { policy: { ...policy, gates: { ...EVERY_RUN_PASSES } }, implicit: true };
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
