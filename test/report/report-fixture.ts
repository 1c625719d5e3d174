import { evaluateTraces } from '../../src/evaluation/evaluate-traces.js';
import { parsePolicyText } from '../../src/policy/load-policy.js';
import { ReportBuilder } from '../../src/report/report-builder.js';
import { buildGrid } from '../../src/rollouts/calibration-grid.js';
import type { Policy, Verdict } from '../../src/types.js';
import { TraceBuilder } from '../helpers/trace-builder.js';

export const POLICY = `
version: 1
rules:
  - name: refunds
    match: { agent: "refund-*" }
    scorers:
      - kind: trajectory
        expected_tools: [get_order_detail, check_refund_policy]
        forbidden_tools: [submit_refund]
        arg_constraints: { get_order_detail: { order_id: { equals: A1024 } } }
        risk: high
        intent: refund_check
  - name: shipping
    match: { agent: "ship-*" }
    scorers:
      - kind: trajectory
        expected_tools: [lookup_shipping]
        risk: low
        intent: order_status
gates:
  forbidden_tool_calls: { max: 0 }
`;

export function trace(n: number, agent: string, tools: Array<[string, string]>) {
  const t = new TraceBuilder({ traceId: n.toString(16).padStart(32, '0') });
  const a = t.agent(agent);
  for (const [name, id] of tools) a.tool(name, { args: { order_id: id } });
  return t.toOtlp();
}

/** 10 refund runs (2 with a wrong id, 1 with a forbidden refund; one retry of the lookup) and 4 shipping runs (1 without the tool). */
export async function fixture(): Promise<{ policy: Policy; verdicts: Verdict[] }> {
  const policy = parsePolicyText(POLICY);
  const traces = [];
  for (let i = 1; i <= 10; i++) {
    const id = i <= 2 ? 'B7' : 'A1024';
    const tools: Array<[string, string]> = [
      ['get_order_detail', id],
      ['check_refund_policy', id],
    ];
    if (i === 3) tools.push(['submit_refund', id]);
    if (i === 1) tools.push(['get_order_detail', 'A1024']);
    traces.push(trace(i, 'refund-agent', tools));
  }
  for (let i = 11; i <= 14; i++)
    traces.push(trace(i, 'ship-agent', i === 14 ? [] : [['lookup_shipping', 'C1']]));
  return { policy, verdicts: await evaluateTraces(traces, policy) };
}

export async function fixtureReport() {
  const { policy, verdicts } = await fixture();
  const builder = new ReportBuilder({ policy });
  for (const v of verdicts) builder.add(v, v.agent === 'ship-agent' ? 'shipping.jsonl' : 'refunds.jsonl.gz');
  builder.setGrid(
    buildGrid(6, [
      { case: 'easy', passed: 6, scored: 6, errors: 0 },
      { case: 'flaky', passed: 4, scored: 6, errors: 1 },
      { case: 'hard', passed: 0, scored: 6, errors: 0 },
    ]),
  );
  return { builder, policy, verdicts };
}
