import { describe, expect, it } from 'vitest';
import { definePolicy } from '../../src/policy/define-policy.js';
import { parsePolicyText } from '../../src/policy/load-policy.js';
import { parsePolicy } from '../../src/policy/parse-policy.js';
import { PolicyError } from '../../src/policy/policy-error.js';

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(PolicyError);
    return (err as PolicyError).problems.map((p) => `${p.path}: ${p.message}`);
  }
  throw new Error('expected a PolicyError');
}

const minimal = { version: 1, rules: [{ name: 'r', scorers: [{ kind: 'tool_order', expected_tool: 'a' }] }] };

describe('parsePolicy', () => {
  it('fills in the defaults', () => {
    const policy = parsePolicy(minimal);
    expect(policy.version).toBe(1);
    expect(policy.sampling).toEqual({ ratio: 1 });
    expect(policy.judge).toEqual({ maxPerMinute: 30, maxConcurrent: 2, escalateOn: [] });
    expect(policy.redact).toEqual({ values: true });
    expect(policy.gates).toEqual({});
    expect(policy.rules[0]!.match).toEqual({ rootOnly: true });
    expect(policy.rules[0]!.scorers.map((s) => s.name)).toEqual(['tool_order']);
    expect(policy.digest).toMatch(/^[0-9a-f]{64}$/);
  });

  it('reports every problem at once, by path', () => {
    const problems = problemsOf(() =>
      parsePolicyText(`
version: 1
sampling: { ratio: 2 }
judge: { max_per_minute: "ten", escalate_on: [sometimes] }
redact: { values: true, keys: false }
rules:
  - name: refunds
    match: { agent: refund-*, root_only: "yes", attrs: {} }
    scorers:
      - kind: reliability
        expected_tool_calls: get_order_detail
      - kind: tool_calls
        expected_tools: search
      - kind: tool_order
        expected_tool_order: get_order_detail
      - kind: trajectory
        expected_tools: [a]
        arg_constraints: { a: { q: { matches: "(a+)+$" } } }
      - kind: tool_calls
        expected_tools: []
        arguments: { search: [] }
      - kind: magic
      - kind: llm_judge
        prompt: tool_appropriateness
        sampling: { ratio: 0.1, every: 3 }
      - "reliability"
  - name: refunds
    scorers: []
gates:
  tool_selection_accuracy: { min: 0.9 }
  vibes: { min: 1 }
`),
    );
    expect(problems).toEqual([
      'gates.vibes: unknown gate (valid gates: pass_rate, tool_selection_accuracy, argument_accuracy, forbidden_tool_calls, high_risk_pass_rate, avg_calls_vs_baseline, regression_vs_baseline)',
      'judge.escalate_on[0]: expected one of "failure"|"error_span"',
      'judge.max_per_minute: expected number, received string',
      'redact.keys: unknown key',
      'rules[0].match.attrs: unknown key',
      'rules[0].match.root_only: expected boolean, received string',
      'rules[0].scorers[0].expected_tool_calls: expected array, received string',
      "rules[0].scorers[1].expected_tools: expected_tools must be a sequence of tool names, not the bare string 'search'",
      'rules[0].scorers[2].expected_tool_order: expected array of strings',
      expect.stringMatching(/^rules\[0\]\.scorers\[3\]\.arg_constraints\.a\.q\.matches: .*nested quantifier/),
      "rules[0].scorers[4].arguments.search: argument specs for 'search' are empty; an empty list checks nothing",
      'rules[0].scorers[5].kind: unknown scorer kind "magic" (expected one of reliability, tool_calls, tool_order, trajectory, llm_judge)',
      'rules[0].scorers[6].sampling.every: unknown key',
      'rules[0].scorers[7]: expected a scorer mapping with a kind, got the string "reliability"',
      'rules[1].name: duplicate rule name "refunds" (also rules[0])',
      'rules[1].scorers: a rule needs at least one scorer',
      'sampling.ratio: Too big: expected number to be <=1',
    ]);
  });

  it('says where the error is in the message too', () => {
    try {
      parsePolicy({
        version: 1,
        rules: [{ name: 'r', scorers: [{ kind: 'tool_order', expected_tool_order: 'x' }] }],
      });
      expect.unreachable();
    } catch (err) {
      expect((err as Error).message).toContain(
        'rules[0].scorers[0].expected_tool_order: expected array of strings',
      );
      expect((err as Error).message).toMatch(/^invalid toolwatch policy \(1 problem\)/);
    }
  });

  it('reports missing required keys and a wrong version', () => {
    expect(
      problemsOf(() => parsePolicy({ version: 2, rules: [{ scorers: [{ expected_tool: 'a' }] }] })),
    ).toEqual([
      'rules[0].name: required (expected string)',
      'rules[0].scorers[0].kind: required (one of reliability, tool_calls, tool_order, trajectory, llm_judge)',
      'version: expected 1',
    ]);
    expect(problemsOf(() => parsePolicy({ rules: [] }))).toEqual([
      'rules: a policy needs at least one rule',
      'version: expected 1',
    ]);
    expect(problemsOf(() => parsePolicy(['not', 'a', 'mapping']))).toEqual([
      ': expected a mapping at the top level, got a list',
    ]);
  });

  it('refuses two scorers with the same result name in one rule', () => {
    expect(
      problemsOf(() =>
        parsePolicy({
          version: 1,
          rules: [
            {
              name: 'r',
              scorers: [
                { kind: 'tool_order', expected_tool: 'a' },
                { kind: 'tool_order', expected_tool: 'b' },
                { kind: 'tool_order', name: 'second', expected_tool: 'b' },
              ],
            },
          ],
        }),
      ),
    ).toEqual([
      'rules[0].scorers[1].name: duplicate scorer name "tool_order" in this rule (also scorers[0]); give one a name',
    ]);
  });

  it("reports Mastra's constructor error for tool_order with neither expectation", () => {
    expect(
      problemsOf(() =>
        parsePolicy({ version: 1, rules: [{ name: 'r', scorers: [{ kind: 'tool_order' }] }] }),
      ),
    ).toEqual(['rules[0].scorers[0]: Either expectedTool or expectedToolOrder must be provided']);
  });

  it('explains llm_judge prompts: a wrong name, and the issues of a custom prompt', () => {
    const judge = (prompt: unknown) => ({
      version: 1,
      rules: [{ name: 'r', scorers: [{ kind: 'llm_judge', prompt }] }],
    });
    expect(problemsOf(() => parsePolicy(judge('nope')))).toEqual([
      'rules[0].scorers[0].prompt: expected tool_appropriateness, trajectory_grounding or { system?, template }',
    ]);
    expect(problemsOf(() => parsePolicy(judge({ template: 'x', user: 'y' })))).toEqual([
      'rules[0].scorers[0].prompt.user: unknown key',
    ]);
    expect(problemsOf(() => parsePolicy(judge({ system: 's' })))).toEqual([
      'rules[0].scorers[0].prompt.template: required (expected string)',
    ]);
    expect(
      problemsOf(() => parsePolicy(judge({ template: 'Was {{user_request}} met by {{answer}}?' }))),
    ).toEqual([
      'rules[0].scorers[0].prompt.template: unknown placeholder {{answer}} (known: agent, user_request, agent_response, tool_calls, tool_names, tools, answer_facts)',
    ]);
  });

  it('names the accepted types when no branch of a union fits', () => {
    expect(
      problemsOf(() =>
        parsePolicy({
          version: 1,
          rules: [{ name: 'r', scorers: [{ kind: 'tool_calls', expected_tools: 3 }] }],
        }),
      ),
    ).toEqual(['rules[0].scorers[0].expected_tools: expected string or array']);
  });

  it('reports attribute keys with dots in brackets', () => {
    expect(
      problemsOf(() =>
        parsePolicy({
          ...minimal,
          rules: [{ ...minimal.rules[0]!, match: { attributes: { 'deployment.environment': [1] } } }],
        }),
      ),
    ).toEqual([expect.stringMatching(/^rules\[0\]\.match\.attributes\["deployment\.environment"\]: /)]);
  });
});

describe('gates', () => {
  it('an unknown gate lists the valid ones (and the one it most likely meant), in files and in code', () => {
    const valid =
      'valid gates: pass_rate, tool_selection_accuracy, argument_accuracy, forbidden_tool_calls, high_risk_pass_rate, avg_calls_vs_baseline, regression_vs_baseline';
    expect(
      problemsOf(() => parsePolicy({ ...minimal, gates: { pass_rat: { min: 1 }, coverage: { min: 1 } } })),
    ).toEqual([
      `gates.coverage: unknown gate (${valid})`,
      `gates.pass_rat: unknown gate (did you mean "pass_rate"? ${valid})`,
    ]);
    expect(
      problemsOf(() =>
        definePolicy({
          rules: [{ name: 'r', scorers: [{ kind: 'tool_order', expected_tool: 'a' }] }],
          gates: { passrate: { min: 1 } },
        }),
      ),
    ).toEqual([`gates.passrate: unknown gate (did you mean "pass_rate"? ${valid})`]);
  });
});
