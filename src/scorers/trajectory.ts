import type { AgentRun, MisuseKind, ScoreContext, Scorer, ScorerResult, SyncScorer } from '../types.js';
import { roundHalfEven } from '../util/round-half-even.js';
import type { ArgRule, CompiledField } from './arg-rules.js';
import { explainErrors, type ResultMisuse, type ResultReader } from './result-reader.js';
import { errorResult } from './scorer-result.js';
import {
  checkArguments,
  checkCallBudget,
  checkForbiddenTools,
  checkMissingTools,
  checkOrder,
  checkRepeatedCalls,
  perToolReport,
  planTrajectory,
  precisionRecall,
  type TrajectoryError,
  type TrajectoryPlan,
  tallyCalls,
} from './trajectory-checks.js';
import {
  resolveTrajectory,
  TRAJECTORY_KIND,
  type TrajectoryConfig,
  type TrajectoryOptions,
} from './trajectory-config.js';

/**
 * `trajectory`: the eval-dataset trajectory evaluator (docs/semantics.md, "trajectory")
 * on the calls of a reconstructed run, plus order modes, precision/recall, loop detection
 * and per-tool retry accounting. The options are resolved in `trajectory-config.ts`, the
 * checks are in `trajectory-checks.ts`, one function each.
 */

/** Build the scorer from a parsed policy entry. */
export function trajectoryFromConfig(config: TrajectoryConfig): SyncScorer {
  const w = config.weights;
  return trajectory({
    name: config.name,
    expectedTools: config.expected_tools,
    forbiddenTools: config.forbidden_tools,
    maxCalls: config.max_calls,
    argConstraints: config.arg_constraints as Record<string, Record<string, ArgRule>> | undefined,
    expectedOrder: config.expected_order,
    weights: w && {
      toolSelection: w.tool_selection,
      arguments: w.arguments,
      order: w.order,
      callBudget: w.call_budget,
    },
    passThreshold: config.pass_threshold,
    scope: config.scope,
    risk: config.risk,
    intent: config.intent,
    order: config.order,
    maxRepeats: config.max_repeats,
    sampling: config.sampling,
  });
}

export function trajectory(options: TrajectoryOptions): SyncScorer {
  const resolved = resolveTrajectory(options);
  const plan = planTrajectory(resolved);
  const { name, digest, risk, intent } = resolved;
  const scorer: SyncScorer = {
    name,
    kind: TRAJECTORY_KIND,
    digest,
    async: false,
    ...(resolved.sampling ? { sampling: { ratio: resolved.sampling.ratio } } : {}),
    config: resolved.config,
    ...(risk !== undefined || intent !== undefined
      ? { tags: { ...(risk ? { risk } : {}), ...(intent !== undefined ? { intent } : {}) } }
      : {}),
    // Arguments of constrained tools' calls; every call's with max_repeats (identical calls).
    argumentsRead: resolved.maxRepeats !== undefined ? 'all' : new Set(Object.keys(resolved.argConstraints)),
    score(run: AgentRun, context?: ScoreContext): ScorerResult {
      try {
        return scoreTrajectory(plan, run, context?.redact?.values === true);
      } catch (e) {
        return errorResult({ name, kind: TRAJECTORY_KIND, digest }, e);
      }
    },
  };
  limitsByScorer.set(scorer, {
    forbidden: new Set(resolved.forbiddenTools),
    expected: new Set(resolved.expectedTools),
    ...(resolved.maxCalls !== undefined ? { maxCalls: resolved.maxCalls } : {}),
    ...(resolved.maxRepeats !== undefined ? { maxRepeats: resolved.maxRepeats } : {}),
    argRules: new Map(plan.constrained.map((c) => [c.tool, c.fields])),
  });
  return scorer;
}

/** What live misuse detection and the guard need from a trajectory scorer. */
export interface TrajectoryLimits {
  forbidden: Set<string>;
  expected: Set<string>;
  maxCalls?: number;
  maxRepeats?: number;
  /** `arg_constraints`, compiled: what a call's arguments must hold, by tool. Shared, never written. */
  argRules: ReadonlyMap<string, readonly CompiledField[]>;
}

const limitsByScorer = new WeakMap<Scorer, TrajectoryLimits>();

/** The live-checkable limits of a scorer built by `trajectory`, or undefined for any other scorer. */
export function trajectoryLimits(scorer: Scorer): TrajectoryLimits | undefined {
  const limits = limitsByScorer.get(scorer);
  if (!limits) return undefined;
  return {
    forbidden: new Set(limits.forbidden),
    expected: new Set(limits.expected),
    ...(limits.maxCalls !== undefined ? { maxCalls: limits.maxCalls } : {}),
    ...(limits.maxRepeats !== undefined ? { maxRepeats: limits.maxRepeats } : {}),
    argRules: limits.argRules,
  };
}

/** Runs every check on the run's calls and weighs their components into the result. */
function scoreTrajectory(plan: TrajectoryPlan, run: AgentRun, redact: boolean): ScorerResult {
  const { weights, passThreshold, name, digest } = plan.options;
  const tally = tallyCalls(plan, run);
  const errors: TrajectoryError[] = [];
  const noneMissing = checkMissingTools(plan, tally, errors);
  const noneForbidden = checkForbiddenTools(plan, tally, errors);
  const withinBudget = checkCallBudget(plan, tally, errors);
  const noRepeats = checkRepeatedCalls(plan, tally, errors);
  const args = checkArguments(plan, tally, redact, errors);
  const orderPass = checkOrder(plan, tally, errors);

  const toolSelectionPass = noneForbidden && noneMissing;
  const budgetPass = withinBudget && noRepeats;
  const weighted =
    weights.tool_selection * (toolSelectionPass ? 1 : 0) +
    weights.arguments * args.accuracy +
    weights.order * (orderPass ? 1 : 0) +
    weights.call_budget * (budgetPass ? 1 : 0);
  const score = Math.min(1, Math.max(0, roundHalfEven(weighted, 4)));
  const passed = score >= passThreshold && errors.length === 0;
  const { precision, recall } = precisionRecall(plan, tally);
  return {
    scorer: name,
    kind: TRAJECTORY_KIND,
    passed,
    score,
    label: passed ? 'pass' : 'fail',
    reason: errors.length > 0 ? reasonOf(errors) : passed ? null : `score ${score} < ${passThreshold}`,
    digest,
    detail: {
      score,
      passed,
      tool_selection_pass: toolSelectionPass,
      arg_accuracy: roundHalfEven(args.accuracy, 4),
      order_pass: orderPass,
      call_budget_pass: budgetPass,
      errors,
      calls: tally.calls.length,
      precision,
      recall,
      per_tool: perToolReport(plan, tally, args),
    },
  };
}

const REASON_ERRORS = 10;

/** The first errors' messages; `detail.errors` keeps them all. */
function reasonOf(errors: readonly TrajectoryError[]): string {
  let reason = errors[0]!.message;
  const shown = Math.min(errors.length, REASON_ERRORS);
  for (let i = 1; i < shown; i++) reason += '; ' + errors[i]!.message;
  if (errors.length > REASON_ERRORS) reason += `; … (${errors.length - REASON_ERRORS} more errors)`;
  return reason;
}

/** The error codes that are misuse, and their kind. */
const MISUSE_BY_CODE: Readonly<Record<string, MisuseKind>> = {
  forbidden_tool: 'forbidden',
  call_budget_exceeded: 'call_budget',
  repeated_call: 'repeated_call',
};

/** How a trajectory result explains itself without values, and the misuse its errors show. */
export const trajectoryResults: ResultReader = {
  explainRedacted: explainErrors,
  misuse(result: ScorerResult): readonly ResultMisuse[] {
    const errors = result.detail?.errors;
    if (!Array.isArray(errors)) return [];
    const misuse: ResultMisuse[] = [];
    for (const error of errors as Array<Partial<TrajectoryError> | null>) {
      const kind = MISUSE_BY_CODE[error?.code ?? ''];
      if (kind !== undefined) misuse.push({ kind, tool: typeof error!.tool === 'string' ? error!.tool : '' });
    }
    return misuse;
  },
};
