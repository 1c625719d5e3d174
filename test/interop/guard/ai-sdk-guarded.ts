import { guardTools } from '../../../src/guard/adapters/ai-sdk.js';
import { type AiSdkFlavour, weatherTools } from '../harness/ai-sdk-runner.js';
import { createCapture, settle } from '../harness/capture.js';
import { WEATHER_AGENT } from '../harness/scenario-scripts.js';
import { isCallTurn, type Script } from '../harness/script.js';
import type { GuardedScenario } from './guarded-run.js';

const USAGE = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** A mock model serving the script and keeping every prompt it was given. */
function scriptedModel(sdk: AiSdkFlavour, script: Script, inputs: string[]): unknown {
  return new sdk.MockModel({
    modelId: 'mock-model-id',
    doGenerate: async (options: { prompt: unknown }) => {
      inputs.push(JSON.stringify(options.prompt));
      const turn = script.next(WEATHER_AGENT);
      return {
        content: isCallTurn(turn)
          ? turn.calls.map((c) => ({
              type: 'tool-call',
              toolCallId: c.id,
              toolName: c.name,
              input: JSON.stringify(c.args),
            }))
          : [{ type: 'text', text: turn.text }],
        finishReason: isCallTurn(turn)
          ? { unified: 'tool-calls', raw: 'tool_calls' }
          : { unified: 'stop', raw: 'stop' },
        usage: USAGE,
        warnings: [],
      };
    },
  });
}

/** `generateText` with the weather tools passed through `guardTools`. */
export function aiSdkGuarded(sdk: AiSdkFlavour): GuardedScenario {
  return async ({ guard, spanProcessors, script, recorder }) => {
    const { generateText, stepCountIs } = sdk.ai;
    const capture = createCapture(spanProcessors);
    const tracer = capture.provider.getTracer(`${sdk.framework}-guard`);
    const inputs: string[] = [];
    const tools = guardTools(weatherTools(sdk, recorder, WEATHER_AGENT), guard);
    const result = await generateText({
      model: scriptedModel(sdk, script, inputs),
      tools,
      stopWhen: stepCountIs(5),
      prompt: 'What is the weather in Paris, in °F?',
      ...sdk.telemetry(tracer, WEATHER_AGENT, 'multi_step'),
    });
    await settle();
    return { spans: await capture.finish(), modelInputs: inputs, text: result.text };
  };
}
