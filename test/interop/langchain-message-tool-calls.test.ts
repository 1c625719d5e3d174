/**
 * LangChain.js 1.5 `createAgent` with a chat model whose tool calls live on the message only
 * (`AIMessage.tool_calls`, no OpenAI-shaped `additional_kwargs.tool_calls`, as the Anthropic,
 * Google, Bedrock and Ollama integrations return them), through the OpenInference callback
 * tracer 4.1.1. The tracer then flattens no tool call: requests exist only in the serialized
 * messages of the LLM spans' `output.value`/`input.value`, and a tool span's `input.value` is
 * the bare string the tool got (`Paris`), so arguments come from the joined request.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { spansFromOtlpJson } from '../../src/conventions/from-otlp-json.js';
import { evaluateTraces } from '../../src/evaluation/evaluate-traces.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { reconstructTraces } from '../../src/reconstruction/reconstruct-trace.js';
import { toolCalls } from '../../src/scorers/tool-calls.js';
import { trajectory } from '../../src/scorers/trajectory.js';
import { describeInterop } from './describe-interop.js';

describeInterop('langchain-message-tool-calls', {
  isToolSpan: (span) => span.attributes['openinference.span.kind'] === 'TOOL',
});

describe('verdicts on the recorded message-only LangChain runs', () => {
  const policy = definePolicy({
    rules: [
      {
        name: 'weather',
        scorers: [
          trajectory({
            expectedTools: ['getWeather'],
            argConstraints: { getWeather: { city: { in: ['Paris', 'Tokyo'] } } },
          }),
          toolCalls({ expectedTools: ['getWeather'], arguments: { getWeather: [{ city: 'Paris' }] } }),
        ],
      },
    ],
  });
  const load = (scenario: string) =>
    readFileSync(
      new URL(`../fixtures/langchain-message-tool-calls/${scenario}.otlp.json`, import.meta.url),
      'utf8',
    );

  it.each(['multi_step', 'parallel_calls', 'stream_multi_step'])(
    '%s: the arguments the model passed are checked (taken from the joined request)',
    async (scenario) => {
      const [verdict, ...rest] = await evaluateTraces(load(scenario), policy);
      expect(rest).toEqual([]);
      expect(verdict!.results.map((r) => [r.scorer, r.passed, r.label])).toEqual([
        ['trajectory', true, 'pass'],
        ['tool_calls', true, 'pass'],
      ]);
      expect(verdict!.results[0]!.detail.arg_accuracy).toBe(1);

      const [trace] = reconstructTraces(spansFromOtlpJson(load(scenario)));
      const weather = trace!.runs[0]!.calls.filter((c) => c.name === 'getWeather');
      expect(weather.length).toBeGreaterThan(0);
      for (const call of weather) {
        expect(call.argsSource).toBe('request');
        expect(call.callId).toMatch(/^call_/);
      }
    },
  );

  it('the unknown tool is a refused request with the arguments the model asked for', async () => {
    const [trace] = reconstructTraces(spansFromOtlpJson(load('unknown_tool')));
    const rockets = trace!.runs[0]!.calls.find((c) => c.name === 'launchRockets')!;
    expect(rockets).toMatchObject({ status: 'refused', args: { target: 'moon' } });
  });
});
