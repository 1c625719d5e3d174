import type { Policy, Scorer } from '../types.js';

/**
 * Which tools' arguments a built-in scorer reads: a list of tool names, or `all`. A scorer
 * that declares nothing (custom scorers, LLM judges, which also read results) reads all of
 * every call. Declared by each built-in scorer as it is built, kept by identity.
 */
export type ArgumentsRead = ReadonlySet<string> | 'all';

const declared = new WeakMap<Scorer, ArgumentsRead>();

export function declareArgumentsRead(scorer: Scorer, read: ArgumentsRead): void {
  declared.set(scorer, read);
}

/**
 * The tools whose arguments some scorer of the policy reads, or undefined when some scorer
 * may read any call's arguments or results: the processor then reads every tool span in full.
 */
export function policyArgumentsRead(policy: Policy): ReadonlySet<string> | undefined {
  const tools = new Set<string>();
  for (const rule of policy.rules) {
    for (const scorer of rule.scorers) {
      const read = declared.get(scorer);
      if (read === undefined || read === 'all') return undefined;
      for (const tool of read) tools.add(tool);
    }
  }
  return tools;
}
