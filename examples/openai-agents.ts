/**
 * OpenAI Agents SDK, traced through the OpenInference bridge, judged by toolwatch. The
 * model is scripted (no network): a support agent looks an account up, then deletes it —
 * a forbidden write that toolwatch reports live, at the tool span's start.
 *
 *   npx tsx examples/openai-agents.ts
 */
import { OpenAIAgentsInstrumentation } from '@arizeai/openinference-instrumentation-openai-agents';
import * as agents from '@openai/agents';
import {
  Agent,
  type AgentOutputItem,
  type Model,
  type ModelResponse,
  Runner,
  tool,
  Usage,
} from '@openai/agents';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { loadPolicy, ToolwatchSpanProcessor } from '../src/index.js';

/** Plays one scripted turn per model call: tool calls, then a final message. */
class ScriptedModel implements Model {
  private _turn = 0;
  constructor(private readonly _turns: Array<Array<{ name: string; args: unknown }> | string>) {}

  async getResponse(): Promise<ModelResponse> {
    const turn = this._turns[this._turn++] ?? 'Done.';
    const output: AgentOutputItem[] =
      typeof turn === 'string'
        ? [
            {
              type: 'message',
              role: 'assistant',
              status: 'completed',
              content: [{ type: 'output_text', text: turn }],
            },
          ]
        : turn.map((c, i) => ({
            type: 'function_call' as const,
            callId: `call_${this._turn}_${i}`,
            name: c.name,
            arguments: JSON.stringify(c.args),
            status: 'completed' as const,
          }));
    return {
      usage: new Usage({ requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 }),
      output,
      responseId: `resp_${this._turn}`,
    };
  }

  // biome-ignore lint/correctness/useYield: the example never streams.
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('not used in this example');
  }
}

const policy = await loadPolicy(new URL('./policies/support.yaml', import.meta.url).pathname);

const exporter = new InMemorySpanExporter();
const toolwatch = new ToolwatchSpanProcessor({
  policy,
  onMisuse: (m) => console.log(`[misuse] LIVE ${m.kind} tool "${m.tool}" in ${m.agent}`),
  onVerdict: (v) =>
    console.log(
      `[verdict] ${JSON.stringify(v.results.map((r) => [r.reason, r.detail]))} ${v.passed ? 'PASS' : 'FAIL'} agent=${v.agent} ${v.results.map((r) => `${r.scorer}=${r.label}`).join(' ')}`,
    ),
});
const provider = new BasicTracerProvider({ spanProcessors: [toolwatch, new SimpleSpanProcessor(exporter)] });

// The bridge is a TracingProcessor of the Agents SDK that re-emits OpenInference OTel spans.
new OpenAIAgentsInstrumentation({ tracerProvider: provider }).manuallyInstrument(agents, {
  exclusiveProcessor: true,
});
agents.setTracingDisabled(false);

const deleted: string[] = [];
const supportAgent = new Agent({
  name: 'support_agent',
  instructions: 'Help the customer with their account.',
  model: new ScriptedModel([
    [{ name: 'lookup_account', args: { email: 'ada@example.com' } }],
    [{ name: 'delete_account', args: { account_id: 'acct_42' } }],
    'Your account has been closed.',
  ]),
  tools: [
    tool({
      name: 'lookup_account',
      description: 'Finds an account by email',
      parameters: z.object({ email: z.string() }),
      execute: async ({ email }) => ({ account_id: 'acct_42', email, plan: 'pro' }),
    }),
    tool({
      name: 'delete_account',
      description: 'Deletes an account (needs a human)',
      parameters: z.object({ account_id: z.string() }),
      execute: async ({ account_id }) => {
        deleted.push(account_id);
        return { deleted: true };
      },
    }),
  ],
});

const result = await new Runner({ traceIncludeSensitiveData: true }).run(
  supportAgent,
  'Please close my account.',
);
console.log(`agent answered: ${result.finalOutput}`);
await toolwatch.forceFlush();
const tools = exporter
  .getFinishedSpans()
  .filter((s) => s.attributes['openinference.span.kind'] === 'TOOL')
  .map((s) => s.name);
console.log(`tool spans: ${tools.join(', ')}; deleted: ${deleted.join(', ')}`);
await provider.shutdown();
