import type { Agent } from '@mastra/core/agent';
import { Mastra } from '@mastra/core/mastra';
import { createTool } from '@mastra/core/tools';
import { Observability } from '@mastra/observability';
import { OtelExporter } from '@mastra/otel-exporter';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { SinkExporter } from '../harness/sink-exporter.js';
import { celsiusToFahrenheit, flakyDb, getWeather } from '../harness/tool-bodies.js';
import type { ToolRecorder } from '../harness/tool-recorder.js';

/**
 * The scenarios' tools for Mastra 1.x (a tool's `execute` gets its input as is), each call
 * recorded as `agent`'s by the recorder running at the time.
 */
export function weatherTools(agent: string, recorder: () => ToolRecorder) {
  const run =
    <A, R>(name: string, fn: (args: A) => R) =>
    async (input: A) =>
      recorder().wrap(agent, name, fn)(input);
  return {
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
    flakyDb: createTool({
      id: 'flakyDb',
      description: 'Queries the order database',
      inputSchema: z.object({ query: z.string() }),
      execute: run('flakyDb', flakyDb),
    }),
  };
}

/**
 * A Mastra 1.x holding `agents`, traced through Observability and the OtelExporter into
 * `sink` (GenAI semconv spans). Flush `exporter` to have every span of a run.
 */
export function mastraV1(
  agents: Record<string, Agent>,
  serviceName: string,
  sink: (spans: ReadableSpan[]) => void,
): { mastra: Mastra; exporter: OtelExporter } {
  const exporter = new OtelExporter({
    // Required even with a custom exporter, else the exporter disables itself; never contacted.
    provider: { custom: { endpoint: 'http://127.0.0.1:1/unused' } },
    exporter: new SinkExporter(sink),
    // 1.x also exports logs, over OTLP/HTTP to the dummy endpoint: each flush then waits ~8 s on retries.
    signals: { traces: true, logs: false },
  } as any);
  const mastra = new Mastra({
    agents,
    observability: new Observability({ configs: { otel: { serviceName, exporters: [exporter] } } }),
    logger: false,
  } as any);
  return { mastra, exporter };
}
