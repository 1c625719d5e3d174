import { describe, expect, it } from 'vitest';
import { evaluateTraces } from '../../src/evaluation/evaluate-traces.js';
import { parsePolicyText } from '../../src/policy/load-policy.js';
import { scorerExpectations } from '../../src/report/scorer-expectations.js';
import { TraceBuilder } from '../helpers/trace-builder.js';

const POLICY = parsePolicyText(`
version: 1
rules:
  - name: refunds
    scorers:
      - kind: trajectory
        expected_tools: [get_order_detail, check_refund_policy, notify_customer]
      - kind: tool_calls
        expected_tools: [get_order_detail]
      - kind: llm_judge
        prompt: tool_appropriateness
`);

async function verdictOf(tools: string[]) {
  const t = new TraceBuilder({ traceId: '1'.padStart(32, '0') });
  const a = t.agent('refund-agent');
  for (const name of tools) a.tool(name, { args: { order_id: 'A1024' } });
  const [verdict] = await evaluateTraces(t.toOtlp(), POLICY);
  return verdict!;
}

describe("a failing run's expectations, scorer by scorer", () => {
  it('lists what held beside what did not, and says why a scorer judged nothing', async () => {
    const verdict = await verdictOf(['get_order_detail', 'check_refund_policy']);
    expect(verdict.passed).toBe(false);
    expect(verdict.results.map((r) => scorerExpectations(r, POLICY.redact))).toEqual([
      {
        scorer: 'trajectory',
        label: 'fail',
        expectations: [
          { text: 'expected tool get_order_detail was called and succeeded', met: true },
          { text: 'expected tool check_refund_policy was called and succeeded', met: true },
          { text: 'expected tool notify_customer was not called', met: false },
        ],
      },
      // A scorer that reports nothing finer than its result: its label says met.
      { scorer: 'tool_calls', label: 'pass', expectations: [] },
      // Judges are sampled at 0 unless the policy says otherwise.
      { scorer: 'llm_judge', label: 'skipped', expectations: [], skipped: 'sampled_out' },
    ]);
  });

  it('an expected tool whose calls all failed is an unmet expectation', async () => {
    const t = new TraceBuilder({ traceId: '2'.padStart(32, '0') });
    t.agent('refund-agent').tool('get_order_detail', { args: { order_id: 'A1024' }, status: 'error' });
    const [verdict] = await evaluateTraces(t.toOtlp(), POLICY);
    const trajectory = scorerExpectations(verdict!.results[0]!, POLICY.redact);
    expect(trajectory.expectations.filter((e) => e.met)).toEqual([]);
    expect(trajectory.expectations[0]).toEqual({
      text: 'expected tool get_order_detail never succeeded (1 call)',
      met: false,
    });
  });
});
