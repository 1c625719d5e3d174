import { describe, expect, it } from 'vitest';
import { vercelAiAgent, vercelAiLlm, vercelAiRole, vercelAiTool } from '../../src/conventions/vercel-ai.js';
import { SpanFactory } from '../helpers/span-like.js';

const f = new SpanFactory();

describe('Vercel AI SDK ≤ 6 adapter (ai.*)', () => {
  it('classifies ai.generateText/streamText as agents, doGenerate/doStream as LLMs, ai.toolCall as tools', () => {
    expect(vercelAiRole(f.make('ai.generateText', {}))).toBe('agent');
    expect(vercelAiRole(f.make('ai.streamText', {}))).toBe('agent');
    expect(vercelAiRole(f.make('ai.generateText.doGenerate', {}))).toBe('llm');
    expect(vercelAiRole(f.make('ai.streamText.doStream', {}))).toBe('llm');
    expect(vercelAiRole(f.make('ai.toolCall', {}))).toBe('tool');
    // Traceloop renames spans but keeps the operation id.
    expect(vercelAiRole(f.make('weather.agent', { 'ai.operationId': 'ai.generateText' }))).toBe('agent');
    expect(vercelAiRole(f.make('ai.generateObject', {}))).toBe('other');
    expect(vercelAiRole(f.make('chat', {}))).toBeUndefined();
  });

  it('reads a tool span: ai.toolCall.name/id/args/result (real AI SDK 6 multi_step shape)', () => {
    const span = f.make('ai.toolCall', {
      'operation.name': 'ai.toolCall multi_step',
      'ai.operationId': 'ai.toolCall',
      'ai.toolCall.name': 'getWeather',
      'ai.toolCall.id': 'call_1',
      'ai.toolCall.args': '{"city":"Paris"}',
      'ai.toolCall.result': '{"city":"Paris","tempC":18}',
    });
    expect(vercelAiTool(span)).toMatchObject({
      convention: 'ai_sdk',
      name: 'getWeather',
      callId: 'call_1',
      args: { city: 'Paris' },
      result: { city: 'Paris', tempC: 18 },
      status: 'ok',
    });
  });

  it('accepts ai.toolCall.input/output (the renamed attributes) and marks thrown errors', () => {
    const span = f.make(
      'ai.toolCall',
      { 'ai.toolCall.name': 'flakyDb', 'ai.toolCall.input': '{"q":1}' },
      {
        status: { code: 2, message: 'DB connection refused' },
        events: [
          {
            name: 'exception',
            time: 1,
            attributes: { 'exception.type': 'Error', 'exception.message': 'DB connection refused' },
          },
        ],
      },
    );
    expect(vercelAiTool(span)).toMatchObject({
      args: { q: 1 },
      status: 'error',
      errorType: 'Error',
      errorMessage: 'DB connection refused',
    });
  });

  it('names the agent by ai.telemetry.functionId', () => {
    expect(
      vercelAiAgent(f.make('ai.generateText', { 'ai.telemetry.functionId': 'orchestrator' }))!.name,
    ).toBe('orchestrator');
    expect(vercelAiAgent(f.make('ai.generateText', {}))!.name).toBe('ai.generateText');
  });

  it('reads ai.response.toolCalls with JSON-string input (generateText) and object input (streamText)', () => {
    const gen = f.make('ai.generateText.doGenerate', {
      'ai.response.toolCalls':
        '[{"toolCallId":"call_p1","toolName":"getWeather","input":"{\\"city\\":\\"Paris\\"}"},{"toolCallId":"call_p2","toolName":"getWeather","input":"{\\"city\\":\\"Rome\\"}"}]',
    });
    expect(vercelAiLlm(gen)!.requests.map((r) => [r.callId, r.name, r.args])).toEqual([
      ['call_p1', 'getWeather', { city: 'Paris' }],
      ['call_p2', 'getWeather', { city: 'Rome' }],
    ]);
    const stream = f.make('ai.streamText.doStream', {
      'ai.response.toolCalls': JSON.stringify([
        { type: 'tool-call', toolCallId: 's1', toolName: 'getWeather', input: { city: 'Oslo' } },
      ]),
    });
    expect(vercelAiLlm(stream)!.requests).toMatchObject([
      { callId: 's1', name: 'getWeather', args: { city: 'Oslo' } },
    ]);
  });

  it('reads ai.prompt.messages: tool-call history and error-text results for unknown tools / invalid input', () => {
    const span = f.make('ai.generateText.doGenerate', {
      'ai.prompt.messages': JSON.stringify([
        { role: 'user', content: [{ type: 'text', text: 'hi' }] },
        {
          role: 'assistant',
          content: [
            {
              type: 'tool-call',
              toolCallId: 'call_u1',
              toolName: 'launchRockets',
              input: { target: 'moon' },
            },
          ],
        },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: 'call_u1',
              toolName: 'launchRockets',
              output: { type: 'error-text', value: "Model tried to call unavailable tool 'launchRockets'." },
            },
          ],
        },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: 'call_d',
              output: { type: 'execution-denied', reason: 'nope' },
            },
          ],
        },
      ]),
      'ai.prompt.tools': [
        '{"type":"function","name":"getWeather","description":"weather","inputSchema":{"type":"object"}}',
      ],
    });
    const facts = vercelAiLlm(span)!;
    expect(facts.inputCalls).toMatchObject([
      { name: 'launchRockets', callId: 'call_u1', args: { target: 'moon' } },
    ]);
    expect(facts.refusals).toEqual([
      {
        callId: 'call_u1',
        name: 'launchRockets',
        text: "Model tried to call unavailable tool 'launchRockets'.",
      },
      { callId: 'call_d', text: 'nope' },
    ]);
    expect(facts.toolDefinitions).toEqual([
      { name: 'getWeather', description: 'weather', parameters: { type: 'object' } },
    ]);
  });

  it('never throws on malformed attributes', () => {
    const span = f.make('ai.generateText.doGenerate', {
      'ai.response.toolCalls': '[{"toolName": 5}',
      'ai.prompt.messages': 12,
    });
    expect(vercelAiLlm(span)!.requests).toEqual([]);
  });
});
