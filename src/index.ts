// Public API of toolwatch: what users need to attach the processor, load or define a policy,
// score recorded traces and check gates. Named exports only; everything else is internal.

import type { EvaluateTracesOptions as EvaluateTracesInternalOptions } from './evaluation/evaluate-traces.js';
import {
  type EvaluatedTraces,
  evaluateTraces as evaluateTracesInternal,
} from './evaluation/evaluate-traces.js';
import type { Policy } from './types.js';

export type { EvalCase } from './cases/eval-case.js';
export { CasesError, loadCases } from './cases/load-cases.js';
export { spansFromOtlpJson } from './conventions/from-otlp-json.js';
export { fromReadableSpan } from './conventions/from-readable-span.js';
export type { GateOutcome, VerdictSummary } from './evaluation/check-gates.js';
export { checkGates } from './evaluation/check-gates.js';
export type { EvaluatedTraces, UnmatchedRun } from './evaluation/evaluate-traces.js';
export type { PolicyDefinition, RuleDefinition } from './policy/define-policy.js';
export { definePolicy } from './policy/define-policy.js';
export { loadPolicy } from './policy/load-policy.js';
export type { PolicyProblem } from './policy/policy-error.js';
export { PolicyError } from './policy/policy-error.js';
export type { ToolwatchSpanProcessorOptions } from './processor/toolwatch-span-processor.js';
export { ToolwatchSpanProcessor } from './processor/toolwatch-span-processor.js';
export { reconstructTrace } from './reconstruction/reconstruct-trace.js';
export type { GridThresholds } from './rollouts/calibration-grid.js';
export type {
  RolloutAgent,
  RolloutContext,
  RolloutRecord,
  RunRolloutsOptions,
  RunRolloutsResult,
} from './rollouts/run-rollouts.js';
export { runRollouts } from './rollouts/run-rollouts.js';
export type { LanguageModelLike, LlmJudgeOptions } from './scorers/llm-judge.js';
export { llmJudge } from './scorers/llm-judge.js';
export type { ReliabilityOptions } from './scorers/reliability.js';
export { reliability } from './scorers/reliability.js';
export type { ToolCallsOptions } from './scorers/tool-calls.js';
export { toolCalls } from './scorers/tool-calls.js';
export type { ToolOrderOptions } from './scorers/tool-order.js';
export { toolOrder } from './scorers/tool-order.js';
export { trajectory } from './scorers/trajectory.js';
export type { TrajectoryOptions } from './scorers/trajectory-config.js';
export type {
  AgentRun,
  ArgsSource,
  Gate,
  GuardCheck,
  GuardMode,
  HistoryCall,
  JudgeBudget,
  JudgeFunction,
  JudgeRequest,
  MisuseEvent,
  MisuseKind,
  Policy,
  Problem,
  ReconstructedTrace,
  RedactOptions,
  ResultLabel,
  Rule,
  RuleGuard,
  RuleMatch,
  ScoreContext,
  Scorer,
  ScorerResult,
  SpanEventLike,
  SpanLike,
  StatusCode,
  SyncScorer,
  ToolCall,
  ToolCallDecision,
  ToolDefinition,
  ToolExecution,
  ToolRequest,
  ToolStatus,
  Verdict,
} from './types.js';

/** Options of `evaluateTraces` (the internal shared judge budget is not part of the API). */
export type EvaluateTracesOptions = Omit<EvaluateTracesInternalOptions, 'limiter'>;

/**
 * Scores recorded traces offline with the processor's code path: OTLP/JSON (object, text,
 * JSON Lines, or an array of those) or `SpanLike[]` in, one verdict per (run, matching rule)
 * out, ordered by trace id, run start, span id and rule. The array also carries `runs` (the
 * outermost agent runs found) and `unmatched` (those no rule matched): an empty result then
 * tells "no agent run in these spans" from "no rule for these agents".
 */
export const evaluateTraces: (
  input: unknown,
  policy: Policy,
  options?: EvaluateTracesOptions,
) => Promise<EvaluatedTraces> = evaluateTracesInternal;
