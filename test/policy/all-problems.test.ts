import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parsePolicy } from '../../src/policy/parse-policy.js';
import { PolicyError } from '../../src/policy/policy-error.js';

type Json = Record<string, any>;

function validPolicy(): Json {
  return {
    version: 1,
    sampling: { ratio: 0.5 },
    judge: { max_per_minute: 10, max_concurrent: 1, escalate_on: ['failure'] },
    redact: { values: true },
    rules: [
      {
        name: 'a',
        match: { agent: 'refund-*', root_only: true },
        scorers: [
          { kind: 'reliability', expected_tool_calls: ['x'] },
          { kind: 'tool_calls', expected_tools: ['x'] },
          { kind: 'tool_order', expected_tool_order: ['x', 'y'] },
          { kind: 'trajectory', expected_tools: ['x'], max_calls: 3 },
          { kind: 'llm_judge', prompt: 'tool_appropriateness' },
        ],
      },
      { name: 'b', scorers: [{ kind: 'tool_order', expected_tool: 'x' }] },
    ],
    gates: { forbidden_tool_calls: { max: 0 } },
  };
}

/** Independent faults, each at its own path. */
const FAULTS: Array<{ path: string; apply: (p: Json) => void }> = [
  { path: 'sampling.ratio', apply: (p) => (p.sampling.ratio = 'half') },
  { path: 'judge.max_concurrent', apply: (p) => (p.judge.max_concurrent = 0) },
  { path: 'judge.escalate_on[0]', apply: (p) => (p.judge.escalate_on = ['always']) },
  { path: 'redact.mask', apply: (p) => (p.redact.mask = true) },
  { path: 'rules[0].match.agent', apply: (p) => (p.rules[0].match.agent = 7) },
  { path: 'rules[0].match.when', apply: (p) => (p.rules[0].match.when = 'now') },
  {
    path: 'rules[0].scorers[0].expected_tool_calls',
    apply: (p) => (p.rules[0].scorers[0].expected_tool_calls = 'x'),
  },
  { path: 'rules[0].scorers[1].expected_tools', apply: (p) => (p.rules[0].scorers[1].expected_tools = 'x') },
  {
    path: 'rules[0].scorers[2].expected_tool_order',
    apply: (p) => (p.rules[0].scorers[2].expected_tool_order = 'x'),
  },
  { path: 'rules[0].scorers[3].max_calls', apply: (p) => (p.rules[0].scorers[3].max_calls = -1) },
  { path: 'rules[0].scorers[4].kind', apply: (p) => (p.rules[0].scorers[4].kind = 'llm') },
  { path: 'rules[1].name', apply: (p) => (p.rules[1].name = 'a') },
  { path: 'rules[1].scorers[0].strict', apply: (p) => (p.rules[1].scorers[0].strict = true) },
  { path: 'gates.forbidden_tool_calls.max', apply: (p) => (p.gates.forbidden_tool_calls.max = 'none') },
  { path: 'extra', apply: (p) => (p.extra = {}) },
];

describe('parsePolicy reports all problems in one go', () => {
  it('accepts the unmodified policy', () => {
    expect(parsePolicy(validPolicy()).rules).toHaveLength(2);
  });

  it('lists exactly the injected faults, whatever their combination', () => {
    fc.assert(
      fc.property(fc.subarray(FAULTS, { minLength: 1 }), (faults) => {
        const policy = validPolicy();
        for (const f of faults) f.apply(policy);
        let error: unknown;
        try {
          parsePolicy(policy);
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(PolicyError);
        const paths = (error as PolicyError).problems.map((p) => p.path).sort();
        expect(paths).toEqual(faults.map((f) => f.path).sort());
      }),
      { numRuns: 200 },
    );
  });
});
