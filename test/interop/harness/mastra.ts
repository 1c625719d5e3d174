import { Agent } from '@mastra/core/agent';
import { Mastra } from '@mastra/core/mastra';
import { createTool } from '@mastra/core/tools';
import { OtelExporter } from '@mastra/otel-exporter';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { buildGroundTruth } from './build-ground-truth.js';
import { settle } from './capture.js';
import { withExpectedErrors } from './expected-errors.js';
import { runMastraConversation } from './mastra-conversation.js';
import { replayInto } from './replay-into.js';
import { scriptFor, WEATHER_AGENT } from './scenario-scripts.js';
import type { Script } from './script.js';
import { scriptedV2Model } from './scripted-v2-model.js';
import { SinkExporter } from './sink-exporter.js';
import { celsiusToFahrenheit, flakyDb, getWeather } from './tool-bodies.js';
import { ToolRecorder } from './tool-recorder.js';
import type { ScenarioName, ScenarioOptions, ScenarioResult } from './types.js';

/**
 * Mastra 0.24's AI-tracing registry is process-global (one Mastra per config name), so one
 * Mastra holds every agent; the scenario being run is swapped in through `current`.
 */
const current: { script?: Script; recorder?: ToolRecorder; sink?: (spans: ReadableSpan[]) => void } = {};

function lastUserText(prompt: unknown): string {
  const messages = Array.isArray(prompt) ? prompt : [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as { role?: string; content?: unknown };
    if (m.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    if (Array.isArray(m.content)) return m.content.map((p: { text?: string }) => p.text ?? '').join('');
  }
  return '';
}

/**
 * The scripted model of `agent` (spec v2: Mastra 0.24 rejects v3 models). `onRunStart` runs on
 * the first call of each agent run (used to record agent-as-tool invocations).
 */
function scriptedModel(agent: string, onRunStart?: (prompt: unknown) => void) {
  return scriptedV2Model((prompt) => {
    // A prompt without assistant messages opens a new run of this agent.
    const msgs = Array.isArray(prompt) ? (prompt as Array<{ role?: string }>) : [];
    if (onRunStart && msgs.every((m) => m.role !== 'assistant')) onRunStart(prompt);
    return current.script!.next(agent);
  });
}

function weatherTools(agent: string) {
  const run =
    <A, R>(name: string, fn: (args: A) => R) =>
    async ({ context }: { context: A }) =>
      current.recorder!.wrap(agent, name, fn)(context);
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

let setup: { mastra: Mastra; exporter: OtelExporter } | undefined;

function getSetup(): { mastra: Mastra; exporter: OtelExporter } {
  if (setup) return setup;
  const researcher = new Agent({
    name: 'researcher',
    instructions: 'You research weather.',
    model: scriptedModel('researcher', (prompt) =>
      current.recorder!.record('orchestrator', 'agent-researcher', { prompt: lastUserText(prompt) }),
    ) as any,
    tools: weatherTools('researcher'),
  });
  const weatherAgent = new Agent({
    name: WEATHER_AGENT,
    instructions: 'You answer weather questions.',
    model: scriptedModel(WEATHER_AGENT) as any,
    tools: weatherTools(WEATHER_AGENT),
  });
  const orchestrator = new Agent({
    name: 'orchestrator',
    instructions: 'You delegate research.',
    model: scriptedModel('orchestrator') as any,
    agents: { researcher },
  });
  const exporter = new OtelExporter({
    // Required even with a custom exporter, else the exporter disables itself; never contacted.
    provider: { custom: { endpoint: 'http://127.0.0.1:1/unused' } },
    exporter: new SinkExporter((spans) => current.sink?.(spans)),
  } as any);
  const mastra = new Mastra({
    agents: { [WEATHER_AGENT]: weatherAgent, orchestrator, researcher },
    observability: { configs: { otel: { serviceName: 'mastra-interop', exporters: [exporter] } } },
    logger: false,
  } as any);
  setup = { mastra, exporter };
  return setup;
}

/**
 * Runs one scenario with Mastra 0.24 (AI tracing + OtelExporter). Mastra builds ReadableSpans
 * itself, outside any TracerProvider.
 */
export async function runMastraScenario(
  scenario: ScenarioName,
  options: ScenarioOptions = {},
): Promise<ScenarioResult> {
  const { mastra, exporter } = getSetup();
  const script = scriptFor('mastra', scenario, {
    name: 'agent-researcher',
    args: { prompt: 'Weather in Tokyo?' },
  });
  const recorder = new ToolRecorder();
  const collected: ReadableSpan[] = [];
  current.script = script;
  current.recorder = recorder;
  current.sink = (spans) => collected.push(...spans);
  let traceId: string | undefined;
  let aborted = false;
  const frameworkErrors: string[] = [];
  try {
    if (scenario === 'subagent_as_tool') {
      const result = await mastra
        .getAgent('orchestrator')
        .generate('What is the weather in Tokyo? Ask the researcher.', {
          maxSteps: 5,
        });
      traceId = result.traceId;
    } else if (scenario === 'history') {
      traceId = await runMastraConversation(mastra.getAgent(WEATHER_AGENT), script, recorder);
    } else if (scenario === 'stream_multi_step') {
      const result = await mastra.getAgent(WEATHER_AGENT).stream('What is the weather in Paris, in °F?', {
        maxSteps: 5,
      });
      await result.consumeStream();
      traceId = result.traceId;
    } else {
      // unknown_tool: Mastra 0.24 logs "Tool launchRockets not found" and aborts the run; that is the scenario.
      const run = await withExpectedErrors(
        scenario === 'unknown_tool' ? /Tool launchRockets not found/ : undefined,
        async () => {
          try {
            const result = await mastra
              .getAgent(WEATHER_AGENT)
              .generate('What is the weather in Paris?', { maxSteps: 5 });
            traceId = result.traceId;
          } catch (err) {
            if (scenario !== 'unknown_tool') throw err;
            aborted = true;
          }
        },
      );
      frameworkErrors.push(...run.held);
    }
    await settle();
    // The exporter batches for 5 s; flush its processor instead of shutting it down (one-shot).
    await (exporter as any).processor?.forceFlush();
  } finally {
    current.sink = undefined;
  }
  const spans = traceId ? collected.filter((s) => s.spanContext().traceId === traceId) : collected;
  if (options.spanProcessors?.length) replayInto(options.spanProcessors, spans);
  return {
    spans,
    groundTruth: buildGroundTruth('mastra', scenario, script, recorder.calls, aborted),
    frameworkErrors,
  };
}
