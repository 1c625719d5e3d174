import { describe, expect, it } from 'vitest';
import { CONVENTION_ADAPTERS } from '../../src/conventions/classify.js';
import { inputSize, mergeLlmFacts, NO_INPUT } from '../../src/conventions/merge-llm-facts.js';
import { SpanFactory } from '../helpers/span-like.js';

const f = new SpanFactory();
const adapter = (name: string) => CONVENTION_ADAPTERS.find((a) => a.name === name)!;

describe('LLM facts: output side, input side, and both', () => {
  const spans = {
    gen_ai: f.make('chat m', {
      'gen_ai.operation.name': 'chat',
      'gen_ai.output.messages':
        '[{"role":"assistant","parts":[{"type":"tool_call","id":"c2","name":"w","arguments":{}}]}]',
      'gen_ai.input.messages':
        '[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"w","arguments":{}}]},{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":"ok"}]}]',
    }),
    ai_sdk: f.make('ai.generateText.doGenerate', {
      'ai.response.toolCalls': '[{"toolCallId":"c2","toolName":"w","input":"{}"}]',
      'ai.prompt.messages':
        '[{"role":"assistant","content":[{"type":"tool-call","toolCallId":"c1","toolName":"w","input":{}}]},{"role":"tool","content":[{"type":"tool-result","toolCallId":"c1","output":{"type":"text","value":"ok"}}]}]',
    }),
    openinference: f.make('generation', {
      'openinference.span.kind': 'LLM',
      'llm.output_messages.0.message.tool_calls.0.tool_call.id': 'c2',
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.name': 'w',
      'llm.input_messages.0.message.tool_calls.0.tool_call.id': 'c1',
      'llm.input_messages.0.message.tool_calls.0.tool_call.function.name': 'w',
      'llm.input_messages.1.message.role': 'tool',
      'llm.input_messages.1.message.tool_call_id': 'c1',
      'llm.input_messages.1.message.content': 'ok',
    }),
  };

  for (const [name, span] of Object.entries(spans)) {
    it(`${name}: the output side has the requests and a progress measure, the input side the history`, () => {
      const a = adapter(name);
      const out = a.llmOutput(span)!;
      const input = a.llmInput(span);
      expect(out.requests.map((r) => r.callId)).toEqual(['c2']);
      expect(out.inputCalls).toBeUndefined();
      expect(out.progress).toBeGreaterThan(0);
      expect(input.inputCalls.map((c) => c.callId)).toEqual(['c1']);
      expect(input.refusals.map((r) => [r.callId, r.text])).toEqual([['c1', 'ok']]);
      expect(a.llm(span)).toEqual(mergeLlmFacts(out, input));
    });
  }

  it('non-LLM spans have no input side', () => {
    for (const a of CONVENTION_ADAPTERS) expect(a.llmInput(f.make('GET /', {}))).toEqual(NO_INPUT);
  });

  it('inputSize: text length or element count', () => {
    expect(inputSize('abc')).toBe(3);
    expect(inputSize([1, 2])).toBe(2);
    expect(inputSize(undefined)).toBe(0);
  });
});
