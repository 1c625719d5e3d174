import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConversationReader } from '../../src/conventions/conversation-reader.js';
import { scanGenAiConversation, scanGenAiMessages } from '../../src/conventions/gen-ai-messages.js';
import { scanPromptMessages, vercelAi } from '../../src/conventions/vercel-ai.js';
import type { SpanLike } from '../../src/types.js';
import { mulberry32 } from '../helpers/seeded-random.js';

/**
 * Each model span of a run records the whole conversation so far; a `ConversationReader`
 * (GenAI semconv's `scanGenAiConversation`, the AI SDK's `ai.prompt.messages`) parses only what
 * a text adds to the last conversation it read. It must say exactly what
 * a scan of the whole text says, whatever the texts look like, and never hand out what it
 * remembers.
 */

function message(next: () => number, n: number): unknown {
  const kind = Math.floor(next() * 7);
  const id = `call_${n % 5}`;
  if (kind === 0) return { role: 'user', parts: [{ type: 'text', content: `look up ] order, [${n}]` }] };
  if (kind === 1)
    return {
      role: 'assistant',
      parts: [{ type: 'tool_call', id, name: `tool_${n % 3}`, arguments: { order_id: `A${n}`, n } }],
    };
  if (kind === 2)
    return {
      role: 'assistant',
      from_history: next() < 0.5,
      parts: [
        {
          type: 'tool_call',
          id,
          name: 'lookup',
          arguments: JSON.stringify({ q: `"${n}"` }),
          pending: next() < 0.3,
        },
      ],
    };
  if (kind === 3)
    return {
      role: 'tool',
      parts: [{ type: 'tool_call_response', id, response: next() < 0.5 ? 'denied' : { ok: n } }],
    };
  if (kind === 4)
    return { role: 'tool', parts: [{ type: 'tool_approval_response', approval_id: id, approved: false }] };
  if (kind === 5) return { role: 'assistant', parts: [{ type: 'tool_call', name: '', id }] };
  return 'not a message';
}

/** Texts as frameworks and hostile inputs give them: continuations, repeats, rewrites, broken JSON. */
function texts(seed: number, make: (next: () => number, n: number) => unknown = message): string[] {
  const next = mulberry32(seed);
  const out: string[] = [];
  let messages: unknown[] = [];
  for (let step = 0; step < 60; step++) {
    const choice = next();
    const pretty = next() < 0.2;
    if (choice < 0.55) messages = [...messages, make(next, step)];
    else if (choice < 0.65) messages = messages.slice(Math.floor(next() * messages.length));
    else if (choice < 0.7) messages = [];
    const text = pretty ? JSON.stringify(messages, null, 2) : JSON.stringify(messages);
    const twist = next();
    if (twist < 0.05) out.push(`${text.slice(0, -1)},]`);
    else if (twist < 0.1) out.push(`${text.slice(0, -1)},{"role":"x"}]garbage`);
    else if (twist < 0.13) out.push(`${text}\n`);
    else if (twist < 0.16) out.push(text.slice(0, Math.floor(next() * text.length)));
    else if (twist < 0.19)
      out.push(`${text.slice(0, -1)} , {"parts":[{"type":"tool_call","name":"late","id":"z"}]} ]`);
    else out.push(text);
    if (next() < 0.1) out.push(out[out.length - 1]!);
  }
  return out;
}

describe('scanGenAiConversation', () => {
  afterEach(() => vi.restoreAllMocks());

  it('says what a scan of the whole text says, over 200 random sequences of conversations', () => {
    let continued = 0;
    for (let seed = 1; seed <= 200; seed++) {
      let previous = '';
      for (const text of texts(seed)) {
        if (previous.length > 1 && text.startsWith(previous.slice(0, -1)) && text.length > previous.length)
          continued++;
        expect(scanGenAiConversation(text), `seed ${seed}: ${text.slice(0, 200)}`).toEqual(
          scanGenAiMessages(text),
        );
        previous = text;
      }
    }
    // The sequences exercise the continuation path, not only whole parses.
    expect(continued).toBeGreaterThan(1000);
  });

  it('reads a text that only looks like a continuation as a whole (and finds it is not JSON)', () => {
    const call = '{"role":"assistant","parts":[{"type":"tool_call","id":"c9","name":"late"}]}';
    const cases: Array<[string, string]> = [
      // After an empty conversation: `[,…]` is not JSON, `[…]` would be.
      ['[]', `[,${call}]`],
      // A missing comma: without it the next message would be read alone.
      [`[${call}]`, `[${call} ${call}]`],
      // Nothing after the comma, or only the closing bracket.
      [`[${call}]`, `[${call},]`],
      [`[${call}]`, `[${call}, ]`],
      // Trailing text after the last one's bracket: remembered? no (it does not end with it).
      [`[${call}] `, `[${call}] ,${call}]`],
    ];
    for (const [first, second] of cases) {
      expect(scanGenAiConversation(first), first).toEqual(scanGenAiMessages(first));
      expect(scanGenAiConversation(second), second).toEqual(scanGenAiMessages(second));
    }
    expect(scanGenAiMessages(`[,${call}]`).calls).toEqual([]);
  });

  it('parses only the messages a continuation adds', () => {
    const first = JSON.stringify([
      { role: 'user', parts: [{ type: 'text', content: 'x'.repeat(5000) }] },
      { role: 'assistant', parts: [{ type: 'tool_call', id: 'c1', name: 'lookup', arguments: '{"q":1}' }] },
    ]);
    const second = `${first.slice(0, -1)},{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":"ok"}]}]`;
    scanGenAiConversation(first);
    const parse = vi.spyOn(JSON, 'parse');
    const scan = scanGenAiConversation(second);
    const parsed = parse.mock.calls.map(([text]) => String(text).length);
    expect(Math.max(...parsed)).toBeLessThan(200);
    expect(scan).toEqual(scanGenAiMessages(second));
    expect(scan.calls.map((c) => c.callId)).toEqual(['c1']);
    expect(scan.responses.map((r) => r.text)).toEqual(['ok']);
  });

  it('hands out copies: what a caller changes is not what the next caller gets', () => {
    const text = JSON.stringify([
      { role: 'assistant', parts: [{ type: 'tool_call', id: 'c1', name: 'lookup', arguments: { q: 1 } }] },
      { role: 'tool', parts: [{ type: 'tool_call_response', id: 'c1', response: 'no' }] },
    ]);
    const expected = scanGenAiMessages(text);
    const a = scanGenAiConversation(text);
    a.calls[0]!.name = 'changed';
    a.calls.push({ name: 'extra', usable: false });
    a.responses[0]!.rejected = true;
    // Once scanned whole, then as the text remembered: neither hands out what it keeps.
    const again = scanGenAiConversation(text);
    expect(again).toEqual(expected);
    again.calls[0]!.name = 'changed again';
    again.responses.length = 0;
    expect(scanGenAiConversation(text)).toEqual(expected);
    const longer = `${text.slice(0, -1)},{"role":"assistant","parts":[{"type":"tool_call","id":"c2","name":"more"}]}]`;
    const b = scanGenAiConversation(longer);
    expect(b).toEqual(scanGenAiMessages(longer));
    b.calls[1]!.name = 'changed too';
    expect(scanGenAiConversation(`${longer.slice(0, -1)},"x"]`)).toEqual(
      scanGenAiMessages(`${longer.slice(0, -1)},"x"]`),
    );
  });

  it('does not remember a conversation past 4 Mi characters: the next one is parsed whole', () => {
    const call = {
      role: 'assistant',
      parts: [{ type: 'tool_call', id: 'c1', name: 'lookup', arguments: {} }],
    };
    const big = JSON.stringify([
      { role: 'user', parts: [{ type: 'text', content: 'y'.repeat(4.2 * 1024 * 1024) }] },
      call,
    ]);
    scanGenAiConversation(big);
    const next = `${big.slice(0, -1)},"x"]`;
    const parse = vi.spyOn(JSON, 'parse');
    expect(scanGenAiConversation(next)).toEqual({
      calls: [{ name: 'lookup', args: {}, usable: true, callId: 'c1' }],
      responses: [],
    });
    expect(parse.mock.calls.some(([text]) => String(text).length === next.length)).toBe(true);
  });
});

/** AI SDK prompt messages (`ai.prompt.messages`): tool-call and tool-result content parts. */
function promptMessage(next: () => number, n: number): unknown {
  const kind = Math.floor(next() * 6);
  const toolCallId = `call_${n % 5}`;
  if (kind === 0) return { role: 'user', content: [{ type: 'text', text: `order ] [${n}], "tool-` }] };
  if (kind === 1)
    return {
      role: 'assistant',
      content: [{ type: 'tool-call', toolCallId, toolName: `tool_${n % 3}`, input: { order_id: `A${n}` } }],
    };
  if (kind === 2)
    return {
      role: 'assistant',
      content: [{ type: 'tool-call', toolCallId, toolName: 'lookup', args: '{"q":1}' }],
    };
  if (kind === 3)
    return {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId,
          toolName: 'lookup',
          output:
            next() < 0.5
              ? { type: 'error-text', value: `Invalid input for tool lookup ${n}` }
              : { type: 'json', value: { ok: n } },
        },
      ],
    };
  if (kind === 4)
    return {
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId, output: { type: 'execution-denied' } }],
    };
  return { role: 'system', content: `plain ${n}` };
}

function promptSpan(text: string): SpanLike {
  return {
    traceId: 't',
    spanId: 's',
    name: 'ai.generateText.doGenerate',
    kind: 0,
    startTime: 1,
    status: { code: 0 },
    attributes: { 'ai.operationId': 'ai.generateText.doGenerate', 'ai.prompt.messages': text },
    events: [],
  };
}

describe('ConversationReader', () => {
  it("reads the AI SDK's prompt messages as a whole read does, over 200 random sequences", () => {
    let found = 0;
    for (let seed = 1; seed <= 200; seed++) {
      for (const text of texts(seed, promptMessage)) {
        // A reader of its own remembers nothing: it reads every text whole.
        const whole = text.includes('"tool-')
          ? new ConversationReader(scanPromptMessages).read(text)
          : { calls: [], responses: [] };
        const input = vercelAi.llmInput(promptSpan(text));
        expect(input.inputCalls, `seed ${seed}: ${text.slice(0, 200)}`).toEqual(whole.calls);
        expect(input.refusals, `seed ${seed}: ${text.slice(0, 200)}`).toEqual(whole.responses);
        found += whole.calls.length + whole.responses.length;
      }
    }
    expect(found).toBeGreaterThan(10_000);
  });

  it('parses only what an AI SDK conversation adds', () => {
    const first = JSON.stringify([
      { role: 'user', content: [{ type: 'text', text: 'x'.repeat(5000) }] },
      {
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'lookup', input: {} }],
      },
    ]);
    const second = `${first.slice(0, -1)},{"role":"tool","content":[{"type":"tool-result","toolCallId":"c1","output":{"type":"error-text","value":"Invalid input for tool lookup"}}]}]`;
    vercelAi.llmInput(promptSpan(first));
    const parse = vi.spyOn(JSON, 'parse');
    const input = vercelAi.llmInput(promptSpan(second));
    expect(Math.max(...parse.mock.calls.map(([text]) => String(text).length))).toBeLessThan(200);
    parse.mockRestore();
    expect(input.inputCalls.map((c) => c.callId)).toEqual(['c1']);
    expect(input.refusals.map((r) => r.text)).toEqual(['Invalid input for tool lookup']);
  });

  it('keeps one conversation per reader: GenAI and AI SDK readers do not evict each other', () => {
    const genAi = JSON.stringify([
      { role: 'user', parts: [{ type: 'text', content: 'y'.repeat(3000) }] },
      { role: 'assistant', parts: [{ type: 'tool_call', id: 'g1', name: 'lookup', arguments: {} }] },
    ]);
    const aiSdk = JSON.stringify([
      { role: 'user', content: [{ type: 'text', text: 'z'.repeat(3000) }] },
      {
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId: 'a1', toolName: 'lookup', input: {} }],
      },
    ]);
    scanGenAiConversation(genAi);
    vercelAi.llmInput(promptSpan(aiSdk));
    const parse = vi.spyOn(JSON, 'parse');
    scanGenAiConversation(`${genAi.slice(0, -1)},"x"]`);
    vercelAi.llmInput(promptSpan(`${aiSdk.slice(0, -1)},"x"]`));
    expect(Math.max(...parse.mock.calls.map(([text]) => String(text).length))).toBeLessThan(10);
    parse.mockRestore();
  });
});
