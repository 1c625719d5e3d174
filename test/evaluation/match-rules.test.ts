import { describe, expect, it } from 'vitest';
import { globToRegExp, matchRules } from '../../src/evaluation/match-rules.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { TraceBuilder } from '../helpers/trace-builder.js';
import { fakeScorer, runsOf } from './helpers.js';

function policyWith(rules: Array<{ name: string; match?: Record<string, unknown> }>) {
  return definePolicy({
    rules: rules.map((r) => ({ name: r.name, match: r.match as never, scorers: [fakeScorer('s', 'pass')] })),
  });
}

describe('globToRegExp', () => {
  it('treats * and ? as wildcards and everything else literally', () => {
    expect(globToRegExp('refund-*').test('refund-agent')).toBe(true);
    expect(globToRegExp('refund-*').test('refunds')).toBe(false);
    expect(globToRegExp('a?c').test('abc')).toBe(true);
    expect(globToRegExp('a?c').test('abbc')).toBe(false);
    expect(globToRegExp('a.c').test('abc')).toBe(false);
    expect(globToRegExp('(x)+[y]').test('(x)+[y]')).toBe(true);
    expect(globToRegExp('*').test('')).toBe(true);
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
    expect(matchRules(run!, policy).map((r) => r.name)).toEqual(['b', 'a']);
  });

  it('only matches outermost runs unless root_only is false', () => {
    const policy = policyWith([
      { name: 'roots', match: { agent: '*' } },
      { name: 'all', match: { agent: '*', rootOnly: false } },
    ]);
    expect(matchRules(nested, policy).map((r) => r.name)).toEqual(['all']);
    expect(matchRules(run!, policy).map((r) => r.name)).toEqual(['roots', 'all']);
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
    expect(matchRules(run!, policy).map((r) => r.name)).toEqual(['prod', 'tier', 'both']);
  });
});
