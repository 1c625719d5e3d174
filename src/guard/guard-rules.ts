import { matchRules, type RunIdentity } from '../evaluation/match-rules.js';
import { GUARD_CHECKS } from '../policy/policy-schema.js';
import type { GuardCheck, Policy, RuleGuard } from '../types.js';
import { type LiveLimits, liveLimitsOf } from './live-misuse.js';

/** One rule as the guard applies it: its limits (those the live checks use) and its `guard` key. */
export interface GuardRule {
  name: string;
  /** Undefined: the rule decides (every check) but never blocks. */
  guard: RuleGuard | undefined;
  limits: LiveLimits;
  /** The checks that run, as bits of `CHECK_BIT`. */
  checks: number;
}

/** Each check's bit in `GuardRule.checks`. */
export const CHECK_BIT: Readonly<Record<GuardCheck, number>> = {
  forbidden: 1,
  unexpected: 2,
  call_budget: 4,
  repeated_call: 8,
  arguments: 16,
};
const ALL_CHECKS = 31;

/**
 * A policy's rules, compiled once for the guard. Only rules with `trajectory` scorers can
 * deny anything (forbidden and expected tools, `max_calls`, `max_repeats`, `arg_constraints`
 * are theirs); the others are left out.
 */
export class GuardRules {
  /** False when no rule can deny anything: every call is allowed at once. */
  readonly enabled: boolean;
  /** Applied to the reasons: with `redact.values` they name fields, never their values. */
  readonly redact: boolean;
  private readonly _byName = new Map<string, GuardRule>();

  constructor(private readonly _policy: Policy) {
    this.redact = _policy.redact.values;
    for (const rule of _policy.rules) {
      const limits = liveLimitsOf(rule);
      if (limits === undefined) continue;
      let checks = ALL_CHECKS;
      if (rule.guard !== undefined) {
        checks = 0;
        for (const check of rule.guard.checks) checks |= CHECK_BIT[check];
      }
      this._byName.set(rule.name, { name: rule.name, guard: rule.guard, limits, checks });
    }
    this.enabled = this._byName.size > 0;
  }

  /** The rule of this name, when it can deny anything. */
  byName(name: string): GuardRule | undefined {
    return this._byName.get(name);
  }

  /** The rules that apply to a run of this identity, in policy order. */
  rulesFor(identity: RunIdentity): GuardRule[] {
    const out: GuardRule[] = [];
    if (!this.enabled) return out;
    for (const rule of matchRules(identity, this._policy)) {
      const guardRule = this._byName.get(rule.name);
      if (guardRule !== undefined) out.push(guardRule);
    }
    return out;
  }
}

/** Every check, in the order the guard runs them. */
export const ALL_GUARD_CHECKS: readonly GuardCheck[] = GUARD_CHECKS;
