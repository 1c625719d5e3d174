import { Agent } from '@mastra/core/agent';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { toolwatchToolHooks } from '../../../src/guard/adapters/mastra.js';
import type { GuardedScenario } from '../guard/guarded-run.js';
import { settle } from '../harness/capture.js';
import { replayInto } from '../harness/replay-into.js';
import { WEATHER_AGENT } from '../harness/scenario-scripts.js';
import { scriptedV2Model } from '../harness/scripted-v2-model.js';
import { mastraV1, weatherTools } from './mastra-v1-setup.js';

/** Mastra 1.x with `toolwatchToolHooks` as the agent's hooks; spans replayed into the processor after the run, as the interop harness does. */
export const mastraV1Guarded: GuardedScenario = async ({ policy, spanProcessors, script, recorder }) => {
  const inputs: string[] = [];
  const model = scriptedV2Model((prompt) => {
    inputs.push(JSON.stringify(prompt));
    return script.next(WEATHER_AGENT);
  });
  const { getWeather, celsiusToFahrenheit } = weatherTools(WEATHER_AGENT, () => recorder);
  const agent = new Agent({
    id: WEATHER_AGENT,
    name: WEATHER_AGENT,
    instructions: 'You answer weather questions.',
    model: model as any,
    tools: { getWeather, celsiusToFahrenheit },
    hooks: toolwatchToolHooks(policy),
  });
  const collected: ReadableSpan[] = [];
  const { mastra, exporter } = mastraV1({ [WEATHER_AGENT]: agent }, 'mastra-v1-guard', (spans) =>
    collected.push(...spans),
  );
  const result = await mastra
    .getAgent(WEATHER_AGENT)
    .generate('What is the weather in Paris, in °F?', { maxSteps: 5 });
  await settle();
  await exporter.flush();
  const spans = collected.filter((s) => s.spanContext().traceId === result.traceId);
  // Mastra builds its spans outside any TracerProvider: processors get them after the run.
  replayInto(spanProcessors, spans);
  return { spans, modelInputs: inputs, text: result.text };
};
