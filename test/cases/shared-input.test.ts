import { describe, expect, it } from 'vitest';
import { casesPolicy } from '../../src/cases/cases-policy.js';
import { CasesError, parseCasesText } from '../../src/cases/load-cases.js';
import { caseSelector } from '../../src/cases/tie-cases.js';

const cases = parseCasesText(
  `- id: refund-eligible
  input: I want a refund for order A1024.
  expected_tools: [get_order_detail]
- id: refund-other
  input: I want a refund   for ORDER A1024.
  expected_tools: [check_refund_policy]
`,
  'cases.yaml',
);

describe('--match-input with cases that share an input', () => {
  it('is refused by path: their runs cannot be told apart (they all went to the later case)', () => {
    const policy = casesPolicy(cases);
    let error: unknown;
    try {
      caseSelector(policy, cases, { matchInput: true, source: 'cases.yaml' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(CasesError);
    expect((error as CasesError).problems).toEqual([
      {
        path: 'cases[1].input',
        message:
          'the same input as cases[0] ("refund-eligible"), ignoring whitespace and case: --match-input cannot tell their runs apart',
      },
    ]);
    expect((error as Error).message).toMatch(/^invalid toolwatch case file cases\.yaml \(1 problem\)/);
  });

  it('is fine without --match-input, where runs are tied by toolwatch.case.id', () => {
    expect(() => caseSelector(casesPolicy(cases), cases)).not.toThrow();
  });
});
