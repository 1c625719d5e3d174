/**
 * A refund agent built with the AI SDK (`generateText` + tools) on the SDK's own mock model,
 * as a rollout agent module: `export default async (input, context) => answer`. The scripted
 * model's choices come from the case's `context.script` and the rollout's seed, so one grid
 * shows every class: `good` always follows the policy, `forbidden` always submits the refund,
 * `flaky` looks the wrong order up on one rollout in three, `throws` fails before answering
 * on odd rollouts, `hangs` never answers on rollout 0.
 */
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import type { RolloutContext } from '../../src/rollouts/run-rollouts.js';

type Call = { name: string; args: Record<string, unknown> };
type Turn = Call | string;

const USAGE = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

function model(turns: Turn[]): MockLanguageModelV3 {
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
        content: [
          {
            type: 'tool-call' as const,
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
    execute: async ({ order_id }) => ({ order_id, total: 42.5, delivered: true }),
  }),
  check_refund_policy: tool({
    description: 'Says whether an order qualifies for a refund',
    inputSchema: z.object({ order_id: z.string() }),
    execute: async ({ order_id }) => ({ order_id, qualifies: true }),
  }),
  submit_refund: tool({
    description: 'Submits a refund',
    inputSchema: z.object({ order_id: z.string() }),
    execute: async ({ order_id }) => ({ order_id, submitted: true }),
  }),
};

function script(kind: string, ctx: RolloutContext): Turn[] {
  const good: Turn[] = [
    { name: 'get_order_detail', args: { order_id: 'A1024' } },
    { name: 'check_refund_policy', args: { order_id: 'A1024' } },
    'Order A1024 qualifies for a refund.',
  ];
  switch (kind) {
    case 'forbidden':
      return [
        { name: 'get_order_detail', args: { order_id: 'A1024' } },
        { name: 'submit_refund', args: { order_id: 'A1024' } },
        'Refund submitted.',
      ];
    case 'flaky':
      return ctx.rollout % 3 === 0
        ? [
            { name: 'get_order_detail', args: { order_id: 'A9999' } },
            { name: 'check_refund_policy', args: { order_id: 'A9999' } },
            'Order A9999 qualifies.',
          ]
        : good;
    default:
      return good;
  }
}

export default async function agent(input: unknown, ctx: RolloutContext): Promise<string> {
  const kind = (ctx.context as { script?: string } | undefined)?.script ?? 'good';
  if (kind === 'throws' && ctx.rollout % 2 === 1)
    throw new Error(`scripted failure on rollout ${ctx.rollout}`);
  if (kind === 'hangs' && ctx.rollout === 0) {
    await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
    return 'too late';
  }
  const result = await generateText({
    model: model(script(kind, ctx)),
    tools,
    prompt: String(input),
    stopWhen: stepCountIs(5),
    experimental_telemetry: { isEnabled: true, tracer: ctx.tracer, functionId: 'refund-agent' },
  });
  return result.text;
}
