import { describe, expect, it } from 'vitest';
import {
  readEntityInput,
  traceloopAgent,
  traceloopLlm,
  traceloopRole,
  traceloopTool,
} from '../../src/conventions/traceloop.js';
import { SpanFactory } from '../helpers/span-like.js';

const f = new SpanFactory();

describe('Traceloop adapter', () => {
  it('classifies by traceloop.span.kind; LangChain tools are task spans named execute_tool', () => {
    expect(traceloopRole(f.make('get_weather.tool', { 'traceloop.span.kind': 'tool' }))).toBe('tool');
    expect(traceloopRole(f.make('planner.agent', { 'traceloop.span.kind': 'agent' }))).toBe('agent');
    expect(traceloopRole(f.make('execute_tool Calculator', { 'traceloop.span.kind': 'task' }))).toBe('tool');
    expect(traceloopRole(f.make('summarize.task', { 'traceloop.span.kind': 'task' }))).toBe('other');
    expect(traceloopRole(f.make('trip.workflow', { 'traceloop.span.kind': 'workflow' }))).toBe('other');
    expect(traceloopRole(f.make('openai.chat', { 'llm.request.type': 'chat' }))).toBe('llm');
    expect(traceloopRole(f.make('x', {}))).toBeUndefined();
  });

  it('reads a decorated tool: entity name, {"args","kwargs"} input, output', () => {
    const span = f.make('get_weather.tool', {
      'traceloop.span.kind': 'tool',
      'traceloop.entity.name': 'get_weather',
      'traceloop.entity.input': '{"args":[],"kwargs":{"city":"Paris"}}',
      'traceloop.entity.output': '"sunny"',
    });
    expect(traceloopTool(span)).toMatchObject({
      convention: 'traceloop',
      name: 'get_weather',
      args: { city: 'Paris' },
      result: 'sunny',
    });
  });

  it('argument objects from args/kwargs', () => {
    expect(readEntityInput('{"args":[{"a":1}],"kwargs":{"b":2}}')).toEqual({
      args: { a: 1, b: 2 },
      usable: true,
    });
    expect(readEntityInput('{"args":["{\\"q\\":\\"x\\"}"],"kwargs":{}}')).toEqual({
      args: { q: 'x' },
      usable: true,
    });
    expect(readEntityInput('{"args":["plain text"]}')).toEqual({ args: 'plain text', usable: false });
    expect(readEntityInput('{"args":[1,2],"kwargs":{}}')).toEqual({
      args: { args: [1, 2], kwargs: {} },
      usable: false,
    });
    expect(readEntityInput('{"city":"Oslo"}')).toEqual({ args: { city: 'Oslo' }, usable: true });
  });

  it('names agents by the entity name', () => {
    expect(
      traceloopAgent(
        f.make('planner.agent', { 'traceloop.span.kind': 'agent', 'traceloop.entity.name': 'planner' }),
      )!.name,
    ).toBe('planner');
    expect(traceloopAgent(f.make('planner.agent', { 'traceloop.span.kind': 'agent' }))!.name).toBe('planner');
  });

  it('reads flattened gen_ai.completion tool calls on LLM spans', () => {
    const span = f.make('openai.chat', {
      'llm.request.type': 'chat',
      'gen_ai.completion.0.tool_calls.0.id': 'c1',
      'gen_ai.completion.0.tool_calls.0.name': 'get_weather',
      'gen_ai.completion.0.tool_calls.0.arguments': '{"city":"Paris"}',
    });
    expect(traceloopLlm(span)!.requests).toEqual([
      { name: 'get_weather', callId: 'c1', args: { city: 'Paris' }, usable: true },
    ]);
  });
});
