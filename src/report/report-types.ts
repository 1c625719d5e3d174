import type { GateOutcome } from '../evaluation/check-gates.js';
import type { RebuiltRun } from './rebuilt-run.js';
import type { ScorerExpectations } from './scorer-expectations.js';

/** Runs (or results) and how many passed; the pass rate is `passed / total`. */
export interface RateRow {
  key: string;
  total: number;
  passed: number;
}

export interface ScorerRow {
  rule: string;
  scorer: string;
  kind: string;
  /** Results that ran (pass, fail or error); skipped ones are counted apart. */
  ran: number;
  passed: number;
  errors: number;
  skipped: number;
  scoreSum: number;
}

/** Per expected tool, from the trajectory scorer's `per_tool` and `errors`. */
export interface ToolRow {
  tool: string;
  /** Trajectory results in which the tool was expected. */
  expected: number;
  calls: number;
  firstCallCorrect: number;
  finalSuccess: number;
  retries: number;
  /** Calls of the tool where it was forbidden. */
  forbidden: number;
  /** Failed argument checks on its first call. */
  argMismatches: number;
}

export interface FailingRun {
  trace_id: string;
  span_id: string;
  agent: string;
  rule: string;
  file?: string;
  /** `scorer: reason` for each failed or errored result (redacted as the policy says). */
  reasons: string[];
  /** Every scorer of the run, in the verdict's order, with each expectation it found met or unmet. */
  expectations?: ScorerExpectations[];
  /** What toolwatch rebuilt of the run (HTML reports of `toolwatch score`). */
  rebuilt?: RebuiltRun;
}

export type GridClass = 'saturated-pass' | 'saturated-fail' | 'learning-zone' | 'unscored';

export interface GridRow {
  case: string;
  passed: number;
  scored: number;
  /** Rollouts that errored or timed out (counted as scored failures). */
  errors: number;
  class: GridClass;
}

export interface RolloutGrid {
  k: number;
  rows: GridRow[];
  /** Passed / scored over every rollout. */
  passRate: number | null;
  /** The thresholds the classes were drawn with. */
  thresholds: { saturatedPass: number; saturatedFail: number };
}

export interface InputStats {
  files: number;
  records: number;
  unreadable: number;
}

/** What every human-readable format renders. */
export interface Report {
  title: string;
  policyDigest?: string;
  runs: number;
  passed: number;
  input?: InputStats;
  byRule: RateRow[];
  byScorer: ScorerRow[];
  byTool: ToolRow[];
  byIntent: RateRow[];
  byRisk: RateRow[];
  /** Runs by eval-dataset case tag (a run counts under each tag of its case). */
  byTag: RateRow[];
  gates?: GateOutcome[];
  failing: FailingRun[];
  /** Failing runs beyond those kept in `failing`. */
  failingOmitted: number;
  grid?: RolloutGrid;
}
