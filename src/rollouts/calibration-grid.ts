import type { GridClass, GridRow, RolloutGrid } from '../report/report-types.js';

export interface GridThresholds {
  /** A case whose pass ratio is at least this is `saturated-pass`. Default 1 (every rollout passed). */
  saturatedPass?: number;
  /** A case whose pass ratio is at most this is `saturated-fail`. Default 0 (no rollout passed). */
  saturatedFail?: number;
}

/**
 * agno's calibration classes for `n_passed / n_scored` per case: saturated-pass (too easy
 * to teach anything), saturated-fail (too hard), learning-zone in between (agno's logs read
 * 5/6 and 4/6 as 0.83 and 0.67 — rounded ratios of rows in the learning zone). With the
 * defaults, one failure in k rollouts already puts a case in the learning zone.
 */
export function classify(passed: number, scored: number, thresholds: GridThresholds = {}): GridClass {
  if (scored === 0) return 'unscored';
  const ratio = passed / scored;
  if (ratio >= (thresholds.saturatedPass ?? 1) - 1e-12) return 'saturated-pass';
  if (ratio <= (thresholds.saturatedFail ?? 0) + 1e-12) return 'saturated-fail';
  return 'learning-zone';
}

export function buildGrid(
  k: number,
  counts: ReadonlyArray<{ case: string; passed: number; scored: number; errors: number }>,
  thresholds: GridThresholds = {},
): RolloutGrid {
  const rows: GridRow[] = counts.map((c) => ({ ...c, class: classify(c.passed, c.scored, thresholds) }));
  const scored = rows.reduce((a, r) => a + r.scored, 0);
  const passed = rows.reduce((a, r) => a + r.passed, 0);
  return {
    k,
    rows,
    passRate: scored === 0 ? null : passed / scored,
    thresholds: {
      saturatedPass: thresholds.saturatedPass ?? 1,
      saturatedFail: thresholds.saturatedFail ?? 0,
    },
  };
}
