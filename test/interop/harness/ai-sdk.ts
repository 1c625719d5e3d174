import { generateText, simulateReadableStream, stepCountIs, streamText, ToolLoopAgent, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { buildGroundTruth } from './build-ground-truth.js';
import { createCapture, settle } from './capture.js';
import {
  HISTORY_PROMPTS,
  history,
  invalidInput,
  multiStep,
  parallelCalls,
  subagentAsTool,
  toolError,
  unknownTool,
  WEATHER_AGENT,
} from './scenario-scripts.js';
import { isCallTurn, Script, type ScriptedTurn } from './script.js';
import { celsiusToFahrenheit, flakyDb, getWeather } from './tool-bodies.js';
import { ToolRecorder } from './tool-recorder.js';
import type { ScenarioName, ScenarioOptions, ScenarioResult } from './types.js';

// test/interop's top-level @ai-sdk/provider is Mastra's v1; take the v3 types from the mock itself.
type LanguageModelV3GenerateResult = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;
type LanguageModelV3StreamPart =
  Awaited<ReturnType<MockLanguageModelV3['doStream']>>['stream'] extends ReadableStream<infer P> ? P : never;

const USAGE = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

function generateResult(turn: ScriptedTurn): LanguageModelV3GenerateResult {
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

function streamParts(turn: ScriptedTurn): LanguageModelV3StreamPart[] {
  const parts: LanguageModelV3StreamPart[] = [{ type: 'stream-start', warnings: [] }];
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

function scriptedModel(script: Script, agent: string): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    modelId: 'mock-model-id',
    doGenerate: async () => generateResult(script.next(agent)),
    doStream: async () => ({ stream: simulateReadableStream({ chunks: streamParts(script.next(agent)) }) }),
  });
}

function weatherTools(recorder: ToolRecorder, agent: string) {
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

function scriptFor(scenario: ScenarioName): Script {
  switch (scenario) {
    case 'multi_step':
    case 'stream_multi_step':
      return new Script(multiStep());
    case 'tool_error':
      return new Script(toolError());
    case 'parallel_calls':
      return new Script(parallelCalls());
    case 'subagent_as_tool':
      return new Script(subagentAsTool({ name: 'askResearcher', args: { question: 'Weather in Tokyo?' } }));
    case 'unknown_tool':
      return new Script(unknownTool());
    case 'invalid_input':
      return new Script(invalidInput());
    case 'history':
      return new Script(history());
    default:
      throw new Error(`ai-sdk has no scenario ${scenario}`);
  }
}

/** Runs one scenario with AI SDK 6 (`generateText` / `streamText` / `ToolLoopAgent`) and a mock model. */
export async function runAiSdkScenario(
  scenario: ScenarioName,
  options: ScenarioOptions = {},
): Promise<ScenarioResult> {
  const capture = createCapture(options.spanProcessors);
  const tracer = capture.provider.getTracer('ai-sdk-interop');
  const script = scriptFor(scenario);
  const recorder = new ToolRecorder();
  const telemetry = (functionId: string) => ({
    isEnabled: true,
    tracer,
    functionId,
    metadata: { scenario },
  });

  let firstRunSpans = 0;
  if (scenario === 'subagent_as_tool') {
    const researcher = new ToolLoopAgent({
      model: scriptedModel(script, 'researcher'),
      tools: weatherTools(recorder, 'researcher'),
      stopWhen: stepCountIs(5),
      experimental_telemetry: telemetry('researcher'),
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
      model: scriptedModel(script, 'orchestrator'),
      tools: { askResearcher },
      stopWhen: stepCountIs(5),
      prompt: 'What is the weather in Tokyo? Ask the researcher.',
      experimental_telemetry: telemetry('orchestrator'),
    });
  } else if (scenario === 'stream_multi_step') {
    const result = streamText({
      model: scriptedModel(script, WEATHER_AGENT),
      tools: weatherTools(recorder, WEATHER_AGENT),
      stopWhen: stepCountIs(5),
      prompt: 'What is the weather in Paris, in °F?',
      experimental_telemetry: telemetry(WEATHER_AGENT),
    });
    await result.text;
  } else if (scenario === 'history') {
    const model = scriptedModel(script, WEATHER_AGENT);
    const tools = weatherTools(recorder, WEATHER_AGENT);
    const first = await generateText({
      model,
      tools,
      stopWhen: stepCountIs(5),
      prompt: HISTORY_PROMPTS[0],
      experimental_telemetry: telemetry(WEATHER_AGENT),
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
      experimental_telemetry: telemetry(WEATHER_AGENT),
    });
  } else {
    await generateText({
      model: scriptedModel(script, WEATHER_AGENT),
      tools: weatherTools(recorder, WEATHER_AGENT),
      stopWhen: stepCountIs(5),
      prompt: 'What is the weather in Paris?',
      experimental_telemetry: telemetry(WEATHER_AGENT),
    });
  }
  // The streamText root span ends after `result.text` resolves.
  await settle();
  // history: only the second run of the conversation is the scenario.
  const spans = (await capture.finish()).slice(firstRunSpans);
  return { spans, groundTruth: buildGroundTruth('ai-sdk', scenario, script, recorder.calls) };
}
