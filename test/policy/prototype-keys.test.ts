import { describe, expect, it } from 'vitest';
import { parsePolicyText } from '../../src/policy/load-policy.js';
import { PolicyError } from '../../src/policy/policy-error.js';

function problemsOf(run: () => unknown): PolicyError['problems'] {
  try {
    run();
  } catch (err) {
    if (err instanceof PolicyError) return err.problems;
    throw err;
  }
  throw new Error('accepted');
}

describe('`__proto__` keys in policy and case files', () => {
  it('refuses them in a YAML policy, every one by path and line (a matcher and an argument were silently dropped)', () => {
    const text = `version: 1
rules:
  - name: prod_only
    match: { agent: refund-agent, attributes: { __proto__: prod } }
    scorers:
      - kind: tool_calls
        expected_tools: [lookup]
        arguments: { lookup: [ { __proto__: { order_id: A1 } } ] }
`;
    expect(problemsOf(() => parsePolicyText(text))).toEqual([
      {
        path: 'rules[0].match.attributes.__proto__',
        message: '`__proto__` cannot be a key',
        line: 4,
        column: 49,
      },
      {
        path: 'rules[0].scorers[0].arguments.lookup[0].__proto__',
        message: '`__proto__` cannot be a key',
        line: 8,
        column: 34,
      },
    ]);
  });

  it('refuses them in a JSON policy, where a nested mapping became the rule’s prototype', () => {
    const text = JSON.stringify({
      version: 1,
      rules: [
        {
          name: 'r',
          __proto__: { polluted: true },
          scorers: [{ kind: 'trajectory', expected_tools: ['a'] }],
        },
      ],
    }).replace('"name":"r",', '"name":"r","__proto__":{"polluted":true},');
    expect(problemsOf(() => parsePolicyText(text)).map((p) => p.path)).toEqual(['rules[0].__proto__']);
  });
});
