import { Agent } from '@mastra/core/agent';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { buildGroundTruth } from '../harness/build-ground-truth.js';
import { settle } from '../harness/capture.js';
import { runMastraConversation } from '../harness/mastra-conversation.js';
import { replayInto } from '../harness/replay-into.js';
import { scriptFor, WEATHER_AGENT } from '../harness/scenario-scripts.js';
import type { Script } from '../harness/script.js';
import { scriptedV2Model } from '../harness/scripted-v2-model.js';
import { ToolRecorder } from '../harness/tool-recorder.js';
import type { ScenarioName, ScenarioOptions, ScenarioResult } from '../harness/types.js';
import { mastraV1, weatherTools } from './mastra-v1-setup.js';

/** As in Mastra 0.24, the tracing registry is process-global: one Mastra, scenarios swapped in. */
const current: { script?: Script; recorder?: ToolRecorder; sink?: (spans: ReadableSpan[]) => void } = {};

/** The scripted model of `agent`: it serves the running scenario's script. */
function scriptedModel(agent: string) {
  return scriptedV2Model(() => current.script!.next(agent));
}

/** The running scenario's recorder. */
const runningRecorder = () => current.recorder!;

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

let setup: ReturnType<typeof mastraV1> | undefined;

function getSetup(): ReturnType<typeof mastraV1> {
  if (setup) return setup;
  const researcher = new Agent({
    id: 'researcher',
    name: 'researcher',
    description: 'Researches weather questions.',
    instructions: 'You research weather.',
    model: scriptedModel('researcher') as any,
    tools: weatherTools('researcher', runningRecorder),
  });
  recordDelegations(researcher);
  const weatherAgent = new Agent({
    id: WEATHER_AGENT,
    name: WEATHER_AGENT,
    instructions: 'You answer weather questions.',
    model: scriptedModel(WEATHER_AGENT) as any,
    tools: weatherTools(WEATHER_AGENT, runningRecorder),
  });
  const orchestrator = new Agent({
    id: 'orchestrator',
    name: 'orchestrator',
    instructions: 'You delegate research.',
    model: scriptedModel('orchestrator') as any,
    agents: { researcher },
  });
  const { mastra, exporter } = mastraV1(
    { [WEATHER_AGENT]: weatherAgent, orchestrator, researcher },
    'mastra-v1-interop',
    (spans) => current.sink?.(spans),
  );
  setup = { mastra, exporter };
  return setup;
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
        traceId = await runMastraConversation(mastra.getAgent(agentName), script, recorder);
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
