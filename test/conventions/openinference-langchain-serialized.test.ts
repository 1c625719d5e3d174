// LangChain tool calls the OpenInference tracer does not flatten (chat models that keep them
// on AIMessage.tool_calls only): read from the serialized messages of the LLM span, never
// doubled when the flattened attributes exist, and never a crash on garbage.
import { describe, expect, it } from 'vitest';
import { openInferenceLlmInput, openInferenceLlmOutput } from '../../src/conventions/openinference.js';
import { SpanFactory } from '../helpers/span-like.js';

const f = new SpanFactory();
const LLM = { 'openinference.span.kind': 'LLM' };

const ai = (toolCalls: unknown[], extra: Record<string, unknown> = {}) => ({
  lc: 1,
  type: 'constructor',
  id: ['langchain_core', 'messages', 'AIMessage'],
  kwargs: { content: '', tool_calls: toolCalls, additional_kwargs: {}, ...extra },
});
const toolMessage = (id: string, content: string) => ({
  lc: 1,
  type: 'constructor',
  id: ['langchain_core', 'messages', 'ToolMessage'],
  kwargs: { status: 'success', content, tool_call_id: id, name: 'getWeather' },
});
const output = (...messages: unknown[]) =>
  JSON.stringify({ generations: [messages.map((message) => ({ text: '', message }))] });

describe('LangChain serialized tool calls (OpenInference)', () => {
  it('reads requests with ids and arguments from output.value generations (constructor form)', () => {
    const span = f.make('ChatAnthropic', {
      ...LLM,
      'output.value': output(
        ai([
          { id: 'call_1', name: 'getWeather', args: { city: 'Paris' }, type: 'tool_call' },
          { id: 'call_2', name: 'getWeather', args: { city: 'Tokyo' }, type: 'tool_call' },
        ]),
      ),
    });
    expect(openInferenceLlmOutput(span)!.requests).toEqual([
      { name: 'getWeather', args: { city: 'Paris' }, usable: true, callId: 'call_1' },
      { name: 'getWeather', args: { city: 'Tokyo' }, usable: true, callId: 'call_2' },
    ]);
  });

  it('reads the plain form and OpenAI-shaped additional_kwargs when that is all there is', () => {
    const plain = f.make('m', {
      ...LLM,
      'output.value': output({ type: 'ai', tool_calls: [{ id: 'a', name: 'lookup', args: { q: 1 } }] }),
    });
    expect(openInferenceLlmOutput(plain)!.requests).toEqual([
      { name: 'lookup', args: { q: 1 }, usable: true, callId: 'a' },
    ]);
    const openAi = f.make('m', {
      ...LLM,
      'output.value': output({
        type: 'ai',
        additional_kwargs: {
          tool_calls: [{ id: 'b', type: 'function', function: { name: 'lookup', arguments: '{"q":2}' } }],
        },
      }),
    });
    expect(openInferenceLlmOutput(openAi)!.requests).toEqual([
      { name: 'lookup', args: { q: 2 }, usable: true, callId: 'b' },
    ]);
  });

  it('flattened llm.output_messages win: the serialized copy is not read again', () => {
    const span = f.make('ChatOpenAI', {
      ...LLM,
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.name': 'getWeather',
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments': '{"city":"Paris"}',
      'output.value': output(ai([{ id: 'call_1', name: 'getWeather', args: { city: 'Paris' } }])),
    });
    expect(openInferenceLlmOutput(span)!.requests).toEqual([
      { name: 'getWeather', args: { city: 'Paris' }, usable: true },
    ]);
  });

  it('reads calls and tool results of input.value message lists, joined by tool_call_id', () => {
    const span = f.make('ChatAnthropic', {
      ...LLM,
      'input.value': JSON.stringify({
        messages: [
          [
            {
              lc: 1,
              type: 'constructor',
              id: ['langchain_core', 'messages', 'HumanMessage'],
              kwargs: { content: 'hi' },
            },
            ai([{ id: 'call_9', name: 'launchRockets', args: { target: 'moon' } }]),
            toolMessage('call_9', 'Error: launchRockets is not a valid tool, try one of [getWeather].'),
          ],
        ],
      }),
    });
    expect(openInferenceLlmInput(span)).toEqual({
      inputCalls: [{ name: 'launchRockets', args: { target: 'moon' }, usable: true, callId: 'call_9' }],
      refusals: [
        { callId: 'call_9', text: 'Error: launchRockets is not a valid tool, try one of [getWeather].' },
      ],
    });
  });

  it('leaves agno’s flat message list to the agno reader (no doubled calls)', () => {
    const span = f.make('OpenAIChat.invoke', {
      ...LLM,
      'input.value': JSON.stringify({
        messages: [
          {
            role: 'assistant',
            tool_calls: [{ id: 'x', type: 'function', function: { name: 'a', arguments: '{}' } }],
          },
        ],
      }),
    });
    expect(openInferenceLlmInput(span).inputCalls).toEqual([]);
  });

  it('garbage never throws and yields nothing', () => {
    const values = [
      '{"generations": 5, "tool_calls": 1}',
      '{"generations": [[{"message": {"lc": 1, "kwargs": {"tool_calls": [null, 3, {"args": {}}, {"name": ""}]}}}]]}',
      '{"generations": [[{"message": "tool_calls"}]]}',
      '{not json tool_calls',
      'x'.repeat(100_000),
    ];
    for (const value of values) {
      const span = f.make('m', {
        ...LLM,
        'output.value': value,
        'input.value': value.replace('generations', 'messages'),
      });
      expect(openInferenceLlmOutput(span)!.requests).toEqual([]);
      expect(openInferenceLlmInput(span)).toEqual({ inputCalls: [], refusals: [] });
    }
  });
});
