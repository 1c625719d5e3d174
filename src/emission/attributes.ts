import type { Attributes } from '@opentelemetry/api';
import {
  ATTR_TOOLWATCH_EVALUATION_FAILED,
  ATTR_TOOLWATCH_EVALUATION_PASSED,
  ATTR_TOOLWATCH_EVALUATION_POLICY_DIGEST,
  ATTR_TOOLWATCH_EVALUATION_RULE,
  ATTR_TOOLWATCH_KEEP,
} from '../semconv.js';
import type { ScorerResult, Verdict } from '../types.js';

/** Names of the scorers that failed or errored, in result order, each once. */
export function failedScorers(results: readonly ScorerResult[]): string[] {
  const failed: string[] = [];
  for (const result of results) {
    if ((result.label === 'fail' || result.label === 'error') && !failed.includes(result.scorer)) {
      failed.push(result.scorer);
    }
  }
  return failed;
}

/**
 * The summary attributes (docs/metrics.md) of one verdict, written on the evaluated agent
 * span (or on the `evaluate {agent}` span when the verdict is completed later).
 */
export function verdictAttributes(verdict: Verdict): Attributes {
  const failed = failedScorers(verdict.results);
  return {
    // Absent when no scorer judged the run: neither a pass nor a failure.
    ...(verdict.passed !== null ? { [ATTR_TOOLWATCH_EVALUATION_PASSED]: verdict.passed } : {}),
    [ATTR_TOOLWATCH_EVALUATION_FAILED]: failed,
    [ATTR_TOOLWATCH_EVALUATION_RULE]: verdict.rule,
    [ATTR_TOOLWATCH_EVALUATION_POLICY_DIGEST]: verdict.policy_digest,
    // A tail-sampling hint: keep every trace where something went wrong.
    [ATTR_TOOLWATCH_KEEP]: failed.length > 0 || verdict.passed === false,
  };
}
