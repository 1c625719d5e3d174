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

/** The shop's orders: a lookup of any other id finds nothing. */
const ORDERS: Record<string, { total: number; delivered: boolean; days_since_delivery: number }> = {
  A1024: { total: 42.5, delivered: true, days_since_delivery: 12 },
};

export const tools = {
  get_order_detail: tool({
    description: 'Looks an order up',
    inputSchema: z.object({ order_id: z.string(), include_history: z.boolean().optional() }),
    execute: async ({ order_id }) =>
      ORDERS[order_id] ? { order_id, found: true, ...ORDERS[order_id] } : { order_id, found: false },
  }),
  check_refund_policy: tool({
    description: 'Says whether an order qualifies for a refund',
    inputSchema: z.object({ order_id: z.string() }),
    execute: async ({ order_id }) =>
      ORDERS[order_id]
        ? { order_id, qualifies: true, reason: 'within 30 days' }
        : { order_id, qualifies: false, reason: 'no such order' },
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

/** One section of a `trajectory_grounding` prompt: the text after `TITLE:` up to the next blank line. */
function section(prompt: string, title: string): string {
  const at = prompt.indexOf(`${title}`);
  if (at < 0) return '';
  const rest = prompt.slice(at + title.length);
  const end = rest.search(/\n\s*\n/);
  return end < 0 ? rest : rest.slice(0, end);
}

const ORDER_ID = /\b[A-Z]\d{3,}\b/g;
const ids = (text: string) => new Set(text.match(ORDER_ID) ?? []);

/**
 * A mock judge model standing in for an LLM: it reads the `trajectory_grounding` prompt as an
 * LLM would and checks what a rule-based reader can — the order ids in the tool arguments
 * against the user's request, and the answer's claims against the tool results (does the order
 * qualify, was a refund submitted). With values redacted (the policy's default) the prompt shows
 * argument and result keys only, and it can check nothing but the claims.
 */
export async function scriptedJudge(request: { prompt: string }): Promise<string> {
  const asked = ids(section(request.prompt, 'USER REQUEST:'));
  const calls = section(request.prompt, 'TOOL CALLS IN ORDER (arguments and results):').split('\n');
  const answer = section(request.prompt, 'FINAL ANSWER:');

  // Arguments: an order id the user never mentioned is made up.
  const madeUp = new Map<string, string[]>();
  for (const call of calls) {
    const tool = /^\d+\. (\S+)/.exec(call)?.[1] ?? 'a tool';
    for (const id of ids(call.split(' -> ')[0] ?? '')) {
      if (!asked.has(id)) madeUp.set(id, [...(madeUp.get(id) ?? []), tool]);
    }
  }
  const argProblems = [...madeUp].map(
    ([id, tools]) =>
      `${tools.join(' and ')} ${tools.length > 1 ? 'were' : 'was'} called for order ${id}, but the user asked about ${[...asked].join(', ') || 'no order'}`,
  );
  // Grounding: each claim of the answer must agree with what the tools returned.
  const results = calls.map((c) => c.split('; result ')[1] ?? '').join('\n');
  const groundingProblems: string[] = [];
  if (/\bqualifies\b/i.test(answer) && /"qualifies":false/.test(results)) {
    groundingProblems.push(
      'the answer says the order qualifies, but check_refund_policy returned qualifies: false',
    );
  }
  const claimsSubmitted = /submitted your refund/i.test(answer);
  if (claimsSubmitted && !/"submitted":true/.test(results)) {
    groundingProblems.push('the answer claims a refund was submitted, which no tool result shows');
  }
  const problems = [...argProblems, ...groundingProblems];
  return JSON.stringify({
    arg_semantic_pass: argProblems.length === 0,
    // The policy's facts include "does not claim a refund was submitted".
    grounding_pass: groundingProblems.length === 0 && !claimsSubmitted,
    missing_facts: claimsSubmitted ? ['does not claim a refund was submitted'] : [],
    reason:
      problems.length > 0
        ? `${problems.join('; ')}.`
        : claimsSubmitted
          ? 'The answer claims a refund was submitted.'
          : 'Grounded in the tool results.',
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
