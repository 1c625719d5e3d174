import { describe, expect, it } from 'vitest';
import { ALLOW, type CallsSoFar, decideToolCall, NO_CALLS_YET } from '../../src/guard/decide-tool-call.js';
import { GuardRules } from '../../src/guard/guard-rules.js';
import { RunCalls } from '../../src/guard/run-calls.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { reliability } from '../../src/scorers/reliability.js';
import { toolCalls } from '../../src/scorers/tool-calls.js';
import { trajectory } from '../../src/scorers/trajectory.js';
import type { GuardCheck } from '../../src/types.js';

const identity = { agent: 'refund-bot', attributes: {}, nested: false };

function rulesOf(guard: { mode?: 'enforce' | 'observe'; checks?: GuardCheck[] } | undefined, redact = true) {
  const policy = definePolicy({
    redact: { values: redact },
    rules: [
      {
        name: 'refunds',
        match: { agent: 'refund-*' },
        ...(guard ? { guard } : {}),
        scorers: [
          trajectory({
            expectedTools: ['get_order', 'submit_refund'],
            forbiddenTools: ['delete_account'],
            maxCalls: 3,
            maxRepeats: 1,
            argConstraints: { submit_refund: { amount: { lte: 100 }, currency: { in: ['EUR', 'USD'] } } },
          }),
        ],
      },
    ],
  });
  const rules = new GuardRules(policy);
  return { rules: rules.rulesFor(identity), redact: rules.redact };
}

function soFar(calls: number, repeats: Record<string, number> = {}): CallsSoFar {
  return { calls, repeatsOf: (tool, args) => repeats[`${tool} ${JSON.stringify(args)}`] ?? 0 };
}

const enforce = { mode: 'enforce' as const };

describe('decideToolCall', () => {
  it('allows a call that breaks no check, with the shared frozen allow', () => {
    const { rules } = rulesOf(enforce);
    const decision = decideToolCall(rules, soFar(1), { tool: 'get_order', arguments: { id: 1 } });
    expect(decision).toBe(ALLOW);
    expect(decision).toEqual({ allowed: true, decision: 'allow', enforced: false, reasons: [] });
    expect(Object.isFrozen(decision)).toBe(true);
  });

  it('denies a forbidden tool, and only as forbidden (not also unexpected)', () => {
    const { rules } = rulesOf(enforce);
    expect(decideToolCall(rules, NO_CALLS_YET, { tool: 'delete_account' })).toEqual({
      allowed: false,
      decision: 'deny',
      enforced: true,
      reasons: ['tool delete_account is forbidden (rule refunds)'],
      rule: 'refunds',
      kind: 'forbidden',
    });
  });

  it('denies a tool outside the expected tools', () => {
    const { rules } = rulesOf(enforce);
    const decision = decideToolCall(rules, NO_CALLS_YET, { tool: 'weather' });
    expect(decision.kind).toBe('unexpected');
    expect(decision.reasons).toEqual([
      'tool weather is not one of the expected tools [get_order, submit_refund] (rule refunds)',
    ]);
  });

  it('denies the call past max_calls: the calls so far already reach it', () => {
    const { rules } = rulesOf(enforce);
    expect(decideToolCall(rules, soFar(2), { tool: 'get_order', arguments: { id: 1 } })).toBe(ALLOW);
    const decision = decideToolCall(rules, soFar(3), { tool: 'get_order', arguments: { id: 1 } });
    expect(decision).toMatchObject({ allowed: false, kind: 'call_budget' });
    expect(decision.reasons).toEqual(['the run has made 3 tool calls, max_calls is 3 (rule refunds)']);
  });

  it('denies an identical call past max_repeats, asking for the repeats of these arguments', () => {
    const { rules } = rulesOf(enforce);
    const counts = { 'get_order {"id":1}': 1 };
    expect(decideToolCall(rules, soFar(1, counts), { tool: 'get_order', arguments: { id: 2 } })).toBe(ALLOW);
    const decision = decideToolCall(rules, soFar(1, counts), { tool: 'get_order', arguments: { id: 1 } });
    expect(decision).toMatchObject({ allowed: false, kind: 'repeated_call' });
    expect(decision.reasons[0]).toBe(
      'tool get_order was already called 1 times with these arguments, max_repeats is 1 (rule refunds)',
    );
  });

  it('checks arg_constraints on every call with the scorers operators, JSON text included', () => {
    const { rules } = rulesOf(enforce);
    const ok = { tool: 'submit_refund', arguments: { amount: 100, currency: 'EUR' } };
    expect(decideToolCall(rules, soFar(1), ok)).toBe(ALLOW);
    const over = decideToolCall(rules, soFar(1), {
      tool: 'submit_refund',
      arguments: '{"amount": 250, "currency": "GBP"}',
    });
    expect(over).toMatchObject({ allowed: false, kind: 'arguments' });
    // Values redacted (the policy default): fields and operators only.
    expect(over.reasons).toEqual([
      'submit_refund.amount failed lte (rule refunds)',
      'submit_refund.currency failed in (rule refunds)',
    ]);
    const shown = decideToolCall(
      rulesOf(enforce, false).rules,
      soFar(1),
      { tool: 'submit_refund', arguments: { amount: 250, currency: 'EUR' } },
      false,
    );
    expect(shown.reasons).toEqual(['submit_refund.amount failed lte 100, got 250 (rule refunds)']);
    // A missing field: `lte` needs a number.
    expect(decideToolCall(rules, soFar(1), { tool: 'submit_refund' }).kind).toBe('arguments');
  });

  it('observe mode decides deny but does not enforce it', () => {
    const { rules } = rulesOf({ mode: 'observe' });
    expect(decideToolCall(rules, NO_CALLS_YET, { tool: 'delete_account' })).toEqual({
      allowed: true,
      decision: 'deny',
      enforced: false,
      reasons: ['tool delete_account is forbidden (rule refunds)'],
      rule: 'refunds',
      kind: 'forbidden',
    });
  });

  it('a rule without guard says deny and never blocks; it runs every check', () => {
    const { rules } = rulesOf(undefined);
    for (const call of [
      { tool: 'delete_account' },
      { tool: 'weather' },
      { tool: 'submit_refund', arguments: { amount: 1000, currency: 'EUR' } },
    ]) {
      const decision = decideToolCall(rules, NO_CALLS_YET, call);
      expect(decision).toMatchObject({ allowed: true, decision: 'deny', enforced: false });
    }
    expect(decideToolCall(rules, soFar(3), { tool: 'get_order' }).kind).toBe('call_budget');
  });

  it('runs only the checks a guard lists', () => {
    const { rules } = rulesOf({ checks: ['arguments'] });
    expect(decideToolCall(rules, soFar(99), { tool: 'delete_account' })).toBe(ALLOW);
    const looping = soFar(1, { 'get_order {"id":1}': 5 });
    expect(decideToolCall(rules, looping, { tool: 'get_order', arguments: { id: 1 } })).toBe(ALLOW);
    expect(
      decideToolCall(rules, NO_CALLS_YET, {
        tool: 'submit_refund',
        arguments: { amount: 500, currency: 'EUR' },
      }),
    ).toMatchObject({ allowed: false, kind: 'arguments' });
    const noArguments = rulesOf({
      checks: ['forbidden', 'unexpected', 'call_budget', 'repeated_call'],
    }).rules;
    expect(
      decideToolCall(noArguments, NO_CALLS_YET, {
        tool: 'submit_refund',
        arguments: { amount: 500, currency: 'EUR' },
      }),
    ).toBe(ALLOW);
    // Forbidden off, unexpected on: the forbidden tool is reported as unexpected.
    const unexpected = rulesOf({ checks: ['unexpected'] }).rules;
    expect(decideToolCall(unexpected, NO_CALLS_YET, { tool: 'delete_account' }).kind).toBe('unexpected');
  });

  it('an enforcing rule wins over an observing one; its reasons only', () => {
    const policy = definePolicy({
      rules: [
        {
          name: 'watch',
          guard: { mode: 'observe' },
          scorers: [trajectory({ forbiddenTools: ['wire_money'] })],
        },
        {
          name: 'block',
          guard: { mode: 'enforce' },
          scorers: [trajectory({ maxCalls: 1 })],
        },
      ],
    });
    const rules = new GuardRules(policy).rulesFor({ agent: 'a', attributes: {}, nested: false });
    expect(rules.map((r) => r.name)).toEqual(['watch', 'block']);
    expect(decideToolCall(rules, NO_CALLS_YET, { tool: 'wire_money' })).toMatchObject({
      allowed: true,
      enforced: false,
      rule: 'watch',
    });
    expect(decideToolCall(rules, soFar(1), { tool: 'wire_money' })).toEqual({
      allowed: false,
      decision: 'deny',
      enforced: true,
      reasons: ['the run has made 1 tool calls, max_calls is 1 (rule block)'],
      rule: 'block',
      kind: 'call_budget',
    });
  });

  it('expected arguments of tool_calls and reliability are never denials', () => {
    const policy = definePolicy({
      rules: [
        {
          // (With a guard key, such a rule is refused: it has nothing to guard.)
          name: 'agno',
          scorers: [
            reliability({
              expectedToolCalls: ['get_order'],
              expectedToolCallArguments: { get_order: { id: 1 } },
            }),
            toolCalls({
              expectedTools: ['get_order'],
              arguments: { get_order: { id: 1 } },
              allowAdditional: false,
            }),
          ],
        },
      ],
    });
    const rules = new GuardRules(policy);
    expect(rules.enabled).toBe(false);
    expect(rules.rulesFor({ agent: 'a', attributes: {}, nested: false })).toEqual([]);
    expect(decideToolCall([], NO_CALLS_YET, { tool: 'get_order', arguments: { id: 2 } })).toBe(ALLOW);
  });

  it('keeps to the rules that match the run (root_only by default)', () => {
    const policy = definePolicy({
      rules: [{ name: 'r', match: { agent: 'refund-*' }, scorers: [trajectory({ forbiddenTools: ['x'] })] }],
    });
    const rules = new GuardRules(policy);
    expect(rules.rulesFor({ agent: 'chat', attributes: {}, nested: false })).toEqual([]);
    expect(rules.rulesFor({ agent: 'refund-bot', attributes: {}, nested: true })).toEqual([]);
    expect(rules.rulesFor({ agent: 'refund-bot', attributes: {}, nested: false })).toHaveLength(1);
  });
});

describe('RunCalls', () => {
  it('counts calls and identical calls (arguments as objects or JSON text, any key order)', () => {
    const calls = new RunCalls();
    const { rules } = rulesOf(enforce);
    calls.record('get_order', { id: 1, full: true });
    expect(calls.calls).toBe(1);
    expect(calls.repeatsOf('get_order', '{"full": true, "id": 1}')).toBe(1);
    expect(calls.repeatsOf('get_order', { id: 2 })).toBe(0);
    expect(decideToolCall(rules, calls, { tool: 'get_order', arguments: { full: true, id: 1 } }).kind).toBe(
      'repeated_call',
    );
    calls.record('get_order', '{"id": 2}');
    calls.record('get_order', { id: 3 });
    expect(decideToolCall(rules, calls, { tool: 'get_order', arguments: { id: 4 } }).kind).toBe(
      'call_budget',
    );
  });
});
