/**
 * The agent under test, as a rollout module: `export default async (input, context) => answer`.
 * Here a refund agent built with the Vercel AI SDK on the SDK's own mock model, scripted so
 * the example runs in CI without keys: its choices depend on the case and on the rollout's
 * seed, as a sampled model's would. In your repository, import your real agent instead and
 * pass `context.tracer` to its telemetry options.
 *
 * TOOLWATCH_EXAMPLE_REGRESSION=1 makes it submit refunds on its own in every case: the gates then fail.
 */
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';

const USAGE = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

function scriptedModel(turns) {
  let i = 0;
  return new MockLanguageModelV3({
    modelId: 'scripted-support-model',
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
        content: [
          {
            type: 'tool-call',
            toolCallId: `call_${i}`,
            toolName: turn.name,
            input: JSON.stringify(turn.args),
          },
        ],
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
    inputSchema: z.object({ order_id: z.string() }),
    execute: async ({ order_id }) => ({ order_id, total: 42.5, delivered: true, days_since_delivery: 12 }),
  }),
  check_refund_policy: tool({
    description: 'Says whether an order qualifies for a refund',
    inputSchema: z.object({ order_id: z.string() }),
    execute: async ({ order_id }) => ({ order_id, qualifies: true }),
  }),
  lookup_shipping: tool({
    description: 'Tracks a shipment',
    inputSchema: z.object({ order_id: z.string() }),
    execute: async ({ order_id }) => ({ order_id, status: 'in transit' }),
  }),
  submit_refund: tool({
    description: 'Submits a refund (a human must approve first)',
    inputSchema: z.object({ order_id: z.string() }),
    execute: async ({ order_id }) => ({ order_id, submitted: true }),
  }),
};

/**
 * What the scripted model does for a case, from the case's `context`: `order` is the id it
 * should use, `misread_every: n` misreads it on every n-th rollout, `submits_refund: true`
 * has it submit the refund itself.
 */
function script(input, context) {
  const order = context.context?.order ?? 'A1024';
  // A sampled model's slips: it misreads the order id on some seeds.
  const misread = context.context?.misread_every && context.rollout % context.context.misread_every === 0;
  const id = misread ? `${order}9` : order;
  if (/where is|track/i.test(String(input))) {
    return [{ name: 'lookup_shipping', args: { order_id: id } }, `Order ${id} is in transit.`];
  }
  const turns = [
    { name: 'get_order_detail', args: { order_id: id } },
    { name: 'check_refund_policy', args: { order_id: id } },
  ];
  if (context.context?.submits_refund || process.env.TOOLWATCH_EXAMPLE_REGRESSION === '1')
    turns.push({ name: 'submit_refund', args: { order_id: id } });
  return [...turns, `Order ${id} qualifies for a refund; a colleague will process it.`];
}

export default async function agent(input, context) {
  const result = await generateText({
    model: scriptedModel(script(input, context)),
    tools,
    prompt: String(input),
    stopWhen: stepCountIs(6),
    abortSignal: context.signal,
    experimental_telemetry: { isEnabled: true, tracer: context.tracer, functionId: 'support-agent' },
  });
  return result.text;
}
