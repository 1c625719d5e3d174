// The implementation as of dd40200, kept verbatim (imports aside) as the oracle of
// scorers-differential.test.ts: the optimised code must give byte-identical results.

import type { ScorerResult } from '../../../src/types.js';

/** The identity fields every result of a scorer carries. */
export interface ScorerIdentity {
  readonly name: string;
  readonly kind: string;
  readonly digest: string;
}

/** The scorer-specific part of a result. */
export interface ScoreOutcome {
  passed: boolean;
  score: number;
  reason: string | null;
  detail: Record<string, unknown>;
}

/** A finished result: label `pass`/`fail` from `passed`. */
export function scorerResult(scorer: ScorerIdentity, outcome: ScoreOutcome): ScorerResult {
  return {
    scorer: scorer.name,
    kind: scorer.kind,
    passed: outcome.passed,
    score: outcome.score,
    label: outcome.passed ? 'pass' : 'fail',
    reason: outcome.reason,
    digest: scorer.digest,
    detail: outcome.detail,
  };
}

/** The result of a scorer that threw: label `error`, the message as reason, never thrown. */
export function errorResult(scorer: ScorerIdentity, error: unknown): ScorerResult {
  const message = error instanceof Error ? error.message : String(error);
  return {
    scorer: scorer.name,
    kind: scorer.kind,
    passed: false,
    score: 0,
    label: 'error',
    reason: message,
    digest: scorer.digest,
    detail: { error: message },
  };
}

/** Runs a synchronous scoring function and turns an exception into an `error` result. */
export function scoreSafely(scorer: ScorerIdentity, evaluate: () => ScoreOutcome): ScorerResult {
  try {
    return scorerResult(scorer, evaluate());
  } catch (error) {
    return errorResult(scorer, error);
  }
}
