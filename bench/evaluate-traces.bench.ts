/**
 * `evaluateTraces` on 10,000 runs (one agent, two LLM calls, three tool executions each:
 * 6 spans per run), OTLP/JSON in batches of 1,000 traces, against a refunds-like policy
 * with the four deterministic scorers. Baselines in the same process, interleaved round by
 * round: decoding alone, and decoding plus reconstruction (what every consumer pays before
 * any scoring). Ratios say what the evaluation pipeline adds on top. The first row is the
 * scoring step alone (`evaluateRunSync` on runs already reconstructed): what the span
 * processor pays per run when the agent span ends.
 */
import { spansFromOtlpJson } from '../src/conventions/from-otlp-json.js';
import { evaluateRunSync } from '../src/evaluation/evaluate-run.js';
import { evaluateTraces } from '../src/evaluation/evaluate-traces.js';
import { parsePolicyText } from '../src/policy/load-policy.js';
import { reconstructTraces } from '../src/reconstruction/reconstruct-trace.js';
import { type OtlpRequest, TraceBuilder } from '../test/helpers/trace-builder.js';
import type { BenchReport } from './run.js';

const RUNS = 10_000;
const BATCH = 1_000;
const ROUNDS = 3;

const POLICY = `
version: 1
rules:
  - name: refunds
    match: { agent: "refund-*" }
    scorers:
      - kind: reliability
        expected_tool_calls: [get_order_detail, check_refund_policy]
        expected_tool_call_arguments: { get_order_detail: { order_id: A1024 } }
      - kind: tool_calls
        expected_tools: [get_order_detail]
        arguments: { get_order_detail: [{ order_id: A1024 }] }
      - kind: tool_order
        expected_tool_order: [get_order_detail, check_refund_policy]
      - kind: trajectory
        expected_tools: [get_order_detail, check_refund_policy]
        forbidden_tools: [submit_refund]
        max_calls: 3
        arg_constraints: { get_order_detail: { order_id: { equals: A1024 } } }
        expected_order: [[get_order_detail, check_refund_policy]]
`;

function buildRequests(): OtlpRequest[] {
  const requests: OtlpRequest[] = [];
  for (let b = 0; b < RUNS / BATCH; b++) {
    const spans: Array<Record<string, unknown>> = [];
    let resource: OtlpRequest['resourceSpans'][number]['resource'];
    for (let i = 0; i < BATCH; i++) {
      const n = b * BATCH + i;
      // n + 1: the all-zero trace id is invalid in OTel and dropped by the decoder.
      const t = new TraceBuilder({ traceId: (n + 1).toString(16).padStart(32, '0') });
      const agent = t.agent('refund-agent');
      const orderId = n % 5 === 0 ? 'B7' : 'A1024';
      agent.llm({ toolCalls: [{ name: 'get_order_detail', id: 'c1', args: { order_id: orderId } }] });
      agent.tool('get_order_detail', { id: 'c1', args: { order_id: orderId }, result: { total: 42.5 } });
      agent.llm({ toolCalls: [{ name: 'check_refund_policy', id: 'c2', args: { order_id: orderId } }] });
      agent.tool('check_refund_policy', {
        id: 'c2',
        args: { order_id: orderId },
        result: { eligible: true },
      });
      agent.tool(n % 7 === 0 ? 'submit_refund' : 'log_event', { id: 'c3', args: { order_id: orderId } });
      const otlp = t.toOtlp();
      resource = otlp.resourceSpans[0]!.resource;
      spans.push(...otlp.resourceSpans[0]!.scopeSpans[0]!.spans);
    }
    requests.push({ resourceSpans: [{ resource, scopeSpans: [{ scope: { name: 'bench' }, spans }] }] });
  }
  return requests;
}

async function time(fn: () => unknown | Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

export async function run(): Promise<BenchReport> {
  const requests = buildRequests();
  const text = requests.map((r) => JSON.stringify(r)).join('\n');
  const policy = parsePolicyText(POLICY);
  const runs = reconstructTraces(spansFromOtlpJson(requests)).flatMap((t) => t.runs);
  const rule = policy.rules[0]!;
  const stages: Array<[string, () => unknown]> = [
    ['evaluateRunSync only (runs already built)', () => runs.map((r) => evaluateRunSync(r, rule, policy))],
    ['decode OTLP/JSON objects (baseline)', () => spansFromOtlpJson(requests)],
    ['decode + reconstruct (baseline)', () => reconstructTraces(spansFromOtlpJson(requests))],
    ['evaluateTraces, objects', () => evaluateTraces(requests, policy)],
    ['evaluateTraces, JSON Lines text', () => evaluateTraces(text, policy)],
  ];
  const samples = stages.map(() => [] as number[]);
  let verdicts = 0;
  verdicts = (await evaluateTraces(requests, policy)).length;
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < stages.length; i++) samples[i]!.push(await time(stages[i]![1]));
  }
  const base = median(samples[2]!);
  const rows = stages.map(([stage], i) => {
    const ms = median(samples[i]!);
    return {
      stage,
      'ms (median)': Math.round(ms),
      'runs/s': Math.round((RUNS / ms) * 1000),
      'µs/run': Math.round((ms * 1000) / RUNS),
      'x decode+reconstruct': Number((ms / base).toFixed(2)),
    };
  });
  return {
    name: 'evaluateTraces: 10,000 runs, 4 deterministic scorers',
    rows,
    notes: [
      `${RUNS} runs × 6 spans in ${RUNS / BATCH} OTLP requests; ${verdicts} verdicts; median of ${ROUNDS} interleaved rounds.`,
      'Scorers: reliability, tool_calls, tool_order, trajectory (refunds-like policy, no judges).',
    ],
  };
}
