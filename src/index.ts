// Public API of toolwatch. Named exports only: everything not listed here is internal.

export { spansFromOtlpJson } from './conventions/from-otlp-json.js';
export { fromReadableSpan } from './conventions/from-readable-span.js';
export { ToolwatchMetrics } from './emission/metrics.js';
export type { GateOutcome, VerdictSummary } from './evaluation/check-gates.js';
export { checkGates, summarizeVerdicts } from './evaluation/check-gates.js';
export type { EvaluateTracesOptions } from './evaluation/evaluate-traces.js';
export { evaluateTraces } from './evaluation/evaluate-traces.js';
export { isSampled } from './evaluation/sampling.js';
export type { PolicyDefinition, RuleDefinition } from './policy/define-policy.js';
export { definePolicy } from './policy/define-policy.js';
export { loadPolicy, parsePolicyText } from './policy/load-policy.js';
export { parsePolicy } from './policy/parse-policy.js';
export type { PolicyProblem } from './policy/policy-error.js';
export { PolicyError } from './policy/policy-error.js';
export type { ToolwatchSpanProcessorOptions } from './processor/toolwatch-span-processor.js';
export { ToolwatchSpanProcessor } from './processor/toolwatch-span-processor.js';
export { reconstructTrace, reconstructTraces } from './reconstruction/reconstruct-trace.js';
export type { LanguageModelLike, LlmJudgeOptions } from './scorers/llm-judge.js';
export { llmJudge } from './scorers/llm-judge.js';
export type { ReliabilityOptions } from './scorers/reliability.js';
export { reliability } from './scorers/reliability.js';
export type { ToolCallsOptions } from './scorers/tool-calls.js';
export { toolCalls } from './scorers/tool-calls.js';
export type { ToolOrderOptions } from './scorers/tool-order.js';
export { toolOrder } from './scorers/tool-order.js';
export type { TrajectoryOptions } from './scorers/trajectory.js';
export { trajectory } from './scorers/trajectory.js';
export type {
  AgentRun,
  ArgsSource,
  Gate,
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
  RuleMatch,
  ScoreContext,
  Scorer,
  ScorerResult,
  SpanEventLike,
  SpanLike,
  StatusCode,
  SyncScorer,
  ToolDefinition,
  ToolExecution,
  ToolRequest,
  ToolStatus,
  Verdict,
} from './types.js';
export { configDigest } from './util/digest.js';
export { PyFloat } from './util/python-json.js';
