import type { AgentRun } from '../types.js';

/** Every run of a forest, depth first, each run before its children. */
export function* walkRuns(runs: readonly AgentRun[]): Generator<AgentRun> {
  for (const run of runs) {
    yield run;
    yield* walkRuns(run.children);
  }
}

/** The run whose span is `spanId`, at any depth. */
export function findRun(runs: readonly AgentRun[], spanId: string): AgentRun | undefined {
  for (const run of walkRuns(runs)) if (run.spanId === spanId) return run;
  return undefined;
}
