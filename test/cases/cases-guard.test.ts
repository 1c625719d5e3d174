import { describe, expect, it } from 'vitest';
import { casesPolicy } from '../../src/cases/cases-policy.js';
import { CasesError, parseCasesText } from '../../src/cases/load-cases.js';
import { CASES_USAGE } from '../../src/cli/commands/cases.js';

const GUARDED = `
- id: refund
  input: "refund A1024"
  forbidden_tools: [submit_refund]
  guard: { mode: observe, checks: [forbidden] }
- id: status
  input: "where is B7"
  expected_tools: [get_order_detail]
  guard: {}
- id: plain
  input: "hello"
  expected_tools: [greet]
`;

function problems(text: string): string[] {
  try {
    parseCasesText(text);
  } catch (error) {
    if (error instanceof CasesError) return error.problems.map((p) => `${p.path}: ${p.message}`);
    throw error;
  }
  return [];
}

describe('the guard key of a case', () => {
  it('becomes the guard of the case rule, not a trajectory option', () => {
    const policy = casesPolicy(parseCasesText(GUARDED));
    expect(policy.rules.map((r) => r.guard)).toEqual([
      { mode: 'observe', checks: ['forbidden'] },
      { mode: 'enforce', checks: ['forbidden', 'unexpected', 'call_budget', 'repeated_call', 'arguments'] },
      undefined,
    ]);
    expect(policy.rules[0]!.scorers[0]!.config).not.toHaveProperty('guard');
  });

  it('is checked like a policy rule guard, every problem by path', () => {
    expect(
      problems(`
- id: a
  input: x
  guard: { mode: block }
- id: b
  input: x
  guard: { checks: [forbiden] }
`),
    ).toEqual([
      'cases[0].guard.mode: expected one of "enforce"|"observe"',
      'cases[1].guard.checks[0]: expected one of "forbidden"|"unexpected"|"call_budget"|"repeated_call"|"arguments"',
    ]);
  });

  it('is documented by toolwatch cases check --help', () => {
    expect(CASES_USAGE).toContain(
      'guard: { mode: enforce|observe, checks: [forbidden, unexpected, call_budget,',
    );
  });
});
