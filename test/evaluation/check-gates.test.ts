import { describe, expect, it } from 'vitest';
import { checkGates, summarizeVerdicts, VerdictSummarizer } from '../../src/evaluation/check-gates.js';
import { evaluateTraces } from '../../src/evaluation/evaluate-traces.js';
import { loadPolicy } from '../../src/policy/load-policy.js';
import type { Verdict } from '../../src/types.js';
import { TraceBuilder } from '../helpers/trace-builder.js';
import { traceIdAt } from './helpers.js';

const POLICY = `
version: 1
rules:
  - name: refunds
    scorers:
      - kind: trajectory
        expected_tools: [get_order_detail, check_refund_policy]
        forbidden_tools: [submit_refund]
        arg_constraints: { get_order_detail: { order_id: { equals: A1024 } } }
        risk: high
gates:
  tool_selection_accuracy: { min: 0.75 }
  argument_accuracy: { min: 0.9 }
  forbidden_tool_calls: { max: 0 }
  high_risk_pass_rate: { min: 0.5 }
  avg_calls_vs_baseline: { max_ratio: 1.2 }
  regression_vs_baseline: { max_drop: 0.25 }
`;

function trace(i: number, tools: Array<[string, string]>) {
  const t = new TraceBuilder({ traceId: traceIdAt(i / 10) });
  const a = t.agent('refund-agent');
  for (const [name, orderId] of tools) a.tool(name, { args: { order_id: orderId } });
  return t.toOtlp();
}

const good = (i: number) =>
  trace(i, [
    ['get_order_detail', 'A1024'],
    ['check_refund_policy', 'A1024'],
  ]);

describe('checkGates', () => {
  it('aggregates trajectory results into the gate metrics', async () => {
    const policy = await loadPolicy(POLICY);
    const verdicts = await evaluateTraces(
      [
        good(1),
        good(2),
        trace(3, [
          ['get_order_detail', 'B7'],
          ['check_refund_policy', 'B7'],
        ]),
        trace(4, [
          ['get_order_detail', 'A1024'],
          ['check_refund_policy', 'A1024'],
          ['submit_refund', 'A1024'],
        ]),
      ],
      policy,
    );
    const summary = summarizeVerdicts(verdicts, policy);
    expect(summary).toMatchObject({
      runs: 4,
      passed: 2,
      trajectoryResults: 4,
      toolSelectionPasses: 3,
      argAccuracySum: 3,
      forbiddenToolCalls: 1,
      highRiskResults: 4,
      highRiskPasses: 2,
      callsSum: 9,
    });
    const gates = checkGates(verdicts, policy);
    expect(gates.map((g) => [g.gate, g.value, g.held, g.note ?? null])).toEqual([
      ['tool_selection_accuracy', 0.75, true, null],
      ['argument_accuracy', 0.75, false, null],
      ['forbidden_tool_calls', 1, false, null],
      ['high_risk_pass_rate', 0.5, true, null],
      ['avg_calls_vs_baseline', 2.25, true, 'no baseline'],
      ['regression_vs_baseline', 0.5, true, 'no baseline'],
    ]);

    const baseline = await evaluateTraces([good(5), good(6)], policy);
    const vsBaseline = checkGates(verdicts, policy, baseline);
    expect(vsBaseline[4]).toMatchObject({ value: 2.25, baseline: 2, held: true });
    // Pass rate 0.5 against 1.0: a drop of 0.5 > 0.25.
    expect(vsBaseline[5]).toMatchObject({ value: 0.5, baseline: 1, held: false });
  });

  it('never holds on nothing: zero runs fail every gate', async () => {
    const policy = await loadPolicy(POLICY);
    const gates = checkGates([], policy);
    expect(gates.map((g) => [g.status, g.held, g.note])).toEqual(
      gates.map(() => ['failed', false, 'nothing was scored']),
    );
  });

  it('fails trajectory gates when runs were scored without a trajectory result; skips an empty high-risk set', async () => {
    // The runs are scored (by reliability) but the trajectory scorer never runs.
    const policy = await loadPolicy(
      POLICY.replace(
        'kind: trajectory',
        'kind: reliability\n        expected_tool_calls: [get_order_detail, check_refund_policy]\n      - kind: trajectory\n        sampling: { ratio: 0 }',
      ),
    );
    const verdicts = await evaluateTraces([good(1), good(2)], policy);
    expect(verdicts.map((v) => v.results.map((r) => r.label))).toEqual([
      ['pass', 'skipped'],
      ['pass', 'skipped'],
    ]);
    const gates = Object.fromEntries(checkGates(verdicts, policy).map((g) => [g.gate, [g.status, g.note]]));
    expect(gates).toEqual({
      tool_selection_accuracy: ['failed', 'nothing to measure: no trajectory results'],
      argument_accuracy: ['failed', 'nothing to measure: no trajectory results'],
      forbidden_tool_calls: ['failed', 'nothing to measure: no trajectory results'],
      high_risk_pass_rate: ['skipped', 'no high-risk results'],
      avg_calls_vs_baseline: ['failed', 'nothing to measure: no trajectory results'],
      regression_vs_baseline: ['skipped', 'no baseline'],
    });
  });

  it('takes a summary built one verdict at a time, with the same outcome as the verdict list', async () => {
    const policy = await loadPolicy(POLICY);
    const verdicts = await evaluateTraces([good(1), trace(2, [['get_order_detail', 'B7']])], policy);
    const summarizer = new VerdictSummarizer(policy);
    for (const v of verdicts) summarizer.add(v);
    const baseline = await evaluateTraces([good(5), good(6)], policy);
    expect(checkGates(summarizer.summary, policy, summarizeVerdicts(baseline, policy))).toEqual(
      checkGates(verdicts, policy, baseline),
    );
    expect(
      checkGates(verdicts, policy, baseline).find((g) => g.gate === 'regression_vs_baseline'),
    ).toMatchObject({
      value: 0.5,
      baseline: 1,
      status: 'failed',
    });
  });

  it('counts no run out of the sample in the pass rate: a regression gate never holds on records that judged nothing', async () => {
    const policy = await loadPolicy(POLICY);
    const sampledOut = await loadPolicy(POLICY.replace('version: 1', 'version: 1\nsampling: { ratio: 0 }'));
    const unjudged = await evaluateTraces([good(1), trace(2, [['submit_refund', 'A1024']])], sampledOut);
    expect(unjudged.map((v) => [v.passed, v.results.map((r) => r.label)])).toEqual([
      [null, ['skipped']],
      [null, ['skipped']],
    ]);
    const baseline = await evaluateTraces([good(5), good(6)], policy);
    expect(summarizeVerdicts(unjudged, policy)).toMatchObject({ runs: 0, passed: 0 });
    // One judged pass among them: the rate is 1 of 1, not 3 of 3.
    const mixed = [...unjudged, ...(await evaluateTraces([good(3)], policy))];
    expect(summarizeVerdicts(mixed, policy)).toMatchObject({ runs: 1, passed: 1 });
    const regression = checkGates(unjudged, policy, baseline).find(
      (g) => g.gate === 'regression_vs_baseline',
    );
    expect(regression?.status).not.toBe('held');
    expect(regression?.value).toBeNull();
  });
});

describe('pass_rate per rule', () => {
  it('counts a rule named __proto__ like any other (rule names come from verdicts)', async () => {
    const { VerdictSummarizer, addSummary, emptySummary } = await import(
      '../../src/evaluation/check-gates.js'
    );
    const summarizer = new VerdictSummarizer();
    const verdict = (rule: string, passed: boolean): Verdict => ({
      trace_id: 't',
      span_id: 's',
      agent: 'a',
      rule,
      passed,
      policy_digest: 'd',
      sampled: true,
      results: [
        {
          scorer: 'x',
          kind: 'custom',
          passed,
          score: passed ? 1 : 0,
          label: passed ? 'pass' : 'fail',
          reason: null,
          digest: 'd',
          detail: {},
        },
      ],
    });
    summarizer.add(verdict('__proto__', true));
    summarizer.add(verdict('__proto__', false));
    summarizer.add(verdict('refunds', true));
    const total = emptySummary();
    addSummary(total, summarizer.summary);
    addSummary(total, summarizer.summary);
    expect(Object.getPrototypeOf(total.byRule)).toBe(Object.prototype);
    expect(Object.entries(total.byRule!)).toEqual([
      ['__proto__', { runs: 4, passed: 2 }],
      ['refunds', { runs: 2, passed: 2 }],
    ]);
  });
});
