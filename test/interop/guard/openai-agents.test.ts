import { OpenAIAgentsInstrumentation } from '@arizeai/openinference-instrumentation-openai-agents';
import * as agents from '@openai/agents';
import {
  Agent,
  type Model,
  type ModelRequest,
  Runner,
  setTracingDisabled,
  tool,
  Usage,
} from '@openai/agents';
import type { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { describe, it } from 'vitest';
import { z } from 'zod';
import { toolwatchInputGuardrail } from '../../../src/guard/adapters/openai-agents.js';
import { createCapture, settle } from '../harness/capture.js';
import { WEATHER_AGENT } from '../harness/scenario-scripts.js';
import { isCallTurn, type Script } from '../harness/script.js';
import { celsiusToFahrenheit, getWeather } from '../harness/tool-bodies.js';
import { expectGuarded } from './expect-guarded.js';
import { GUARD_CASES, runGuarded } from './guarded-run.js';

/** Serves the script and keeps every request's input items. */
class ScriptedModel implements Model {
  readonly inputs: string[] = [];
  constructor(private readonly _script: Script) {}

  async getResponse(request: ModelRequest) {
    this.inputs.push(JSON.stringify(request.input));
    const turn = this._script.next(WEATHER_AGENT);
    const responseId = `resp_${this.inputs.length}`;
    return {
      usage: new Usage({ requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 }),
      output: isCallTurn(turn)
        ? turn.calls.map((c) => ({
            type: 'function_call' as const,
            callId: c.id,
            name: c.name,
            arguments: JSON.stringify(c.args),
            status: 'completed' as const,
          }))
        : [
            {
              id: responseId,
              type: 'message' as const,
              role: 'assistant' as const,
              status: 'completed' as const,
              content: [{ type: 'output_text' as const, text: turn.text }],
            },
          ],
      responseId,
    };
  }

  // biome-ignore lint/correctness/useYield: the scenario never streams.
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('not scripted');
  }
}

let bridge: OpenAIAgentsInstrumentation | undefined;

/** One bridge for the process (re-instrumenting is a no-op), each run's provider swapped in. */
function bridgeTo(provider: BasicTracerProvider): OpenAIAgentsInstrumentation {
  if (!bridge) {
    bridge = new OpenAIAgentsInstrumentation({ tracerProvider: provider });
    bridge.manuallyInstrument(agents, { exclusiveProcessor: true });
  } else bridge.setTracerProvider(provider);
  // The SDK turns tracing off when NODE_ENV=test (vitest sets it).
  setTracingDisabled(false);
  return bridge;
}

describe('OpenAI Agents: toolwatchInputGuardrail', () => {
  it.each(GUARD_CASES)(
    'rejects the %s call with the reason; the model reads it and answers',
    async (check) => {
      const run = await runGuarded(
        'openai-agents',
        async ({ policy, spanProcessors, script, recorder }) => {
          const capture = createCapture(spanProcessors);
          const instrumentation = bridgeTo(capture.provider);
          const guardrail = toolwatchInputGuardrail(policy, { instrumentation });
          const model = new ScriptedModel(script);
          const agent = new Agent({
            name: WEATHER_AGENT,
            instructions: 'You answer weather questions.',
            model,
            tools: [
              tool({
                name: 'getWeather',
                description: 'Current temperature of a city in °C',
                parameters: z.object({ city: z.string() }),
                execute: recorder.wrap(WEATHER_AGENT, 'getWeather', getWeather),
                inputGuardrails: [guardrail],
              }),
              tool({
                name: 'celsiusToFahrenheit',
                description: 'Converts °C to °F',
                parameters: z.object({ c: z.number() }),
                execute: recorder.wrap(WEATHER_AGENT, 'celsiusToFahrenheit', celsiusToFahrenheit),
                inputGuardrails: [guardrail],
              }),
            ],
          });
          const runner = new Runner({ tracingDisabled: false, traceIncludeSensitiveData: true });
          const result = await runner.run(agent, 'What is the weather in Paris, in °F?');
          await settle();
          return {
            spans: await capture.finish(),
            modelInputs: model.inputs,
            text: String(result.finalOutput),
          };
        },
        check,
      );
      expectGuarded(run, { viaProcessor: false });
    },
    60_000,
  );
});
