import { describe, expect, it } from 'vitest';
import {
  CONVENTION_ADAPTERS,
  classify,
  classifySpan,
  isAgentRelated,
  isAgentRelatedName,
} from '../../src/conventions/classify.js';
import { SpanFactory } from '../helpers/span-like.js';

const f = new SpanFactory();

describe('classify', () => {
  it('asks the adapters in order: GenAI attributes win over the converter’s own', () => {
    // @arizeai/openinference-genai keeps gen_ai.* next to openinference.span.kind.
    const both = f.make('execute_tool t', {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 't',
      'openinference.span.kind': 'TOOL',
    });
    expect(classifySpan(both).adapter?.name).toBe('gen_ai');
    // OpenInference's Vercel processor keeps ai.toolCall.* next to its kind.
    const vercel = f.make('ai.toolCall', { 'ai.toolCall.name': 't', 'openinference.span.kind': 'TOOL' });
    expect(classifySpan(vercel).adapter?.name).toBe('ai_sdk');
    expect(
      classifySpan(f.make('tool.execute x', { 'gen_ai.operation.name': 'tool.execute' })).adapter?.name,
    ).toBe('mastra');
    expect(classifySpan(f.make('x.tool', { 'traceloop.span.kind': 'tool' })).adapter?.name).toBe('traceloop');
  });

  it('returns other for spans no convention knows, and never throws on odd spans', () => {
    expect(classify(f.make('GET /orders', { 'http.method': 'GET' }))).toBe('other');
    const odd = { ...f.make('x'), attributes: null } as never;
    expect(classify(odd)).toBe('other');
  });

  it('isAgentRelatedName: cheap name test', () => {
    for (const name of [
      'invoke_agent a',
      'execute_tool t',
      'chat gpt-4',
      'ai.toolCall',
      'agent.x',
      'tool.execute y',
      'x.tool',
      'Team.run',
    ]) {
      expect(isAgentRelatedName(name)).toBe(true);
    }
    for (const name of ['GET /orders', 'SELECT', '', 'getWeather'])
      expect(isAgentRelatedName(name)).toBe(false);
  });

  it('isAgentRelated: also catches OpenInference spans named after the tool', () => {
    expect(isAgentRelated(f.make('getWeather', { 'openinference.span.kind': 'TOOL' }))).toBe(true);
    expect(isAgentRelated(f.make('getWeather', {}))).toBe(false);
    expect(isAgentRelated(f.make('step 1', { 'gen_ai.operation.name': 'agent_step' }))).toBe(true);
  });
});

describe('adapters never throw', () => {
  it('every adapter method returns "not mine" or nothing for spans of an impossible shape', () => {
    const odd = [
      { name: undefined, attributes: null, events: 5 },
      { name: 42, attributes: 'x' },
      {},
    ] as unknown as Parameters<(typeof CONVENTION_ADAPTERS)[number]['role']>[0][];
    for (const adapter of CONVENTION_ADAPTERS) {
      for (const span of odd) {
        expect(() => adapter.role(span)).not.toThrow();
        expect(adapter.tool(span)).toBeUndefined();
        expect(adapter.agent(span)).toBeUndefined();
        expect(adapter.llm(span)).toBeUndefined();
        expect(adapter.llmOutput(span)).toBeUndefined();
        expect(adapter.llmInput(span)).toEqual({ inputCalls: [], refusals: [] });
      }
    }
  });
});
