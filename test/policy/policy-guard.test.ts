import { describe, expect, it } from 'vitest';
import { definePolicy } from '../../src/policy/define-policy.js';
import { loadPolicy } from '../../src/policy/load-policy.js';
import { parsePolicy } from '../../src/policy/parse-policy.js';
import { PolicyError } from '../../src/policy/policy-error.js';
import { trajectory } from '../../src/scorers/trajectory.js';

const scorer = { kind: 'trajectory', forbidden_tools: ['delete_account'], max_calls: 5 };
const fileWith = (guard?: unknown) => ({
  version: 1,
  rules: [{ name: 'refunds', ...(guard === undefined ? {} : { guard }), scorers: [scorer] }],
});

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof PolicyError) return error.problems.map((p) => `${p.path}: ${p.message}`);
    throw error;
  }
  return [];
}

describe('the guard key of a rule', () => {
  it('defaults to enforce and every check, in the guard order', () => {
    expect(parsePolicy(fileWith({})).rules[0]!.guard).toEqual({
      mode: 'enforce',
      checks: ['forbidden', 'unexpected', 'call_budget', 'repeated_call', 'arguments'],
    });
    expect(parsePolicy(fileWith()).rules[0]!.guard).toBeUndefined();
  });

  it('reads the YAML form', async () => {
    const policy = await loadPolicy(
      [
        'version: 1',
        'rules:',
        '  - name: refunds',
        '    guard: { mode: observe, checks: [arguments, forbidden] }',
        '    scorers: [{ kind: trajectory, forbidden_tools: [delete_account] }]',
      ].join('\n'),
    );
    expect(policy.rules[0]!.guard).toEqual({ mode: 'observe', checks: ['forbidden', 'arguments'] });
  });

  it('gives the file and definePolicy forms the same digest', () => {
    const file = parsePolicy(fileWith({ mode: 'observe', checks: ['call_budget'] }));
    const coded = definePolicy({
      rules: [
        {
          name: 'refunds',
          guard: { mode: 'observe', checks: ['call_budget'] },
          scorers: [trajectory({ forbiddenTools: ['delete_account'], maxCalls: 5 })],
        },
      ],
    });
    expect(coded.rules[0]!.guard).toEqual(file.rules[0]!.guard);
    expect(coded.digest).toBe(file.digest);
  });

  it('is covered by the digest; defaults and check order do not change it', () => {
    const none = parsePolicy(fileWith()).digest;
    const enforce = parsePolicy(fileWith({})).digest;
    const observe = parsePolicy(fileWith({ mode: 'observe' })).digest;
    const some = parsePolicy(fileWith({ checks: ['forbidden', 'call_budget'] })).digest;
    expect(new Set([none, enforce, observe, some]).size).toBe(4);
    expect(parsePolicy(fileWith({ mode: 'enforce' })).digest).toBe(enforce);
    expect(
      parsePolicy(
        fileWith({ checks: ['arguments', 'repeated_call', 'call_budget', 'unexpected', 'forbidden'] }),
      ).digest,
    ).toBe(enforce);
    expect(parsePolicy(fileWith({ checks: ['call_budget', 'forbidden', 'call_budget'] })).digest).toBe(some);
  });

  it('keeps the digest of a policy without guards (pinned)', () => {
    // The digest of this policy before rules had a guard key: policies without one keep it.
    expect(parsePolicy(fileWith()).digest).toBe(PINNED_DIGEST);
  });

  it('refuses bad values with the path and what was meant', () => {
    expect(problemsOf(() => parsePolicy(fileWith({ mode: 'block' })))).toEqual([
      'rules[0].guard.mode: expected one of "enforce"|"observe"',
    ]);
    expect(problemsOf(() => parsePolicy(fileWith({ checks: ['forbiden'] })))).toEqual([
      'rules[0].guard.checks[0]: expected one of "forbidden"|"unexpected"|"call_budget"|"repeated_call"|"arguments"',
    ]);
    expect(problemsOf(() => parsePolicy(fileWith({ checks: [] })))).toEqual([
      'rules[0].guard.checks: checks must not be empty (leave the guard out instead)',
    ]);
    expect(problemsOf(() => parsePolicy(fileWith({ mod: 'observe' })))).toEqual([
      'rules[0].guard.mod: unknown key (did you mean "mode"?)',
    ]);
    expect(problemsOf(() => parsePolicy(fileWith(true)))).toHaveLength(1);
    // A guard that could never deny anything says so.
    expect(
      problemsOf(() =>
        parsePolicy({
          version: 1,
          rules: [{ name: 'r', guard: {}, scorers: [{ kind: 'tool_order', expected_tool: 'a' }] }],
        }),
      ),
    ).toEqual([
      'rules[0].guard: the rule has no trajectory scorer: a guard checks the limits of its trajectory scorers',
    ]);
    expect(problemsOf(() => parsePolicy(fileWith({ checks: ['arguments', 'repeated_call'] })))).toEqual([
      "rules[0].guard: nothing to check: the rule's trajectory scorers set none of arg_constraints, max_repeats",
    ]);
    expect(
      problemsOf(() =>
        definePolicy({
          rules: [{ name: 'r', guard: { checks: ['unexpected'] }, scorers: [trajectory({ maxCalls: 2 })] }],
        }),
      ),
    ).toEqual(["rules[0].guard: nothing to check: the rule's trajectory scorers set none of expected_tools"]);
    expect(
      problemsOf(() =>
        definePolicy({
          rules: [
            { name: 'r', guard: { mode: 'blocking' as never }, scorers: [trajectory({ maxCalls: 1 })] },
          ],
        }),
      ),
    ).toEqual(['rules[0].guard.mode: expected one of "enforce"|"observe"']);
  });
});

// The digest leaves the gates out (a baseline compares across a changed threshold): this is
// the digest of the policy without guards since then.
const PINNED_DIGEST = 'c63d471bf305118bfb6abdf083374d2d6da397c4e51de60ff0c133f9d9dd0256';
