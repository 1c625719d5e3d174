import { trajectoryLimits } from '../scorers/trajectory.js';
import type { GuardCheck, Scorer } from '../types.js';
import { formatPath, type PolicyProblem } from './policy-error.js';

/** What each check reads from a rule's trajectory scorers. */
const NEEDS: Readonly<Record<GuardCheck, string>> = {
  forbidden: 'forbidden_tools',
  unexpected: 'expected_tools',
  call_budget: 'max_calls',
  repeated_call: 'max_repeats',
  arguments: 'arg_constraints',
};

/**
 * A guard that can never deny anything is a mistake, not a quiet no-op: the rule has no
 * trajectory scorer, or none of its checks has a limit to check.
 */
export function guardProblems(
  checks: readonly GuardCheck[],
  scorers: readonly Scorer[],
  ruleIndex: number,
): PolicyProblem[] {
  const has = new Set<GuardCheck>();
  let trajectories = 0;
  for (const scorer of scorers) {
    const limits = trajectoryLimits(scorer);
    if (limits === undefined) continue;
    trajectories++;
    if (limits.forbidden.size > 0) has.add('forbidden');
    if (limits.expected.size > 0) has.add('unexpected');
    if (limits.maxCalls !== undefined) has.add('call_budget');
    if (limits.maxRepeats !== undefined) has.add('repeated_call');
    if (limits.argRules.size > 0) has.add('arguments');
  }
  const path = formatPath(['rules', ruleIndex, 'guard']);
  if (trajectories === 0) {
    return [
      {
        path,
        message: 'the rule has no trajectory scorer: a guard checks the limits of its trajectory scorers',
      },
    ];
  }
  if (checks.some((check) => has.has(check))) return [];
  return [
    {
      path,
      message: `nothing to check: the rule's trajectory scorers set none of ${checks.map((c) => NEEDS[c]).join(', ')}`,
    },
  ];
}
