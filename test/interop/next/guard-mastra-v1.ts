import { Agent } from '@mastra/core/agent';
import { Mastra } from '@mastra/core/mastra';
import { createTool } from '@mastra/core/tools';
import { Observability } from '@mastra/observability';
import { OtelExporter } from '@mastra/otel-exporter';
import { ROOT_CONTEXT } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { toolwatchToolHooks } from '../../../src/guard/adapters/mastra.js';
import type { GuardedScenario } from '../guard/guarded-run.js';
import { settle } from '../harness/capture.js';
import { WEATHER_AGENT } from '../harness/scenario-scripts.js';
import { isCallTurn } from '../harness/script.js';
import { celsiusToFahrenheit, getWeather } from '../harness/tool-bodies.js';

class Collect implements SpanExporter {
  readonly spans: ReadableSpan[] = [];
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.spans.push(...spans);
    done({ code: 0 });
  }
  async shutdown(): Promise<void> {}
  async forceFlush(): Promise<void> {}
}

const USAGE = { inputTokens: 10, outputTokens: 5, totalTokens: 15 };

/** Mastra 1.x with `toolwatchToolHooks` as the agent's hooks; spans replayed into the processor after the run, as the interop harness does. */
export const mastraV1Guarded: GuardedScenario = async ({ policy, spanProcessors, script, recorder }) => {
  const inputs: string[] = [];
  const model = {
    specificationVersion: 'v2' as const,
    provider: 'mock-provider',
    modelId: 'mock-model-id',
    supportedUrls: {},
    async doGenerate(options: { prompt: unknown }) {
      inputs.push(JSON.stringify(options.prompt));
      const turn = script.next(WEATHER_AGENT);
      const content = isCallTurn(turn)
        ? turn.calls.map((c) => ({
            type: 'tool-call',
            toolCallId: c.id,
            toolName: c.name,
            input: JSON.stringify(c.args),
          }))
        : [{ type: 'text', text: turn.text }];
      return { content, finishReason: isCallTurn(turn) ? 'tool-calls' : 'stop', usage: USAGE, warnings: [] };
    },
    async doStream(): Promise<never> {
      throw new Error('not scripted');
    },
  };
  const run =
    <A, R>(name: string, fn: (args: A) => R) =>
    async (input: A) =>
      recorder.wrap(WEATHER_AGENT, name, fn)(input);
  const agent = new Agent({
    id: WEATHER_AGENT,
    name: WEATHER_AGENT,
    instructions: 'You answer weather questions.',
    model: model as any,
    tools: {
      getWeather: createTool({
        id: 'getWeather',
        description: 'Current temperature of a city in °C',
        inputSchema: z.object({ city: z.string() }),
        execute: run('getWeather', getWeather),
      }),
      celsiusToFahrenheit: createTool({
        id: 'celsiusToFahrenheit',
        description: 'Converts °C to °F',
        inputSchema: z.object({ c: z.number() }),
        execute: run('celsiusToFahrenheit', celsiusToFahrenheit),
      }),
    },
    hooks: toolwatchToolHooks(policy),
  });
  const sink = new Collect();
  const exporter = new OtelExporter({
    provider: { custom: { endpoint: 'http://127.0.0.1:1/unused' } },
    exporter: sink,
    signals: { traces: true, logs: false },
  } as any);
  const mastra = new Mastra({
    agents: { [WEATHER_AGENT]: agent },
    observability: new Observability({
      configs: { otel: { serviceName: 'mastra-v1-guard', exporters: [exporter] } },
    }),
    logger: false,
  } as any);
  const result = await mastra
    .getAgent(WEATHER_AGENT)
    .generate('What is the weather in Paris, in °F?', { maxSteps: 5 });
  await settle();
  await exporter.flush();
  const spans = sink.spans.filter((s) => s.spanContext().traceId === result.traceId);
  // Mastra builds its spans outside any TracerProvider: processors get them after the run.
  const ns = (t: [number, number]) => t[0] * 1e9 + t[1];
  const byStart = [...spans].sort((a, b) => ns(a.startTime) - ns(b.startTime));
  for (const p of spanProcessors) for (const s of byStart) p.onStart(s as any, ROOT_CONTEXT);
  for (const p of spanProcessors) for (const s of spans) p.onEnd(s);
  return { spans, modelInputs: inputs, text: result.text };
};
