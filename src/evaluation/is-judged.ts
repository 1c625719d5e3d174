import type { Verdict } from '../types.js';

/**
 * Whether some scorer judged the verdict's run. A record of only `skipped` results (out of the
 * policy's sample, over a span limit, a judge over budget alone) judged nothing: it carries
 * `passed: null`, neither a pass nor a failure — counted as a pass, a file scored under
 * sampling or an unjudged rollout grid held its gates on nothing.
 */
export function isJudged(verdict: Verdict): boolean {
  for (const r of verdict.results) if (r.label !== 'skipped') return true;
  return false;
}
