import type { RedactOptions, ResultLabel, ScorerResult } from '../types.js';
import { resultReason } from './result-reason.js';

/** One thing a scorer checked of a run, and whether the run held it. */
export interface Expectation {
  text: string;
  met: boolean;
}

/** What one scorer expected of a failing run: every expectation it reports, met or not. */
export interface ScorerExpectations {
  scorer: string;
  label: ResultLabel;
  /**
   * One line per expectation: first the expected tools a trajectory scorer saw called, each
   * met or not, then what a failed scorer found unmet. A scorer that reports no finer
   * expectations than its result has none: its label says met or unmet.
   */
  expectations: Expectation[];
  /** Why a skipped scorer judged nothing. */
  skipped?: string;
}

/**
 * A scorer's expectations of a run, from its result. Scorers redact the values they quote as
 * the policy says, as in the JSON verdict.
 */
export function scorerExpectations(
  result: ScorerResult,
  redact: RedactOptions | undefined,
): ScorerExpectations {
  const own = { scorer: result.scorer, label: result.label };
  if (result.label === 'skipped') return { ...own, expectations: [], skipped: resultReason(result, redact) };
  const expectations = calledTools(result);
  if (result.label !== 'pass')
    for (const text of unmetExpectations(result)) expectations.push({ text, met: false });
  return { ...own, expectations };
}

/**
 * A trajectory result's expected tools that were called (`detail.per_tool`): met when a call
 * succeeded with arguments that hold, unmet when none did. A tool never called is in the
 * result's errors (`expected tool … was not called`).
 */
function calledTools(result: ScorerResult): Expectation[] {
  const perTool = result.detail?.per_tool;
  if (perTool === null || typeof perTool !== 'object') return [];
  const out: Expectation[] = [];
  for (const [tool, report] of Object.entries(
    perTool as Record<string, { calls?: unknown; final_success?: unknown }>,
  )) {
    if (report?.final_success === true)
      out.push({ text: `expected tool ${tool} was called and succeeded`, met: true });
    else if (typeof report?.calls === 'number' && report.calls > 0)
      out.push({
        text: `expected tool ${tool} never succeeded (${report.calls} ${report.calls === 1 ? 'call' : 'calls'})`,
        met: false,
      });
  }
  return out;
}

/**
 * What a failed (or errored) scorer found unmet, one line per expectation: the scorer's
 * structured errors when it gives them (trajectory), else its reason split at `; `.
 */
function unmetExpectations(result: ScorerResult): string[] {
  const errors = result.detail?.errors;
  if (Array.isArray(errors)) {
    const out: string[] = [];
    for (const e of errors as Array<{ message?: unknown; code?: unknown; tool?: unknown }>) {
      if (e && typeof e.message === 'string') out.push(e.message);
      else if (e && typeof e.code === 'string')
        out.push(typeof e.tool === 'string' ? `${e.code}(${e.tool})` : e.code);
    }
    if (out.length > 0) return out;
  }
  if (result.reason) return result.reason.split('; ');
  return [result.label];
}
