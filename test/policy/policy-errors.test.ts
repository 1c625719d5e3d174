// Policy errors a person can act on: YAML syntax errors keep their line and column, every
// problem of a policy read from text says where it is written, and unknown keys and kinds
// name the key that was most likely meant.
import { describe, expect, it } from 'vitest';
import { didYouMean } from '../../src/policy/did-you-mean.js';
import { parsePolicyText } from '../../src/policy/load-policy.js';
import { parsePolicy } from '../../src/policy/parse-policy.js';
import { PolicyError, type PolicyProblem } from '../../src/policy/policy-error.js';

function problemsOf(fn: () => unknown): PolicyProblem[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof PolicyError) return err.problems;
    throw err;
  }
  throw new Error('expected a PolicyError');
}

const TYPOS = `version: 1
rules:
  - name: r
    match: { agent: "a*", rootonly: true }
    scorers:
      - kind: trajectory
        forbiden_tools: [x]
        arg_constraints:
          t: { a: { equls: 1 } }
      - kind: trajectroy
      - kind: tool_calls
        expectedTools: [x]
gatez: {}
`;

describe('YAML syntax errors', () => {
  it('keep the line and column of the mistake', () => {
    const text = 'version: 1\nrules: []\nrules: [1]\n';
    const problems = problemsOf(() => parsePolicyText(text));
    expect(problems).toEqual([{ path: '', message: 'Map keys must be unique', line: 3, column: 1 }]);
    const err = (() => {
      try {
        parsePolicyText(text, 'toolwatch.yaml');
      } catch (e) {
        return e as Error;
      }
    })();
    expect(err?.message).toBe(
      'invalid toolwatch policy toolwatch.yaml (1 problem)\n  line 3, column 1: Map keys must be unique',
    );
  });

  it('an unclosed quote and a bad indent are placed too', () => {
    const [quote] = problemsOf(() => parsePolicyText('version: 1\nrules:\n  - name: "x\n'));
    expect(quote).toMatchObject({ path: '', line: expect.any(Number), column: expect.any(Number) });
    expect(quote!.message).toMatch(/quote/i);
    const [indent] = problemsOf(() => parsePolicyText('version: 1\nrules:\n  - name: x\n   scorers: []\n'));
    expect(indent!.line).toBe(4);
  });
});

describe('validation problems of a policy read from text', () => {
  const problems = problemsOf(() => parsePolicyText(TYPOS));
  const byPath = new Map(problems.map((p) => [p.path, p]));

  it('suggest the key that was meant, at every level', () => {
    expect(byPath.get('gatez')).toEqual({
      path: 'gatez',
      message: 'unknown key (did you mean "gates"?)',
      line: 13,
      column: 1,
    });
    expect(byPath.get('rules[0].match.rootonly')?.message).toBe('unknown key (did you mean "root_only"?)');
    expect(byPath.get('rules[0].scorers[0].forbiden_tools')).toMatchObject({
      message: 'unknown key (did you mean "forbidden_tools"?)',
      line: 7,
      column: 9,
    });
    // Inside a record of rule objects.
    expect(byPath.get('rules[0].scorers[0].arg_constraints.t.a.equls')).toMatchObject({
      message: 'unknown key (did you mean "equals"?)',
      line: 9,
    });
    // camelCase written where the file form is snake_case.
    expect(byPath.get('rules[0].scorers[2].expectedTools')?.message).toBe(
      'unknown key (did you mean "expected_tools"?)',
    );
  });

  it('suggest the scorer kind that was meant', () => {
    expect(byPath.get('rules[0].scorers[1].kind')).toMatchObject({
      message: 'unknown scorer kind "trajectroy" (did you mean "trajectory"?)',
      line: 10,
      column: 9,
    });
  });

  it('list every problem, each with its line, in the error message', () => {
    const message = (() => {
      try {
        parsePolicyText(TYPOS, 'p.yaml');
      } catch (e) {
        return (e as Error).message;
      }
    })();
    expect(message).toContain(
      '  rules[0].scorers[0].forbiden_tools: unknown key (did you mean "forbidden_tools"?) (line 7, column 9)',
    );
    expect(problems.every((p) => typeof p.line === 'number')).toBe(true);
  });

  it('JSON text is placed the same way', () => {
    const json =
      '{\n  "version": 1,\n  "rules": [\n    { "name": "r", "scorers": [{ "kind": "reliability", "expected_tool_call": ["x"] }] }\n  ]\n}\n';
    const [problem] = problemsOf(() => parsePolicyText(json));
    expect(problem).toMatchObject({
      path: 'rules[0].scorers[0].expected_tool_call',
      message: 'unknown key (did you mean "expected_tool_calls"?)',
      line: 4,
    });
  });
});

describe('did-you-mean', () => {
  it('does not guess when nothing is close', () => {
    const [problem] = problemsOf(() =>
      parsePolicy({ version: 1, rules: [{ name: 'r', scorers: [{ kind: 'tool_calls', colour: 'red' }] }] }),
    );
    expect(problem).toEqual({ path: 'rules[0].scorers[0].colour', message: 'unknown key' });
    expect(didYouMean('xyz', ['forbidden_tools', 'expected_tools'])).toBeUndefined();
    expect(didYouMean('forbidden_tool', ['forbidden_tools', 'expected_tools'])).toBe('forbidden_tools');
    expect(didYouMean('max_call', ['max_calls', 'max_repeats'])).toBe('max_calls');
  });

  it('objects given in code get suggestions but no line', () => {
    const [problem] = problemsOf(() =>
      parsePolicy({
        version: 1,
        samplng: { ratio: 1 },
        rules: [{ name: 'r', scorers: [{ kind: 'reliability' }] }],
      }),
    );
    expect(problem).toEqual({ path: 'samplng', message: 'unknown key (did you mean "sampling"?)' });
  });
});
