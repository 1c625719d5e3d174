import type { AgentRun, ReconstructedTrace } from '../../../src/types.js';
import type { TruthCall, TruthRun } from './types.js';

/**
 * Reconstructed runs in the ground truth's shape: every run of every trace, depth-first, parents
 * first, with its calls (executions plus request-only calls) reduced to what the truth records.
 */
export function runsAsTruth(traces: readonly ReconstructedTrace[]): TruthRun[] {
  const out: TruthRun[] = [];
  const visit = (run: AgentRun) => {
    out.push({
      agent: run.agent,
      parent: run.parent?.agent ?? null,
      calls: run.calls.map(
        (c): TruthCall => ({
          name: c.name,
          args: c.args,
          // 'paused' never occurs in these scenarios; if it shows up, the comparison fails on it.
          status: c.status as TruthCall['status'],
          requestOnly: c.requestOnly,
        }),
      ),
    });
    for (const child of run.children) visit(child);
  };
  for (const trace of traces) for (const run of trace.runs) visit(run);
  return out;
}
