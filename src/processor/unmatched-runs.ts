import { diag } from '@opentelemetry/api';
import { cappedName } from '../emission/capped-name.js';
import type { ToolwatchMetrics } from '../emission/metrics.js';
import type { Policy } from '../types.js';

/** Distinct agent names logged; runs of further names are only counted. */
export const MAX_LOGGED_NAMES = 5;

/**
 * Outermost agent runs no rule matched: each counted in `toolwatch.runs.unmatched` (by agent
 * name, capped as every name label is), and each of the first `MAX_LOGGED_NAMES` names said
 * once through `diag`, so that a glob that fits none of the app's agents is not silence. Called
 * only as an agent run ends without a rule: never for ordinary spans, O(1) per run.
 */
export class UnmatchedRuns {
  private readonly _logged = new Set<string>();
  private _saidMore = false;
  private readonly _rules: string;

  constructor(
    private readonly _metrics: ToolwatchMetrics,
    policy: Policy,
  ) {
    const shown = policy.rules
      .slice(0, 3)
      .map((r) => `${r.name}: ${r.match.agent === undefined ? 'any agent' : JSON.stringify(r.match.agent)}`);
    if (policy.rules.length > 3) shown.push('…');
    this._rules = shown.join(', ');
  }

  note(agent: string): void {
    this._metrics.recordUnmatchedRun(agent);
    const name = cappedName(agent);
    if (this._logged.has(name)) return;
    if (this._logged.size >= MAX_LOGGED_NAMES) {
      if (!this._saidMore) {
        this._saidMore = true;
        diag.warn(
          `toolwatch: runs of more agents matched no rule; only the first ${MAX_LOGGED_NAMES} names are logged, every run is counted in toolwatch.runs.unmatched`,
        );
      }
      return;
    }
    this._logged.add(name);
    diag.warn(
      `toolwatch: agent run ${JSON.stringify(name)} matched no rule of the policy (rules ${this._rules}), so it is not judged; such runs are counted in toolwatch.runs.unmatched`,
    );
  }
}
