import type { Tracer } from '@opentelemetry/api';
import { buildGroundTruth } from './build-ground-truth.js';
import { createCapture, settle } from './capture.js';
import { HISTORY_PROMPTS, scriptFor, WEATHER_AGENT } from './scenario-scripts.js';
import { isCallTurn, type Script, type ScriptedTurn } from './script.js';
import { celsiusToFahrenheit, flakyDb, getWeather } from './tool-bodies.js';
import { ToolRecorder } from './tool-recorder.js';
import type { ScenarioName, ScenarioOptions, ScenarioResult } from './types.js';

/**
 * What differs between AI SDK majors. Each major is installed in its own folder (6 in
 * test/interop, 7 in test/interop/next), and Node resolves packages from the importing file,
 * so the modules are handed in by a small file in each folder rather than imported here.
 */
export interface AiSdkFlavour {
  framework: 'ai-sdk' | 'ai-sdk-v7';
  /** The `ai` module: generateText, streamText, ToolLoopAgent, tool, stepCountIs, simulateReadableStream. */
  ai: any;
  /** The major's mock language model class (`MockLanguageModelV3` / `V4` from `ai/test`). */
  MockModel: new (
    options: any,
  ) => unknown;
  /** zod as that major resolves it. */
  z: any;
  /** The call options that switch telemetry on for one agent (`functionId`). */
  telemetry: (tracer: Tracer, functionId: string, scenario: ScenarioName) => Record<string, unknown>;
}

const USAGE = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

function generateResult(turn: ScriptedTurn): any {
  if (isCallTurn(turn)) {
    return {
      content: turn.calls.map((c) => ({
        type: 'tool-call' as const,
        toolCallId: c.id,
        toolName: c.name,
        input: JSON.stringify(c.args),
      })),
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      usage: USAGE,
      warnings: [],
    };
  }
  return {
    content: [{ type: 'text', text: turn.text }],
    finishReason: { unified: 'stop', raw: 'stop' },
    usage: USAGE,
    warnings: [],
  };
}

function streamParts(turn: ScriptedTurn): any[] {
  const parts: any[] = [{ type: 'stream-start', warnings: [] }];
  if (isCallTurn(turn)) {
    for (const c of turn.calls) {
      parts.push({ type: 'tool-call', toolCallId: c.id, toolName: c.name, input: JSON.stringify(c.args) });
    }
    parts.push({ type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: USAGE });
  } else {
    parts.push(
      { type: 'text-start', id: 't1' },
      { type: 'text-delta', id: 't1', delta: turn.text },
      { type: 'text-end', id: 't1' },
      { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: USAGE },
    );
  }
  return parts;
}

function scriptedModel(sdk: AiSdkFlavour, script: Script, agent: string): unknown {
  const { simulateReadableStream } = sdk.ai;
  return new sdk.MockModel({
    modelId: 'mock-model-id',
    doGenerate: async () => generateResult(script.next(agent)),
    doStream: async () => ({ stream: simulateReadableStream({ chunks: streamParts(script.next(agent)) }) }),
  });
}

export function weatherTools(sdk: AiSdkFlavour, recorder: ToolRecorder, agent: string) {
  const { tool } = sdk.ai;
  const { z } = sdk;
  return {
    getWeather: tool({
      description: 'Current temperature of a city in °C',
      inputSchema: z.object({ city: z.string() }),
      execute: recorder.wrap(agent, 'getWeather', getWeather),
    }),
    celsiusToFahrenheit: tool({
      description: 'Converts °C to °F',
      inputSchema: z.object({ c: z.number() }),
      execute: recorder.wrap(agent, 'celsiusToFahrenheit', celsiusToFahrenheit),
    }),
    flakyDb: tool({
      description: 'Queries the order database',
      inputSchema: z.object({ query: z.string() }),
      execute: recorder.wrap(agent, 'flakyDb', flakyDb),
    }),
  };
}

/** Runs one scenario with the given AI SDK major (`generateText` / `streamText` / `ToolLoopAgent`) and a mock model. */
export async function runAiSdkFlavour(
  sdk: AiSdkFlavour,
  scenario: ScenarioName,
  options: ScenarioOptions = {},
): Promise<ScenarioResult> {
  const { generateText, streamText, ToolLoopAgent, tool, stepCountIs } = sdk.ai;
  const { z } = sdk;
  const capture = createCapture(options.spanProcessors);
  const tracer = capture.provider.getTracer(`${sdk.framework}-interop`);
  const script = scriptFor(sdk.framework, scenario, {
    name: 'askResearcher',
    args: { question: 'Weather in Tokyo?' },
  });
  const recorder = new ToolRecorder();
  const telemetry = (functionId: string) => sdk.telemetry(tracer, functionId, scenario);

  let firstRunSpans = 0;
  if (scenario === 'subagent_as_tool') {
    const researcher = new ToolLoopAgent({
      model: scriptedModel(sdk, script, 'researcher'),
      tools: weatherTools(sdk, recorder, 'researcher'),
      stopWhen: stepCountIs(5),
      ...telemetry('researcher'),
    });
    const askResearcher = tool({
      description: 'Delegates a question to the researcher agent',
      inputSchema: z.object({ question: z.string() }),
      execute: recorder.wrap('orchestrator', 'askResearcher', async ({ question }: { question: string }) => {
        const result = await researcher.generate({ prompt: question });
        return result.text;
      }),
    });
    await generateText({
      model: scriptedModel(sdk, script, 'orchestrator'),
      tools: { askResearcher },
      stopWhen: stepCountIs(5),
      prompt: 'What is the weather in Tokyo? Ask the researcher.',
      ...telemetry('orchestrator'),
    });
  } else if (scenario === 'stream_multi_step') {
    const result = streamText({
      model: scriptedModel(sdk, script, WEATHER_AGENT),
      tools: weatherTools(sdk, recorder, WEATHER_AGENT),
      stopWhen: stepCountIs(5),
      prompt: 'What is the weather in Paris, in °F?',
      ...telemetry(WEATHER_AGENT),
    });
    await result.text;
  } else if (scenario === 'history') {
    const model = scriptedModel(sdk, script, WEATHER_AGENT);
    const tools = weatherTools(sdk, recorder, WEATHER_AGENT);
    const first = await generateText({
      model,
      tools,
      stopWhen: stepCountIs(5),
      prompt: HISTORY_PROMPTS[0],
      ...telemetry(WEATHER_AGENT),
    });
    await settle();
    firstRunSpans = capture.exporter.getFinishedSpans().length;
    script.forgetServed();
    recorder.forget();
    await generateText({
      model,
      tools,
      stopWhen: stepCountIs(5),
      messages: [
        { role: 'user', content: HISTORY_PROMPTS[0] },
        ...first.response.messages,
        { role: 'user', content: HISTORY_PROMPTS[1] },
      ],
      ...telemetry(WEATHER_AGENT),
    });
  } else {
    await generateText({
      model: scriptedModel(sdk, script, WEATHER_AGENT),
      tools: weatherTools(sdk, recorder, WEATHER_AGENT),
      stopWhen: stepCountIs(5),
      prompt: 'What is the weather in Paris?',
      ...telemetry(WEATHER_AGENT),
    });
  }
  // The streamText root span ends after `result.text` resolves.
  await settle();
  // history: only the second run of the conversation is the scenario.
  const spans = (await capture.finish()).slice(firstRunSpans);
  return { spans, groundTruth: buildGroundTruth(sdk.framework, scenario, script, recorder.calls) };
}
