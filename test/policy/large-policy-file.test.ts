import { describe, expect, it } from 'vitest';
import { parsePolicyText } from '../../src/policy/load-policy.js';
import { PolicyError } from '../../src/policy/policy-error.js';

function problemsOf(text: string): PolicyError['problems'] {
  try {
    parsePolicyText(text);
  } catch (err) {
    if (err instanceof PolicyError) return err.problems;
    throw err;
  }
  throw new Error('accepted');
}

describe('a garbage policy file with very many keys in one mapping', () => {
  // A hang guard, not a speed figure: the keys used to be compared each with every earlier
  // one (yaml's uniqueKeys) and each problem located by a scan of the mapping — about 80 s
  // for these 100,000 keys, minutes for more. Now a few seconds.
  it('is refused with every problem listed, in time linear in its size', { timeout: 60_000 }, () => {
    const keys = Array.from({ length: 100_000 }, (_, i) => `  k${i}: 1`).join('\n');
    const problems = problemsOf(
      `version: 1\nsampling:\n${keys}\nrules:\n  - name: r\n    scorers:\n      - kind: trajectory\n        expected_tools: [a]\n`,
    );
    expect(problems).toHaveLength(100_001);
    expect(problems[0]).toEqual({ path: 'sampling.k0', message: 'unknown key', line: 3, column: 3 });
    expect(problems.filter((p) => !p.path.startsWith('sampling.k'))).toEqual([
      { path: 'sampling.ratio', message: 'required (expected number)', line: 2, column: 1 },
    ]);
    expect(problems.find((p) => p.path === 'sampling.k99999')).toEqual({
      path: 'sampling.k99999',
      message: 'unknown key',
      line: 100_002,
      column: 3,
    });
  });

  it('still finds duplicate keys at every depth, each where it is repeated, with other syntax errors', () => {
    const text = 'version: 1\nrules: []\nrules: [1]\nx: {a: 1, a: 2, b: {c: 1, c: 2, "1": 1, 1: 2}}\ny: [\n';
    expect(problemsOf(text).map((p) => `${p.line}:${p.column} ${p.message}`)).toEqual([
      '3:1 Map keys must be unique',
      '4:11 Map keys must be unique',
      '4:27 Map keys must be unique',
      expect.stringMatching(/^6:1 /),
    ]);
  });
});
