/**
 * A refund agent built with the Vercel AI SDK and driven by the SDK's own mock model: no
 * network, no keys. Shared by the demo and the examples, which attach toolwatch to it.
 */
import type { Tracer } from '@opentelemetry/api';
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';

export type Call = { name: string; args: Record<string, unknown> };
export type Turn = Call[] | string;

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

export const tools = {
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

export const scripts: Array<{ customer: string; turns: Turn[] }> = [
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
export async function scriptedJudge(request: { prompt: string }): Promise<string> {
  const claimsSubmitted = /submitted your refund/i.test(request.prompt);
  return JSON.stringify({
    arg_semantic_pass: true,
    grounding_pass: !claimsSubmitted,
    missing_facts: claimsSubmitted ? ['does not claim a refund was submitted'] : [],
    reason: claimsSubmitted ? 'The answer claims a refund was submitted.' : 'Grounded in the tool results.',
  });
}

/** Runs one scripted conversation as the `refund-agent` (the AI SDK names its agent span by functionId). */
export async function runRefundAgent(tracer: Tracer, turns: Turn[]): Promise<string> {
  const result = await generateText({
    model: scriptedModel(turns),
    tools,
    prompt: 'I would like a refund for order A1024.',
    stopWhen: stepCountIs(5),
    experimental_telemetry: { isEnabled: true, tracer, functionId: 'refund-agent' },
  });
  return result.text;
}
