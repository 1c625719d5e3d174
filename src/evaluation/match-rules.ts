import type { AgentRun, Policy, Rule, RuleMatch } from '../types.js';

/** The policy's rules that apply to `run`, in policy order. */
export function matchRules(run: AgentRun, policy: Policy): Rule[] {
  const rules: Rule[] = [];
  for (const rule of policy.rules) if (ruleMatches(run, rule.match)) rules.push(rule);
  return rules;
}

export function ruleMatches(run: AgentRun, match: RuleMatch): boolean {
  if (match.rootOnly && run.parent !== undefined) return false;
  if (match.agent !== undefined && !globToRegExp(match.agent).test(run.agent)) return false;
  if (match.attributes) {
    for (const [key, expected] of Object.entries(match.attributes)) {
      if (!attributeEquals(run.attributes[key], expected)) return false;
    }
  }
  return true;
}

const globCache = new Map<string, RegExp>();

/** `*` = any run of characters, `?` = one character; everything else is literal. */
export function globToRegExp(glob: string): RegExp {
  let re = globCache.get(glob);
  if (re) return re;
  let source = '';
  for (const ch of glob) {
    if (ch === '*') source += '.*';
    else if (ch === '?') source += '.';
    else source += ch.replace(/[.+^${}()|[\]\\/-]/g, '\\$&');
  }
  re = new RegExp(`^${source}$`, 's');
  globCache.set(glob, re);
  return re;
}

function attributeEquals(actual: unknown, expected: string | number | boolean): boolean {
  if (actual === expected) return true;
  // OTLP intValue may arrive as a string or bigint depending on the decoder.
  if (typeof expected === 'number') {
    if (typeof actual === 'bigint') return Number(actual) === expected;
    if (typeof actual === 'string' && actual.trim() !== '') return Number(actual) === expected;
  }
  return false;
}
