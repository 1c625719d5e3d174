/**
 * µs per run for `tool_order` and `trajectory` on a 10-call and a 1,000-call run.
 * Baselines, measured in the same process: Mastra's own `createToolCallAccuracyScorerCode`
 * on the same calls (for `tool_order`), and one `JSON.stringify` of every call's arguments
 * (for `trajectory`: the floor of any scorer that reads all arguments once).
 */
import { createToolCallAccuracyScorerCode } from '@mastra/evals/scorers/prebuilt';
import { toolOrder } from '../src/scorers/tool-order.js';
import { trajectory } from '../src/scorers/trajectory.js';
import type { AgentRun, ToolExecution } from '../src/types.js';
import type { BenchReport } from './run.js';

const TOOLS = ['get_order_detail', 'check_refund_policy', 'search_kb', 'lookup_customer', 'send_email'];

function makeRun(n: number): AgentRun {
  const run = {
    agent: 'refund-agent',
    traceId: '0'.repeat(32),
    spanId: 'run',
    implicit: false,
    children: [],
    executions: [],
    requests: [],
    calls: [] as ToolExecution[],
    history: [],
    start: 0,
    status: 0,
    attributes: {},
    hasErrorSpan: false,
  } as AgentRun;
  for (let i = 0; i < n; i++) {
    run.calls.push({
      name: TOOLS[i % TOOLS.length]!,
      callId: `call-${i}`,
      args: {
        order_id: i % 7 === 0 ? 'A1024' : `A${1000 + i}`,
        include_history: true,
        page: i % 3,
        tags: ['a', 'b'],
      },
      argsSource: 'span',
      status: i % 11 === 0 ? 'error' : 'ok',
      fromHistory: false,
      requestOnly: false,
      spanId: i.toString(16).padStart(16, '0'),
      start: i,
      run,
      convention: 'gen_ai',
    });
  }
  return run;
}

function mastraRun(run: AgentRun) {
  return {
    input: { inputMessages: [{ role: 'user', content: { format: 2, parts: [] } }] },
    output: [
      {
        role: 'assistant',
        content: {
          format: 2,
          parts: run.calls.map((c) => ({
            type: 'tool-invocation',
            toolInvocation: { toolCallId: c.callId, toolName: c.name, args: c.args, state: 'result' },
          })),
        },
      },
    ],
  };
}

/** µs per call of `fn`, over at least `minMs` after a warm-up. */
async function measure(fn: () => unknown, minMs = 300): Promise<number> {
  for (let i = 0; i < 50; i++) await fn();
  let iterations = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < minMs) {
    for (let i = 0; i < 20; i++) await fn();
    iterations += 20;
    elapsed = performance.now() - start;
  }
  return (elapsed * 1000) / iterations;
}

export async function run(): Promise<BenchReport> {
  const order = toolOrder({
    expectedTool: 'send_email',
    expectedToolOrder: ['get_order_detail', 'check_refund_policy'],
  });
  const mastra = createToolCallAccuracyScorerCode({
    expectedTool: 'send_email',
    expectedToolOrder: ['get_order_detail', 'check_refund_policy'],
  });
  const traj = trajectory({
    expectedTools: ['get_order_detail', 'check_refund_policy'],
    forbiddenTools: ['submit_refund'],
    maxCalls: 3,
    maxRepeats: 2,
    argConstraints: {
      get_order_detail: {
        order_id: { equals: 'A1024', matches: '^A\\d{4}$' },
        include_history: { equals: true },
      },
      check_refund_policy: { page: { in: [0, 1] }, tags: { contains: 'a' } },
    },
    expectedOrder: [['get_order_detail', 'check_refund_policy']],
    order: 'in_order',
  });
  const rows: BenchReport['rows'] = [];
  for (const n of [10, 1000]) {
    const r = makeRun(n);
    const m = mastraRun(r);
    const ours = await measure(() => order.score(r));
    const theirs = await measure(() => mastra.run(m as never));
    rows.push({
      scorer: 'tool_order (mastra)',
      calls: n,
      us_per_run: ours,
      baseline: '@mastra/evals 1.10.2 scorer.run',
      baseline_us: theirs,
      ratio: ours / theirs,
    });
    const t = await measure(() => traj.score(r));
    const floor = await measure(() => {
      let total = 0;
      for (const c of r.calls) total += JSON.stringify(c.args).length;
      return total;
    });
    rows.push({
      scorer: 'trajectory (all rules)',
      calls: n,
      us_per_run: t,
      baseline: 'JSON.stringify of every call args',
      baseline_us: floor,
      ratio: t / floor,
    });
  }
  return {
    name: 'tool_order and trajectory scorers',
    rows,
    notes: [
      'Runs are in memory (reconstruction excluded); the trajectory scorer runs every rule: missing/forbidden, budget, max_repeats (canonical args of every call), argument rules incl. a regex, order pairs and in_order.',
      "Mastra's scorer is async (a promise pipeline per run), which dominates its time on small runs.",
    ],
  };
}
