import { generateText, simulateReadableStream, stepCountIs, streamText, ToolLoopAgent, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { type AiSdkFlavour, runAiSdkFlavour } from './ai-sdk-runner.js';
import type { ScenarioName, ScenarioOptions, ScenarioResult } from './types.js';

/** AI SDK 6: the tracer goes straight into `experimental_telemetry`; spans are `ai.*`. */
const AI_SDK_6: AiSdkFlavour = {
  framework: 'ai-sdk',
  ai: { generateText, simulateReadableStream, stepCountIs, streamText, ToolLoopAgent, tool },
  MockModel: MockLanguageModelV3,
  z,
  telemetry: (tracer, functionId, scenario) => ({
    experimental_telemetry: { isEnabled: true, tracer, functionId, metadata: { scenario } },
  }),
};

/** Runs one scenario with AI SDK 6 (`generateText` / `streamText` / `ToolLoopAgent`) and a mock model. */
export function runAiSdkScenario(
  scenario: ScenarioName,
  options: ScenarioOptions = {},
): Promise<ScenarioResult> {
  return runAiSdkFlavour(AI_SDK_6, scenario, options);
}
