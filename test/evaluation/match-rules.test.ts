import { describe, expect, it } from 'vitest';
import { globMatches, matchRules, runIdentity } from '../../src/evaluation/match-rules.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { TraceBuilder } from '../helpers/trace-builder.js';
import { fakeScorer, runsOf } from './helpers.js';

function policyWith(rules: Array<{ name: string; match?: Record<string, unknown> }>) {
  return definePolicy({
    rules: rules.map((r) => ({ name: r.name, match: r.match as never, scorers: [fakeScorer('s', 'pass')] })),
  });
}

describe('globMatches', () => {
  it('treats * and ? as wildcards and everything else literally', () => {
    expect(globMatches('refund-*', 'refund-agent')).toBe(true);
    expect(globMatches('refund-*', 'refunds')).toBe(false);
    expect(globMatches('a?c', 'abc')).toBe(true);
    expect(globMatches('a?c', 'abbc')).toBe(false);
    expect(globMatches('a.c', 'abc')).toBe(false);
    expect(globMatches('(x)+[y]', '(x)+[y]')).toBe(true);
    expect(globMatches('*', '')).toBe(true);
    expect(globMatches('*agent', 'refund-agent')).toBe(true);
    expect(globMatches('*-*-*', 'a-b')).toBe(false);
    expect(globMatches('a*b*c', 'abc')).toBe(true);
    expect(globMatches('a*b*c', 'aXbYbZc')).toBe(true);
    expect(globMatches('a*b*c', 'acb')).toBe(false);
    expect(globMatches('ab*ba', 'aba')).toBe(false);
    expect(globMatches('?*?', 'x')).toBe(false);
    expect(globMatches('', '')).toBe(true);
    expect(globMatches('', 'x')).toBe(false);
  });

  it('agrees with a regular expression on random globs and names', () => {
    const alphabet = ['a', 'b', '*', '?'];
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let i = 0; i < 3000; i++) {
      let glob = '';
      for (let k = rand(7); k > 0; k--) glob += alphabet[rand(4)];
      let name = '';
      for (let k = rand(8); k > 0; k--) name += alphabet[rand(2)];
      const re = new RegExp(`^${glob.replace(/\*/g, '.*').replace(/\?/g, '.')}$`, 's');
      expect(globMatches(glob, name), `${glob} ~ ${name}`).toBe(re.test(name));
    }
  });

  // On main this glob compiled to a backtracking RegExp: 35-45 s per call on a 40-character name.
  it('matches a catastrophic glob on a long name without backtracking', { timeout: 2000 }, () => {
    const glob = '*a*a*a*a*a*a*a*a*a*a*a*b';
    const name = 'a'.repeat(40);
    for (let i = 0; i < 1000; i++) expect(globMatches(glob, name)).toBe(false);
    expect(globMatches(glob, `${name}b`)).toBe(true);
  });
});

describe('matchRules', () => {
  const t = new TraceBuilder({ resource: { 'service.name': 'svc', 'deployment.environment': 'prod' } });
  const root = t.agent('refund-agent', { 'app.tier': 3 });
  root.tool('get_order_detail', { args: { order_id: 'A1' } });
  const member = root.agent('policy-checker');
  member.tool('check_refund_policy', { args: {} });
  const [run] = runsOf(t);
  const nested = run!.children[0]!;

  it('reconstructs the fixture as expected', () => {
    expect(run!.agent).toBe('refund-agent');
    expect(nested.agent).toBe('policy-checker');
  });

  it('matches agent globs, in policy order', () => {
    const policy = policyWith([
      { name: 'b', match: { agent: 'refund-*' } },
      { name: 'a' },
      { name: 'c', match: { agent: 'other' } },
    ]);
    expect(matchRules(runIdentity(run!), policy).map((r) => r.name)).toEqual(['b', 'a']);
  });

  it('only matches outermost runs unless root_only is false', () => {
    const policy = policyWith([
      { name: 'roots', match: { agent: '*' } },
      { name: 'all', match: { agent: '*', rootOnly: false } },
    ]);
    expect(matchRules(runIdentity(nested), policy).map((r) => r.name)).toEqual(['all']);
    expect(matchRules(runIdentity(run!), policy).map((r) => r.name)).toEqual(['roots', 'all']);
  });

  it('matches attributes of the run span and of the resource, exactly', () => {
    const policy = policyWith([
      { name: 'prod', match: { attributes: { 'deployment.environment': 'prod' } } },
      { name: 'staging', match: { attributes: { 'deployment.environment': 'staging' } } },
      { name: 'tier', match: { attributes: { 'app.tier': 3 } } },
      { name: 'tier-string', match: { attributes: { 'app.tier': '3' } } },
      { name: 'both', match: { attributes: { 'app.tier': 3, 'service.name': 'svc' } } },
      { name: 'missing', match: { attributes: { 'not.there': true } } },
    ]);
    expect(matchRules(runIdentity(run!), policy).map((r) => r.name)).toEqual(['prod', 'tier', 'both']);
  });
});
