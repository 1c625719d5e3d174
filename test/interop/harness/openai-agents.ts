import { OpenAIAgentsInstrumentation } from '@arizeai/openinference-instrumentation-openai-agents';
import * as agents from '@openai/agents';
import {
  Agent,
  type AgentOutputItem,
  createGenerationSpan,
  handoff,
  type Model,
  type ModelRequest,
  type ModelResponse,
  Runner,
  resetCurrentSpan,
  type StreamEvent,
  setCurrentSpan,
  setTracingDisabled,
  tool,
  Usage,
} from '@openai/agents';
import type { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { buildGroundTruth } from './build-ground-truth.js';
import { createCapture, settle } from './capture.js';
import { HISTORY_PROMPTS, scriptFor } from './scenario-scripts.js';
import { isCallTurn, type Script, type ScriptedTurn } from './script.js';
import { celsiusToFahrenheit, flakyDb, getWeather } from './tool-bodies.js';
import { ToolRecorder } from './tool-recorder.js';
import type { ScenarioName, ScenarioOptions, ScenarioResult } from './types.js';

const MODEL_NAME = 'mock-model';

/** Request input items as chat-completions messages, as the real chat-completions model traces them. */
function toChatMessages(request: ModelRequest): Array<Record<string, unknown>> {
  const messages: Array<Record<string, unknown>> = [];
  if (request.systemInstructions) messages.push({ role: 'system', content: request.systemInstructions });
  const items =
    typeof request.input === 'string' ? [{ role: 'user', content: request.input }] : request.input;
  for (const item of items as Array<Record<string, any>>) {
    if (item.type === 'function_call') {
      messages.push({
        role: 'assistant',
        tool_calls: [
          { id: item.callId, type: 'function', function: { name: item.name, arguments: item.arguments } },
        ],
      });
    } else if (item.type === 'function_call_result') {
      const output = item.output;
      const text = typeof output === 'string' ? output : (output?.text ?? JSON.stringify(output));
      messages.push({ role: 'tool', tool_call_id: item.callId, content: text });
    } else if (item.role === 'assistant') {
      const content = Array.isArray(item.content)
        ? item.content.map((p: { text?: string }) => p.text ?? '').join('')
        : item.content;
      messages.push({ role: 'assistant', content });
    } else if (item.role) {
      messages.push({ role: item.role, content: item.content });
    }
  }
  return messages;
}

function outputItems(turn: ScriptedTurn, responseId: string): AgentOutputItem[] {
  if (isCallTurn(turn)) {
    return turn.calls.map((c) => ({
      type: 'function_call' as const,
      callId: c.id,
      name: c.name,
      arguments: JSON.stringify(c.args),
      status: 'completed' as const,
    }));
  }
  return [
    {
      id: responseId,
      type: 'message' as const,
      role: 'assistant' as const,
      status: 'completed' as const,
      content: [{ type: 'output_text' as const, text: turn.text }],
    },
  ];
}

/** The chat-completions response the generation span records (tool calls in OpenAI wire format). */
function chatCompletion(turn: ScriptedTurn, responseId: string): Record<string, unknown> {
  const message = isCallTurn(turn)
    ? {
        role: 'assistant',
        content: null,
        tool_calls: turn.calls.map((c) => ({
          id: c.id,
          type: 'function',
          function: { name: c.name, arguments: JSON.stringify(c.args) },
        })),
      }
    : { role: 'assistant', content: turn.text };
  return {
    id: responseId,
    object: 'chat.completion',
    model: MODEL_NAME,
    choices: [{ index: 0, message, finish_reason: isCallTurn(turn) ? 'tool_calls' : 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

/**
 * A scripted `Model`. The Runner makes no LLM span for custom models, so this one opens a
 * `generation` span itself, as `OpenAIChatCompletionsModel` does.
 */
class ScriptedModel implements Model {
  private _count = 0;

  constructor(
    private readonly _script: Script,
    private readonly _agent: string,
  ) {}

  private _turn(): { turn: ScriptedTurn; responseId: string } {
    this._count += 1;
    return { turn: this._script.next(this._agent), responseId: `resp_${this._agent}_${this._count}` };
  }

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const { turn, responseId } = this._turn();
    const span = request.tracing
      ? createGenerationSpan(undefined, (request as any)._internal?.tracingParent)
      : undefined;
    if (span) {
      span.spanData.model = MODEL_NAME;
      span.start();
      setCurrentSpan(span);
    }
    try {
      if (span && request.tracing === true) {
        span.spanData.input = toChatMessages(request);
        span.spanData.output = [chatCompletion(turn, responseId)];
      }
      return {
        usage: new Usage({ requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 }),
        output: outputItems(turn, responseId),
        responseId,
      };
    } finally {
      if (span) {
        span.end();
        resetCurrentSpan();
      }
    }
  }

  async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
    const { turn, responseId } = this._turn();
    const span = request.tracing
      ? createGenerationSpan(undefined, (request as any)._internal?.tracingParent)
      : undefined;
    if (span) {
      span.spanData.model = MODEL_NAME;
      span.start();
      setCurrentSpan(span);
    }
    try {
      if (span && request.tracing === true) span.spanData.input = toChatMessages(request);
      yield { type: 'response_started' };
      if (!isCallTurn(turn)) yield { type: 'output_text_delta', delta: turn.text };
      yield {
        type: 'response_done',
        response: {
          id: responseId,
          usage: { requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 },
          output: outputItems(turn, responseId),
        },
      } as StreamEvent;
      if (span && request.tracing === true) span.spanData.output = [chatCompletion(turn, responseId)];
    } finally {
      if (span) {
        span.end();
        resetCurrentSpan();
      }
    }
  }
}

function weatherTools(recorder: ToolRecorder, agent: string) {
  return [
    tool({
      name: 'getWeather',
      description: 'Current temperature of a city in °C',
      parameters: z.object({ city: z.string() }),
      execute: recorder.wrap(agent, 'getWeather', getWeather),
    }),
    tool({
      name: 'celsiusToFahrenheit',
      description: 'Converts °C to °F',
      parameters: z.object({ c: z.number() }),
      execute: recorder.wrap(agent, 'celsiusToFahrenheit', celsiusToFahrenheit),
    }),
    tool({
      name: 'flakyDb',
      description: 'Queries the order database',
      parameters: z.object({ query: z.string() }),
      execute: recorder.wrap(agent, 'flakyDb', flakyDb),
    }),
  ];
}

let instrumentation: OpenAIAgentsInstrumentation | undefined;

/** One bridge for the process: re-instrumenting is a no-op, so later providers are swapped in. */
function bridgeTo(provider: BasicTracerProvider): void {
  if (!instrumentation) {
    instrumentation = new OpenAIAgentsInstrumentation({ tracerProvider: provider });
    instrumentation.manuallyInstrument(agents, { exclusiveProcessor: true });
  } else {
    instrumentation.setTracerProvider(provider);
  }
  // The SDK turns tracing off when NODE_ENV=test (vitest sets it).
  setTracingDisabled(false);
}

/** Runs one scenario with the OpenAI Agents SDK 0.14 and the OpenInference bridge. */
export async function runOpenAiAgentsScenario(
  scenario: ScenarioName,
  options: ScenarioOptions = {},
): Promise<ScenarioResult> {
  const capture = createCapture(options.spanProcessors);
  bridgeTo(capture.provider);
  const script = scriptFor('openai-agents', scenario, {
    name: 'ask_researcher',
    args: { input: 'Weather in Tokyo?' },
  });
  const recorder = new ToolRecorder();
  const runner = new Runner({ tracingDisabled: false, traceIncludeSensitiveData: true });
  const agentFor = (name: string, extra: Partial<ConstructorParameters<typeof Agent>[0]> = {}) =>
    new Agent({
      name,
      instructions: `You are ${name}.`,
      model: new ScriptedModel(script, name),
      tools: weatherTools(recorder, name),
      ...extra,
    });

  let entry: Agent<any, any>;
  let prompt = 'What is the weather in Paris?';
  if (scenario === 'subagent_as_tool') {
    const researcher = agentFor('researcher');
    const askResearcher = researcher.asTool({
      toolName: 'ask_researcher',
      toolDescription: 'Delegates a question to the researcher agent',
      // Called only when the SDK really runs the tool: the recording hook for agent-as-tool.
      inputBuilder: ({ params }) => {
        recorder.record('orchestrator', 'ask_researcher', params);
        return (params as { input: string }).input;
      },
    });
    entry = agentFor('orchestrator', { tools: [askResearcher] });
    prompt = 'What is the weather in Tokyo? Ask the researcher.';
  } else if (scenario === 'handoff') {
    const specialist = agentFor('weather_specialist');
    entry = agentFor('triage', {
      tools: [],
      handoffs: [
        handoff(specialist, {
          onHandoff: () => recorder.record('triage', 'transfer_to_weather_specialist', {}),
        }),
      ],
    });
  } else {
    entry = agentFor('weather_agent');
  }

  let aborted = false;
  let firstRunSpans = 0;
  try {
    if (scenario === 'stream_multi_step') {
      const result = await runner.run(entry, prompt, { stream: true });
      await result.completed;
    } else if (scenario === 'history') {
      const first = await runner.run(entry, HISTORY_PROMPTS[0]);
      await settle();
      firstRunSpans = capture.exporter.getFinishedSpans().length;
      script.forgetServed();
      recorder.forget();
      await runner.run(entry, [...first.history, { role: 'user', content: HISTORY_PROMPTS[1] }]);
    } else {
      await runner.run(entry, prompt);
    }
  } catch (err) {
    // unknown_tool: the SDK aborts the run with ModelBehaviorError; that is the scenario.
    if (scenario !== 'unknown_tool') throw err;
    aborted = true;
  }
  await settle();
  // history: only the second run of the conversation is the scenario.
  const spans = (await capture.finish()).slice(firstRunSpans);
  return { spans, groundTruth: buildGroundTruth('openai-agents', scenario, script, recorder.calls, aborted) };
}
