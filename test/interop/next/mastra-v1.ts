import { Agent } from '@mastra/core/agent';
import { Mastra } from '@mastra/core/mastra';
import { createTool } from '@mastra/core/tools';
import { Observability } from '@mastra/observability';
import { OtelExporter } from '@mastra/otel-exporter';
import { ROOT_CONTEXT } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { buildGroundTruth } from '../harness/build-ground-truth.js';
import { settle } from '../harness/capture.js';
import { HISTORY_PROMPTS, scriptFor, WEATHER_AGENT } from '../harness/scenario-scripts.js';
import { isCallTurn, type Script, type ScriptedTurn } from '../harness/script.js';
import { celsiusToFahrenheit, flakyDb, getWeather } from '../harness/tool-bodies.js';
import { ToolRecorder } from '../harness/tool-recorder.js';
import type { ScenarioName, ScenarioOptions, ScenarioResult } from '../harness/types.js';

/** As in Mastra 0.24, the tracing registry is process-global: one Mastra, scenarios swapped in. */
const current: { script?: Script; recorder?: ToolRecorder; sink?: (spans: ReadableSpan[]) => void } = {};

class SinkExporter implements SpanExporter {
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    current.sink?.(spans);
    done({ code: 0 });
  }
  async shutdown(): Promise<void> {}
  async forceFlush(): Promise<void> {}
}

const USAGE = { inputTokens: 10, outputTokens: 5, totalTokens: 15 };
type V2Part = Record<string, unknown> & { type: string };

function streamParts(turn: ScriptedTurn): V2Part[] {
  const parts: V2Part[] = [{ type: 'stream-start', warnings: [] }];
  if (isCallTurn(turn)) {
    for (const c of turn.calls) {
      parts.push({ type: 'tool-call', toolCallId: c.id, toolName: c.name, input: JSON.stringify(c.args) });
    }
    parts.push({ type: 'finish', finishReason: 'tool-calls', usage: USAGE });
  } else {
    parts.push(
      { type: 'text-start', id: 't1' },
      { type: 'text-delta', id: 't1', delta: turn.text },
      { type: 'text-end', id: 't1' },
      { type: 'finish', finishReason: 'stop', usage: USAGE },
    );
  }
  return parts;
}

/** A scripted AI SDK v5 model (spec v2), which Mastra 1.x still accepts. */
function scriptedModel(agent: string) {
  return {
    specificationVersion: 'v2' as const,
    provider: 'mock-provider',
    modelId: 'mock-model-id',
    supportedUrls: {},
    async doGenerate() {
      const turn = current.script!.next(agent);
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
    async doStream() {
      const parts = streamParts(current.script!.next(agent));
      return {
        stream: new ReadableStream<V2Part>({
          start(controller) {
            for (const p of parts) controller.enqueue(p);
            controller.close();
          },
        }),
      };
    },
  };
}

function weatherTools(agent: string) {
  const run =
    <A, R>(name: string, fn: (args: A) => R) =>
    async (input: A) =>
      current.recorder!.wrap(agent, name, fn)(input);
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

/** Text of the last user message in whatever Mastra hands a sub-agent (a string or messages). */
function promptText(messages: unknown): string {
  if (typeof messages === 'string') return messages;
  const list = Array.isArray(messages) ? messages : [messages];
  for (let i = list.length - 1; i >= 0; i--) {
    const m = list[i] as { role?: string; content?: unknown };
    if (m?.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    if (Array.isArray(m.content)) return m.content.map((p: { text?: string }) => p.text ?? '').join('');
  }
  return '';
}

/**
 * Mastra runs `agent-researcher` by calling the sub-agent's `generate`/`stream`; wrapping them is
 * the recording hook for that agent-as-tool call (it is no function of ours).
 */
function recordDelegations(researcher: Agent): void {
  const target = researcher as unknown as Record<'generate' | 'stream', (...args: unknown[]) => unknown>;
  for (const method of ['generate', 'stream'] as const) {
    const original = target[method].bind(researcher);
    target[method] = (messages: unknown, ...rest: unknown[]) => {
      current.recorder!.record('orchestrator', 'agent-researcher', { prompt: promptText(messages) });
      return original(messages, ...rest);
    };
  }
}

let setup: { mastra: Mastra; exporter: OtelExporter } | undefined;

function getSetup(): { mastra: Mastra; exporter: OtelExporter } {
  if (setup) return setup;
  const researcher = new Agent({
    id: 'researcher',
    name: 'researcher',
    description: 'Researches weather questions.',
    instructions: 'You research weather.',
    model: scriptedModel('researcher') as any,
    tools: weatherTools('researcher'),
  });
  recordDelegations(researcher);
  const weatherAgent = new Agent({
    id: WEATHER_AGENT,
    name: WEATHER_AGENT,
    instructions: 'You answer weather questions.',
    model: scriptedModel(WEATHER_AGENT) as any,
    tools: weatherTools(WEATHER_AGENT),
  });
  const orchestrator = new Agent({
    id: 'orchestrator',
    name: 'orchestrator',
    instructions: 'You delegate research.',
    model: scriptedModel('orchestrator') as any,
    agents: { researcher },
  });
  const exporter = new OtelExporter({
    // Required even with a custom exporter, else the exporter disables itself; never contacted.
    provider: { custom: { endpoint: 'http://127.0.0.1:1/unused' } },
    exporter: new SinkExporter(),
    // 1.x also exports logs, over OTLP/HTTP to the dummy endpoint: each flush then waits ~8 s on retries.
    signals: { traces: true, logs: false },
  } as any);
  const mastra = new Mastra({
    agents: { [WEATHER_AGENT]: weatherAgent, orchestrator, researcher },
    observability: new Observability({
      configs: { otel: { serviceName: 'mastra-v1-interop', exporters: [exporter] } },
    }),
    logger: false,
  } as any);
  setup = { mastra, exporter };
  return setup;
}

/**
 * history: run the first turn, forget it, then send its messages with a second prompt. Returns
 * the trace id of the second run, the only one the scenario keeps.
 */
async function runConversation(agent: {
  generate: (...args: any[]) => Promise<any>;
}): Promise<string | undefined> {
  const first = await agent.generate(HISTORY_PROMPTS[0], { maxSteps: 5 });
  current.script!.forgetServed();
  current.recorder!.forget();
  const second = await agent.generate(
    [
      { role: 'user', content: HISTORY_PROMPTS[0] },
      ...first.response.messages,
      { role: 'user', content: HISTORY_PROMPTS[1] },
    ],
    { maxSteps: 5 },
  );
  return second.traceId;
}

function replayInto(processors: readonly SpanProcessor[], spans: readonly ReadableSpan[]): void {
  const ns = (t: [number, number]) => t[0] * 1e9 + t[1];
  const byStart = [...spans].sort((a, b) => ns(a.startTime) - ns(b.startTime));
  for (const p of processors) for (const s of byStart) p.onStart(s as any, ROOT_CONTEXT);
  for (const p of processors) for (const s of spans) p.onEnd(s);
}

/** Runs one scenario with Mastra 1.x (Observability + OtelExporter 1.x, GenAI semconv spans). */
export async function runMastraV1Scenario(
  scenario: ScenarioName,
  options: ScenarioOptions = {},
): Promise<ScenarioResult> {
  const { mastra, exporter } = getSetup();
  const script = scriptFor('mastra-v1', scenario, {
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
  try {
    const agentName = scenario === 'subagent_as_tool' ? 'orchestrator' : WEATHER_AGENT;
    const prompt =
      scenario === 'subagent_as_tool'
        ? 'What is the weather in Tokyo? Ask the researcher.'
        : 'What is the weather in Paris?';
    try {
      if (scenario === 'history') {
        traceId = await runConversation(mastra.getAgent(agentName));
      } else if (scenario === 'stream_multi_step') {
        const result = await mastra.getAgent(agentName).stream(prompt, { maxSteps: 5 });
        await result.consumeStream();
        traceId = result.traceId;
      } else {
        const result = await mastra.getAgent(agentName).generate(prompt, { maxSteps: 5 });
        traceId = result.traceId;
      }
    } catch (err) {
      if (scenario !== 'unknown_tool') throw err;
      aborted = true;
    }
    await settle();
    await exporter.flush();
  } finally {
    current.sink = undefined;
  }
  const spans = traceId ? collected.filter((s) => s.spanContext().traceId === traceId) : collected;
  if (options.spanProcessors?.length) replayInto(options.spanProcessors, spans);
  return { spans, groundTruth: buildGroundTruth('mastra-v1', scenario, script, recorder.calls, aborted) };
}
