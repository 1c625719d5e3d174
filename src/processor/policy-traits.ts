import { policyArgumentsRead } from '../scorers/arguments-read.js';
import type { Policy } from '../types.js';

/** What the processor's paths need to know of a policy, derived once from it. */
export interface PolicyTraits {
  /** Every rule matches root runs only: nested runs are never judged nor recorded. */
  allRulesRootOnly: boolean;
  /** Some rule matches on attributes: identities carry span and resource attributes. */
  rulesReadAttributes: boolean;
  /** Out-of-sample traces hold no span state unless judges escalate on ERROR spans, which needs the whole run. */
  sampledOutFastPath: boolean;
  /** Traces whose root agent matches no rule at its start can be followed without holding their spans. */
  unmatchedFastPath: boolean;
  /**
   * The tools whose arguments some scorer reads, when every scorer says (built-in, no judge):
   * the other tool spans' arguments, and every tool result, are never parsed. Undefined: all are.
   */
  argumentsRead: ReadonlySet<string> | undefined;
}

export function policyTraits(policy: Policy): PolicyTraits {
  const allRulesRootOnly = policy.rules.every((rule) => rule.match.rootOnly);
  const rulesReadAttributes = policy.rules.some((rule) => rule.match.attributes !== undefined);
  return {
    allRulesRootOnly,
    rulesReadAttributes,
    sampledOutFastPath: !policy.judge.escalateOn.includes('error_span'),
    unmatchedFastPath: allRulesRootOnly && !rulesReadAttributes,
    argumentsRead: policyArgumentsRead(policy),
  };
}
