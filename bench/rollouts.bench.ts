/**
 * What judging costs per rollout: `runRollouts` (rollout span, the agent's AI SDK spans
 * captured by ToolwatchSpanProcessor, a verdict per rollout, grid) against the same scripted
 * AI SDK agent run the same number of times at the same concurrency inside a plain span on a
 * BasicTracerProvider without toolwatch. Alternating rounds; medians.
 */
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { parseCasesText } from '../src/cases/load-cases.js';
import { ensureContextPropagation } from '../src/rollouts/async-context-manager.js';
import { type RolloutContext, runRollouts } from '../src/rollouts/run-rollouts.js';
import agent from '../test/rollouts/scripted-agent.js';
import type { BenchReport } from './run.js';

const CASES = 50;
const K = 6;
const CONCURRENCY = 6;
const ROUNDS = 5;

const cases = parseCasesText(
  Array.from(
    { length: CASES },
    (_, i) => `- id: case-${i}
  input: Refund for order A1024 (${i})
  context: ${['{ order: A1024 }', '{ order: A1024, misread_every: 3 }', '{ order: A1024, submits_refund: true }'][i % 3]}
  expected_tools: [get_order_detail, check_refund_policy]
  forbidden_tools: [submit_refund]
  arg_constraints: { get_order_detail: { order_id: { equals: A1024 } } }
  expected_order: [[get_order_detail, check_refund_policy]]
`,
  ).join(''),
);

async function agentAlone(): Promise<number> {
  ensureContextPropagation();
  const provider = new BasicTracerProvider();
  const tracer = provider.getTracer('bench');
  const jobs = cases.flatMap((c) => Array.from({ length: K }, (_, rollout) => ({ c, rollout })));
  let next = 0;
  const start = performance.now();
  const worker = async () => {
    while (next < jobs.length) {
      const { c, rollout } = jobs[next++]!;
      await tracer.startActiveSpan('rollout', async (span) => {
        const ctx: RolloutContext = {
          caseId: c.id,
          case: c,
          rollout,
          seed: rollout,
          context: c.context,
          tracer,
          signal: new AbortController().signal,
        };
        await agent(c.input, ctx);
        span.end();
      });
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const ms = performance.now() - start;
  await provider.shutdown();
  return ms;
}

async function withToolwatch(): Promise<{ ms: number; verdicts: number }> {
  const start = performance.now();
  const result = await runRollouts({ cases, agent, k: K, concurrency: CONCURRENCY });
  return { ms: performance.now() - start, verdicts: result.verdicts.length };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

export async function run(): Promise<BenchReport> {
  trace.disable();
  await agentAlone();
  await withToolwatch();
  const alone: number[] = [];
  const judged: number[] = [];
  let verdicts = 0;
  for (let r = 0; r < ROUNDS; r++) {
    alone.push(await agentAlone());
    const w = await withToolwatch();
    judged.push(w.ms);
    verdicts = w.verdicts;
  }
  const n = CASES * K;
  const a = median(alone);
  const j = median(judged);
  return {
    name: `rollouts: ${CASES} cases × k=${K} at concurrency ${CONCURRENCY}, AI SDK agent on a scripted mock model`,
    rows: [
      {
        run: 'agent alone (plain span, no toolwatch)',
        'ms per rollout': a / n,
        'rollouts/s': Math.round((n / a) * 1000),
      },
      {
        run: 'runRollouts (captured, judged, grid)',
        'ms per rollout': j / n,
        'rollouts/s': Math.round((n / j) * 1000),
        'overhead µs per rollout': Math.round(((j - a) / n) * 1000),
        ratio: Number((j / a).toFixed(2)),
      },
    ],
    notes: [`${n} rollouts per round, ${verdicts} verdicts; median of ${ROUNDS} alternating rounds.`],
  };
}
