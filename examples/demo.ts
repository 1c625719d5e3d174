/**
 * `npm run demo`: a refund agent built with the Vercel AI SDK, driven by the SDK's own mock
 * model (no network, no keys), with toolwatch attached to its tracer. Three customers ask
 * for a refund; the scripted model behaves well once, then hallucinates an order id, then
 * fires a forbidden write. toolwatch judges each run as its agent span ends and raises the
 * forbidden call the moment the tool span starts.
 */
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { loadPolicy, ToolwatchSpanProcessor, type Verdict } from '../src/index.js';

type Call = { name: string; args: Record<string, unknown> };
type Turn = Call[] | string;

const USAGE = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** A mock model that plays a fixed script, one turn per model call. */
function scriptedModel(turns: Turn[]): MockLanguageModelV3 {
  let i = 0;
  return new MockLanguageModelV3({
    modelId: 'scripted-refund-model',
    doGenerate: async () => {
      const turn = turns[i++] ?? 'Done.';
      if (typeof turn === 'string') {
        return {
          content: [{ type: 'text', text: turn }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage: USAGE,
          warnings: [],
        };
      }
      return {
        content: turn.map((c, k) => ({
          type: 'tool-call' as const,
          toolCallId: `call_${i}_${k}`,
          toolName: c.name,
          input: JSON.stringify(c.args),
        })),
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage: USAGE,
        warnings: [],
      };
    },
  });
}

const tools = {
  get_order_detail: tool({
    description: 'Looks an order up',
    inputSchema: z.object({ order_id: z.string(), include_history: z.boolean().optional() }),
    execute: async ({ order_id }) => ({ order_id, total: 42.5, delivered: true, days_since_delivery: 12 }),
  }),
  check_refund_policy: tool({
    description: 'Says whether an order qualifies for a refund',
    inputSchema: z.object({ order_id: z.string() }),
    execute: async ({ order_id }) => ({ order_id, qualifies: true, reason: 'within 30 days' }),
  }),
  submit_refund: tool({
    description: 'Submits a refund (requires a human)',
    inputSchema: z.object({ order_id: z.string(), amount: z.number() }),
    execute: async ({ order_id, amount }) => ({ order_id, amount, submitted: true }),
  }),
};

const scripts: Array<{ customer: string; turns: Turn[] }> = [
  {
    customer: 'well-behaved run',
    turns: [
      [{ name: 'get_order_detail', args: { order_id: 'A1024', include_history: true } }],
      [{ name: 'check_refund_policy', args: { order_id: 'A1024' } }],
      'Order A1024 qualifies for a refund; a colleague will process it.',
    ],
  },
  {
    customer: 'hallucinated order id',
    turns: [
      [{ name: 'get_order_detail', args: { order_id: 'A9999', include_history: true } }],
      [{ name: 'check_refund_policy', args: { order_id: 'A9999' } }],
      'Order A9999 qualifies for a refund.',
    ],
  },
  {
    customer: 'forbidden write',
    turns: [
      [{ name: 'get_order_detail', args: { order_id: 'A1024', include_history: true } }],
      [{ name: 'submit_refund', args: { order_id: 'A1024', amount: 42.5 } }],
      'I have submitted your refund.',
    ],
  },
];

/** A scripted judge standing in for an LLM: fails answers that claim a refund was submitted. */
async function scriptedJudge(request: { prompt: string }): Promise<string> {
  const claimsSubmitted = /submitted your refund/i.test(request.prompt);
  return JSON.stringify({
    arg_semantic_pass: true,
    grounding_pass: !claimsSubmitted,
    missing_facts: claimsSubmitted ? ['does not claim a refund was submitted'] : [],
    reason: claimsSubmitted ? 'The answer claims a refund was submitted.' : 'Grounded in the tool results.',
  });
}

function printVerdict(v: Verdict): void {
  const mark = v.passed ? 'PASS' : 'FAIL';
  console.log(`\n[verdict] ${mark}  agent=${v.agent} rule=${v.rule} trace=${v.trace_id.slice(0, 8)}…`);
  for (const r of v.results) {
    const reason = r.reason ? `  ${r.reason.split('\n')[0]!.slice(0, 110)}` : '';
    console.log(`   ${r.label.padEnd(7)} ${r.scorer.padEnd(12)} score=${r.score.toFixed(2)}${reason}`);
  }
}

async function main(): Promise<void> {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const policy = await loadPolicy(new URL('./policies/refunds.yaml', import.meta.url).pathname);
  const exporter = new InMemorySpanExporter();
  const toolwatch = new ToolwatchSpanProcessor({
    policy,
    judges: { default: scriptedJudge },
    onVerdict: printVerdict,
    onMisuse: (m) =>
      console.log(`\n[misuse]  LIVE ${m.kind} tool "${m.tool}" in ${m.agent} (rule ${m.rule})`),
  });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'refund-service', 'deployment.environment': 'prod' }),
    spanProcessors: [toolwatch, new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('refund-demo');

  for (const { customer, turns } of scripts) {
    console.log(`\n=== ${customer} ===`);
    const result = await generateText({
      model: scriptedModel(turns),
      tools,
      prompt: 'I would like a refund for order A1024.',
      stopWhen: stepCountIs(5),
      experimental_telemetry: { isEnabled: true, tracer, functionId: 'refund-agent' },
    });
    console.log(`agent answered: ${result.text}`);
    await toolwatch.forceFlush();
  }
  // The verdict travels with the span: any exporter sees it. (Read before shutdown: the
  // in-memory exporter forgets its spans when it shuts down.)
  const agentSpans = exporter.getFinishedSpans().filter((s) => s.attributes['toolwatch.evaluation.rule']);
  console.log(`\nexported agent spans carrying a verdict: ${agentSpans.length}`);
  for (const s of agentSpans) {
    console.log(
      `  ${s.name}  toolwatch.evaluation.passed=${s.attributes['toolwatch.evaluation.passed']}  failed=${JSON.stringify(
        s.attributes['toolwatch.evaluation.failed'],
      )}  events=${s.events.filter((e) => e.name === 'gen_ai.evaluation.result').length}`,
    );
  }
  await provider.shutdown();
}

await main();
