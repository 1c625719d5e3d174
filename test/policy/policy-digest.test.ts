import { describe, expect, it } from 'vitest';
import { parsePolicy } from '../../src/policy/parse-policy.js';

const rule = {
  name: 'refunds',
  match: { agent: 'refund-*' },
  scorers: [{ kind: 'tool_order', expected_tool: 'a' }],
};
const policy = (extra: Record<string, unknown> = {}) => parsePolicy({ version: 1, rules: [rule], ...extra });

describe('policy digest', () => {
  it('leaves the gates out: a baseline still compares after a threshold changes', () => {
    const plain = policy();
    expect(policy({ gates: { pass_rate: { min: 0.9 } } }).digest).toBe(plain.digest);
    expect(policy({ gates: { pass_rate: { min: 0.95 }, forbidden_tool_calls: { max: 0 } } }).digest).toBe(
      plain.digest,
    );
  });

  it('changes with a rule, a scorer, sampling or redaction', () => {
    const plain = policy().digest;
    const changed = [
      parsePolicy({ version: 1, rules: [{ ...rule, match: { agent: 'refund-bot' } }] }),
      parsePolicy({
        version: 1,
        rules: [{ ...rule, scorers: [{ kind: 'tool_order', expected_tool: 'b' }] }],
      }),
      policy({ sampling: { ratio: 0.5 } }),
      policy({ redact: { values: false } }),
    ].map((p) => p.digest);
    for (const digest of changed) expect(digest).not.toBe(plain);
    expect(new Set(changed).size).toBe(changed.length);
  });
});
