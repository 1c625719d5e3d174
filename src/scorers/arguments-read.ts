import type { Policy } from '../types.js';

/**
 * The tools whose arguments some scorer of the policy reads (`Scorer.argumentsRead`), or
 * undefined when some scorer declares nothing (custom scorers, LLM judges, which may read any
 * call's arguments and results) or every call's arguments: the processor then reads every tool
 * span in full.
 */
export function policyArgumentsRead(policy: Policy): ReadonlySet<string> | undefined {
  const tools = new Set<string>();
  for (const rule of policy.rules) {
    for (const scorer of rule.scorers) {
      const read = scorer.argumentsRead;
      if (read === undefined || read === 'all') return undefined;
      for (const tool of read) tools.add(tool);
    }
  }
  return tools;
}
