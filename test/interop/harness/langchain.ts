import { LangChainInstrumentation } from '@arizeai/openinference-instrumentation-langchain';
import * as callbackManager from '@langchain/core/callbacks/manager';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { fakeModel } from '@langchain/core/testing';
import { tool } from '@langchain/core/tools';
import type { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { createAgent } from 'langchain';
import { z } from 'zod';
import { buildGroundTruth } from './build-ground-truth.js';
import { createCapture, settle } from './capture.js';
import { HISTORY_PROMPTS, scriptFor, WEATHER_AGENT } from './scenario-scripts.js';
import { isCallTurn, type Script, type ScriptedCall, type ScriptedTurn } from './script.js';
import { celsiusToFahrenheit, flakyDb, getWeather } from './tool-bodies.js';
import { ToolRecorder } from './tool-recorder.js';
import type { ScenarioName, ScenarioOptions, ScenarioResult } from './types.js';

/** More turns than any scenario needs; the fake throws once its queue is empty. */
const QUEUED_TURNS = 8;

/**
 * A turn as ChatOpenAI would return it: tool calls also in `additional_kwargs.tool_calls`
 * (OpenAI wire format), the only place the OpenInference tracer reads them from.
 */
export function toMessage(turn: ScriptedTurn): AIMessage {
  if (!isCallTurn(turn)) return new AIMessage(turn.text);
  return new AIMessage({
    content: '',
    tool_calls: toolCallsOf(turn),
    additional_kwargs: {
      tool_calls: turn.calls.map((c) => ({
        id: c.id,
        type: 'function',
        function: { name: c.name, arguments: JSON.stringify(c.args) },
      })),
    },
  });
}

/**
 * A turn as most chat model integrations other than ChatOpenAI return it (Anthropic, Google,
 * Bedrock, Ollama): tool calls only on `AIMessage.tool_calls`, no `additional_kwargs.tool_calls`.
 * The OpenInference tracer then flattens no tool call at all; the calls exist only in the
 * serialized messages of `output.value` and `input.value`.
 */
function toMessageOnly(turn: ScriptedTurn): AIMessage {
  if (!isCallTurn(turn)) return new AIMessage(turn.text);
  return new AIMessage({ content: '', tool_calls: toolCallsOf(turn) });
}

function toolCallsOf(turn: { calls: ScriptedCall[] }) {
  return turn.calls.map((c) => ({
    id: c.id,
    name: c.name,
    args: c.args as Record<string, unknown>,
    type: 'tool_call' as const,
  }));
}

/** A chat model class whose tool calls live on the message only (see `toMessageOnly`). */
class MessageToolCallsChatModel extends BaseChatModel {
  constructor(
    private readonly script: Script,
    private readonly agent: string,
  ) {
    super({});
  }

  _llmType(): string {
    return 'message-tool-calls';
  }

  override bindTools(): this {
    return this;
  }

  async _generate(_messages: BaseMessage[]): Promise<ChatResult> {
    const message = toMessageOnly(this.script.next(this.agent));
    const text = typeof message.content === 'string' ? message.content : '';
    return { generations: [{ text, message }] };
  }
}

/** How the scripted model hands its tool calls to LangChain. */
export type LangChainToolCallStyle = 'openai' | 'message-only';

function scriptedModel(script: Script, agent: string, style: LangChainToolCallStyle) {
  if (style === 'message-only') return new MessageToolCallsChatModel(script, agent);
  const model = fakeModel();
  for (let i = 0; i < QUEUED_TURNS; i++) model.respond(() => toMessage(script.next(agent)));
  return model;
}

export function weatherTools(recorder: ToolRecorder, agent: string) {
  return [
    tool(recorder.wrap(agent, 'getWeather', getWeather), {
      name: 'getWeather',
      description: 'Current temperature of a city in °C',
      schema: z.object({ city: z.string() }),
    }),
    tool(recorder.wrap(agent, 'celsiusToFahrenheit', celsiusToFahrenheit), {
      name: 'celsiusToFahrenheit',
      description: 'Converts °C to °F',
      schema: z.object({ c: z.number() }),
    }),
    tool(recorder.wrap(agent, 'flakyDb', flakyDb), {
      name: 'flakyDb',
      description: 'Queries the order database',
      schema: z.object({ query: z.string() }),
    }),
  ];
}

let instrumentation: LangChainInstrumentation | undefined;

function traceTo(provider: BasicTracerProvider): void {
  if (!instrumentation) {
    instrumentation = new LangChainInstrumentation({ tracerProvider: provider });
    instrumentation.manuallyInstrument(callbackManager);
  } else {
    instrumentation.setTracerProvider(provider);
  }
}

/**
 * Runs one scenario with LangChain 1 `createAgent` (LangGraph) and the OpenInference callback
 * tracer. `style` picks the chat model: `openai` (tool calls also in `additional_kwargs`, as
 * ChatOpenAI returns them; framework `langchain`) or `message-only` (framework
 * `langchain-message-tool-calls`).
 */
export async function runLangChainScenario(
  scenario: ScenarioName,
  options: ScenarioOptions = {},
  style: LangChainToolCallStyle = 'openai',
): Promise<ScenarioResult> {
  const framework = style === 'openai' ? 'langchain' : 'langchain-message-tool-calls';
  const capture = createCapture(options.spanProcessors);
  traceTo(capture.provider);
  const script = scriptFor('langchain', scenario, {
    name: 'askResearcher',
    args: { question: 'Weather in Tokyo?' },
  });
  const recorder = new ToolRecorder();

  let agent: ReturnType<typeof createAgent>;
  let prompt = 'What is the weather in Paris?';
  if (scenario === 'subagent_as_tool') {
    const researcher = createAgent({
      name: 'researcher',
      model: scriptedModel(script, 'researcher', style),
      tools: weatherTools(recorder, 'researcher'),
    });
    const askResearcher = tool(
      recorder.wrap('orchestrator', 'askResearcher', async ({ question }: { question: string }) => {
        const result = await researcher.invoke({ messages: [{ role: 'user', content: question }] });
        const last = result.messages.at(-1);
        return typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content);
      }),
      {
        name: 'askResearcher',
        description: 'Delegates a question to the researcher agent',
        schema: z.object({ question: z.string() }),
      },
    );
    agent = createAgent({
      name: 'orchestrator',
      model: scriptedModel(script, 'orchestrator', style),
      tools: [askResearcher],
    });
    prompt = 'What is the weather in Tokyo? Ask the researcher.';
  } else {
    agent = createAgent({
      name: WEATHER_AGENT,
      model: scriptedModel(script, WEATHER_AGENT, style),
      tools: weatherTools(recorder, WEATHER_AGENT),
    });
  }

  const input = { messages: [{ role: 'user', content: prompt }] };
  let firstRunSpans = 0;
  if (scenario === 'history') {
    const first = await agent.invoke({ messages: [{ role: 'user', content: HISTORY_PROMPTS[0] }] });
    await settle();
    firstRunSpans = capture.exporter.getFinishedSpans().length;
    script.forgetServed();
    recorder.forget();
    await agent.invoke({ messages: [...first.messages, { role: 'user', content: HISTORY_PROMPTS[1] }] });
  } else if (scenario === 'stream_multi_step') {
    const stream = await agent.stream(input, { streamMode: 'values' });
    for await (const _chunk of stream) {
      // Drain: the run advances only as the stream is read.
    }
  } else {
    await agent.invoke(input);
  }
  await settle();
  // history: only the second run of the conversation is the scenario.
  const spans = (await capture.finish()).slice(firstRunSpans);
  return { spans, groundTruth: buildGroundTruth(framework, scenario, script, recorder.calls) };
}
