/**
 * µs per run for the agno scorers (`reliability`, `tool_calls`) on a 10-call and a
 * 1,000-call run. The run is built once from OTLP/JSON through decoding and
 * reconstruction; only `score` is timed. Baseline, in the same process and interleaved
 * round by round: creating and ending 10 spans with a bare `BasicTracerProvider` (no
 * processor) — roughly what the instrumented agent already pays to trace a 10-call run.
 */
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { spansFromOtlpJson } from '../src/conventions/from-otlp-json.js';
import { reconstructTraces } from '../src/reconstruction/reconstruct-trace.js';
import { reliability } from '../src/scorers/reliability.js';
import { toolCalls } from '../src/scorers/tool-calls.js';
import type { AgentRun, Scorer } from '../src/types.js';
import { TraceBuilder } from '../test/helpers/trace-builder.js';
import type { BenchReport } from './run.js';

const TOOLS = ['get_order_detail', 'check_refund_policy', 'search_kb', 'lookup_customer', 'send_email'];
const ROUNDS = 5;

/** A team run: the leader makes a tenth of the calls, one member the rest; some fail, some only requested. */
function buildRun(calls: number): AgentRun {
  const t = new TraceBuilder();
  const leader = t.agent('support-team');
  const member = leader.agent('refund-agent');
  for (let i = 0; i < calls; i++) {
    const owner = i % 10 === 0 ? leader : member;
    const name = TOOLS[i % TOOLS.length]!;
    const args = { order_id: i % 7 === 0 ? 'A1024' : `A${1000 + i}`, include_history: true, page: i % 3 };
    const id = `call_${i}`;
    owner.llm({
      toolCalls: [{ name, id, args }, ...(i % 50 === 0 ? [{ name: 'submit_refund', id: `r_${i}` }] : [])],
    });
    owner.tool(name, { id, args, status: i % 13 === 0 ? 'error' : 'ok' });
  }
  const [trace] = reconstructTraces(spansFromOtlpJson(t.toOtlp()));
  const run = trace!.runs[0]!;
  const total = run.calls.length + run.children.reduce((n, c) => n + c.calls.length, 0);
  if (total < calls) throw new Error(`reconstruction lost calls: ${total} < ${calls}`);
  return run;
}

function scorers(): Array<[string, Scorer]> {
  return [
    [
      'reliability (members, strict, arguments)',
      reliability({
        expectedToolCalls: ['get_order_detail', 'check_refund_policy'],
        expectedToolCallArguments: {
          get_order_detail: { order_id: 'A1024', include_history: true },
          check_refund_policy: [{ page: 1 }, { page: 2 }],
        },
      }),
    ],
    [
      'tool_calls (self, strict, arguments)',
      toolCalls({
        expectedTools: ['get_order_detail', 'check_refund_policy'],
        arguments: { get_order_detail: [{ order_id: 'A1024' }], check_refund_policy: { page: 1 } },
        allowAdditional: false,
      }),
    ],
  ];
}

/** µs per call of `fn`, over at least `minMs` after as long a warm-up (JIT, GC settling). */
function measure(fn: () => unknown, minMs: number): number {
  const warmUntil = performance.now() + minMs;
  while (performance.now() < warmUntil) for (let i = 0; i < 10; i++) fn();
  let iterations = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < minMs) {
    for (let i = 0; i < 10; i++) fn();
    iterations += 10;
    elapsed = performance.now() - start;
  }
  return (elapsed * 1000) / iterations;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

export async function run(): Promise<BenchReport> {
  const tracer = new BasicTracerProvider().getTracer('bench');
  const tenSpans = () => {
    for (let i = 0; i < 10; i++)
      tracer.startSpan('execute_tool get_order_detail', { attributes: { i } }).end();
  };
  const runs = new Map([10, 1000].map((n) => [n, buildRun(n)] as const));
  const list = scorers();
  const samples = new Map<string, number[]>();
  const push = (k: string, v: number) => samples.set(k, [...(samples.get(k) ?? []), v]);
  for (let round = 0; round < ROUNDS; round++) {
    push('baseline', measure(tenSpans, 150));
    for (const [label, scorer] of list) {
      for (const [n, r] of runs)
        push(
          `${label}|${n}`,
          measure(() => scorer.score(r), 150),
        );
    }
  }
  const baseline = median(samples.get('baseline')!);
  const rows: BenchReport['rows'] = [];
  for (const [label] of list) {
    for (const n of runs.keys()) {
      const us = median(samples.get(`${label}|${n}`)!);
      rows.push({
        scorer: label,
        calls: n,
        us_per_run: us,
        baseline: '10 spans, bare BasicTracerProvider',
        baseline_us: baseline,
        ratio: us / baseline,
      });
    }
  }
  return {
    name: 'agno scorers: reliability and tool_calls',
    rows,
    notes: [
      `median of ${ROUNDS} interleaved rounds of 150 ms after a 150 ms warm-up; the run is reconstructed once, only score() is timed`,
      'runs: a team whose leader makes 1/10 of the calls and one member the rest; 1 in 13 errored, 1 in 50 with a refused request',
    ],
  };
}
