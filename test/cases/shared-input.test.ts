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

describe('--match-input on a trace with very many agent runs', () => {
  it('walks 150,000 child runs without overflowing the stack (it ended the CLI with exit 3)', () => {
    const trace = 'ab'.repeat(16);
    const agent = (spanId: string, name: string, parentSpanId?: string) => ({
      traceId: trace,
      spanId,
      ...(parentSpanId ? { parentSpanId } : {}),
      name: `invoke_agent ${name}`,
      kind: 0,
      startTime: 1,
      endTime: 2,
      status: { code: 0 as const },
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': name },
      events: [],
    });
    const root = '1'.padStart(16, '0');
    const spans = [agent(root, 'root')];
    for (let i = 0; i < 150_000; i++)
      spans.push(agent((i + 2).toString(16).padStart(16, '0'), 'child', root));
    const select = caseSelector(casesPolicy(cases.slice(0, 1)), cases.slice(0, 1), { matchInput: true });
    expect(select({ traceId: trace, spans, file: 'runs.jsonl', line: 1 })).toBeUndefined();
  });
});
