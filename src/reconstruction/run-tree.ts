import type { AgentRun } from '../types.js';

/**
 * Every run of a forest, depth first, each run before its children and children in their
 * order: the one walk of the run tree (iterative, so a 10,000-deep nesting cannot overflow).
 */
export function runsInOrder(runs: readonly AgentRun[]): AgentRun[] {
  const out: AgentRun[] = [];
  const stack: AgentRun[] = [];
  for (let i = runs.length - 1; i >= 0; i--) stack.push(runs[i]!);
  while (stack.length > 0) {
    const run = stack.pop()!;
    out.push(run);
    for (let i = run.children.length - 1; i >= 0; i--) stack.push(run.children[i]!);
  }
  return out;
}

/** The run whose span is `spanId`, at any depth. */
export function findRun(runs: readonly AgentRun[], spanId: string): AgentRun | undefined {
  for (const run of runsInOrder(runs)) if (run.spanId === spanId) return run;
  return undefined;
}
