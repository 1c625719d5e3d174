/**
 * `definePolicy` is checked by the policy file's schema, with camelCase keys for the file's
 * snake_case ones. It used to build the file form from the keys it knew and drop the rest:
 * `match: { root_only: false }` in code silently made a root-only rule (nested agents never
 * judged), and unknown rule and top-level keys passed too. Now every key the file refuses,
 * code refuses, with the same did-you-mean.
 */
import { describe, expect, it } from 'vitest';
import { definePolicy, type PolicyDefinition } from '../../src/policy/define-policy.js';
import { parsePolicyText } from '../../src/policy/load-policy.js';
import { PolicyError, type PolicyProblem } from '../../src/policy/policy-error.js';
import { toolOrder } from '../../src/scorers/tool-order.js';

const scorers = [toolOrder({ expectedTool: 'a' })];

function problemsOf(build: () => unknown): Array<Pick<PolicyProblem, 'path' | 'message'>> {
  try {
    build();
  } catch (err) {
    if (err instanceof PolicyError) return err.problems.map(({ path, message }) => ({ path, message }));
    throw err;
  }
  throw new Error('accepted');
}

describe('definePolicy refuses what the policy file refuses', () => {
  it('match: { root_only: false } is an unknown key, meant as rootOnly', () => {
    const definition = {
      rules: [{ name: 'r', match: { root_only: false }, scorers }],
    } as unknown as PolicyDefinition;
    expect(problemsOf(() => definePolicy(definition))).toEqual([
      { path: 'rules[0].match.root_only', message: 'unknown key (did you mean "rootOnly"?)' },
    ]);
    // rootOnly: false is what makes nested runs judged.
    expect(
      definePolicy({ rules: [{ name: 'r', match: { rootOnly: false }, scorers }] }).rules[0]!.match,
    ).toEqual({
      rootOnly: false,
    });
  });

  it('unknown keys at the top, in a rule, in judge, sampling and redact, each by path', () => {
    const definition = {
      gate: {},
      sampling: { ratio: 1, rate: 1 },
      judge: { max_per_minute: 5, maxConcurent: 1 },
      redact: { value: false },
      rules: [{ name: 'r', scorer: [], scorers, matches: {} }],
    } as unknown as PolicyDefinition;
    expect(problemsOf(() => definePolicy(definition))).toEqual([
      { path: 'gate', message: 'unknown key (did you mean "gates"?)' },
      { path: 'judge.max_per_minute', message: 'unknown key (did you mean "maxPerMinute"?)' },
      { path: 'judge.maxConcurent', message: 'unknown key (did you mean "maxConcurrent"?)' },
      { path: 'redact.value', message: 'unknown key (did you mean "values"?)' },
      // Too far from any key for a guess (two edits in a short word), as in a file.
      { path: 'rules[0].matches', message: 'unknown key' },
      { path: 'rules[0].scorer', message: 'unknown key (did you mean "scorers"?)' },
      { path: 'sampling.rate', message: 'unknown key' },
    ]);
  });

  it('the same mistakes in a file are the same problems, in the file’s words', () => {
    const file = `version: 1
gate: {}
sampling: { ratio: 1, rate: 1 }
judge: { maxPerMinute: 5, max_concurent: 1 }
redact: { value: false }
rules:
  - name: r
    scorer: []
    matches: {}
    scorers: [{ kind: tool_order, expected_tool: a }]
`;
    expect(problemsOf(() => parsePolicyText(file))).toEqual([
      { path: 'gate', message: 'unknown key (did you mean "gates"?)' },
      { path: 'judge.max_concurent', message: 'unknown key (did you mean "max_concurrent"?)' },
      { path: 'judge.maxPerMinute', message: 'unknown key (did you mean "max_per_minute"?)' },
      { path: 'redact.value', message: 'unknown key (did you mean "values"?)' },
      { path: 'rules[0].matches', message: 'unknown key' },
      { path: 'rules[0].scorer', message: 'unknown key (did you mean "scorers"?)' },
      { path: 'sampling.rate', message: 'unknown key' },
    ]);
  });

  it('values are checked as in the file, named as in code', () => {
    const definition = {
      judge: { maxPerMinute: -1, escalateOn: ['failures'] },
      rules: [{ name: 'r', match: { rootOnly: 'no' }, scorers }],
    } as unknown as PolicyDefinition;
    expect(problemsOf(() => definePolicy(definition)).map((p) => p.path)).toEqual([
      'judge.escalateOn[0]',
      'judge.maxPerMinute',
      'rules[0].match.rootOnly',
    ]);
  });

  it('gates and match.attributes keep the keys they are written with (gate names are the file’s)', () => {
    const policy = definePolicy({
      rules: [
        { name: 'r', match: { attributes: { 'deployment.environment': 'prod', tenant_id: 7 } }, scorers },
      ],
      gates: { tool_selection_accuracy: { min: 0.9 }, avg_calls_vs_baseline: { max_ratio: 1.5 } },
    });
    expect(policy.rules[0]!.match.attributes).toEqual({ 'deployment.environment': 'prod', tenant_id: 7 });
    expect(policy.gates).toEqual({
      tool_selection_accuracy: { min: 0.9 },
      avg_calls_vs_baseline: { max_ratio: 1.5 },
    });
    const camelGate = { rules: [{ name: 'r', scorers }], gates: { toolSelectionAccuracy: { min: 0.9 } } };
    expect(problemsOf(() => definePolicy(camelGate as unknown as PolicyDefinition))).toEqual([
      {
        path: 'gates.toolSelectionAccuracy',
        message:
          'unknown gate (did you mean "tool_selection_accuracy"? valid gates: pass_rate, tool_selection_accuracy, argument_accuracy, forbidden_tool_calls, high_risk_pass_rate, avg_calls_vs_baseline, regression_vs_baseline)',
      },
    ]);
  });

  it('a definition that contains itself, or a prompt that is not a function, is a problem, not a crash', () => {
    const judge: Record<string, unknown> = { maxPerMinute: 1 };
    judge.self = judge;
    expect(
      problemsOf(() =>
        definePolicy({ judge, rules: [{ name: 'r', scorers }] } as unknown as PolicyDefinition),
      ),
    ).toEqual([{ path: 'judge.self', message: 'contains itself (a cycle)' }]);
    const prompt = { redact: { prompt: 'mask' }, rules: [{ name: 'r', scorers }] };
    expect(problemsOf(() => definePolicy(prompt as unknown as PolicyDefinition))).toEqual([
      { path: 'redact.prompt', message: 'expected a function, got string' },
    ]);
  });
});
