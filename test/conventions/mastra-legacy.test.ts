import { describe, expect, it } from 'vitest';
import {
  mastraLegacyAgent,
  mastraLegacyLlm,
  mastraLegacyRole,
  mastraLegacyTool,
} from '../../src/conventions/mastra-legacy.js';
import { SpanFactory } from '../helpers/span-like.js';

const f = new SpanFactory();

describe('Mastra 0.24 adapter (otel-exporter 0.3)', () => {
  it('reads tool.execute spans: gen_ai.tool.input/output', () => {
    const span = f.make('tool.execute getWeather', {
      'gen_ai.operation.name': 'tool.execute',
      'mastra.span.type': 'tool_call',
      'gen_ai.tool.name': 'getWeather',
      'gen_ai.tool.input': '{"city":"Paris"}',
      'gen_ai.tool.output': '{"city":"Paris","tempC":18}',
      'gen_ai.tool.description': 'weather',
    });
    expect(mastraLegacyRole(span)).toBe('tool');
    expect(mastraLegacyTool(span)).toMatchObject({
      convention: 'mastra',
      name: 'getWeather',
      args: { city: 'Paris' },
      result: { city: 'Paris', tempC: 18 },
      status: 'ok',
    });
  });

  it('error=true marks a failed tool even when the status is unset', () => {
    const span = f.make('tool.execute flakyDb', {
      'gen_ai.operation.name': 'tool.execute',
      'gen_ai.tool.name': 'flakyDb',
      error: true,
      'error.message': 'DB connection refused',
    });
    expect(mastraLegacyTool(span)).toMatchObject({ status: 'error', errorMessage: 'DB connection refused' });
  });

  it('names agent.run spans by gen_ai.agent.id (span name agent.<id> otherwise)', () => {
    const span = f.make('agent.multi-step-agent', {
      'gen_ai.operation.name': 'agent.run',
      'gen_ai.agent.id': 'multi-step-agent',
      input: '[{"role":"user","content":"hi"}]',
      output: '{"text":"done"}',
    });
    expect(mastraLegacyAgent(span)).toMatchObject({
      name: 'multi-step-agent',
      agentId: 'multi-step-agent',
      output: { text: 'done' },
    });
    expect(
      mastraLegacyAgent(f.make('agent.researcher', { 'gen_ai.operation.name': 'agent.run' }))!.name,
    ).toBe('researcher');
  });

  it('step outputs are requests; tool-call / tool-result chunks only lend call ids', () => {
    const step = f.make('step: 0', {
      'mastra.span.type': 'model_step',
      output: JSON.stringify({
        text: '',
        toolCalls: [
          { type: 'tool-call', toolCallId: 'call_1', toolName: 'getWeather', args: { city: 'Paris' } },
        ],
      }),
    });
    expect(mastraLegacyRole(step)).toBe('llm');
    expect(mastraLegacyLlm(step)!.requests).toMatchObject([
      { callId: 'call_1', name: 'getWeather', args: { city: 'Paris' } },
    ]);
    const chunk = f.make("chunk: 'tool-call'", {
      'mastra.span.type': 'model_chunk',
      output: '{"toolName":"getWeather","toolCallId":"call_1","toolInput":{"city":"Paris"}}',
    });
    const facts = mastraLegacyLlm(chunk)!;
    expect(facts.requests).toEqual([]);
    expect(facts.hints).toMatchObject([{ callId: 'call_1', name: 'getWeather', args: { city: 'Paris' } }]);
    const result = f.make("chunk: 'tool-result'", {
      'mastra.span.type': 'model_chunk',
      output: '{"args":{"city":"Rome"},"toolCallId":"call_2","toolName":"getWeather","result":{}}',
    });
    expect(mastraLegacyLlm(result)!.hints).toMatchObject([{ callId: 'call_2', args: { city: 'Rome' } }]);
  });

  it('leaves Mastra 1.x spans (GenAI semconv, mastra.model_step.output) to the GenAI adapter', () => {
    expect(
      mastraLegacyRole(
        f.make('agent_step a', {
          'mastra.span.type': 'model_step',
          'mastra.model_step.output': '{}',
          output: '{}',
        }),
      ),
    ).toBeUndefined();
    expect(
      mastraLegacyRole(f.make('execute_tool x', { 'gen_ai.operation.name': 'execute_tool' })),
    ).toBeUndefined();
  });
});
