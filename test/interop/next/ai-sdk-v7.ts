import { OpenTelemetry } from '@ai-sdk/otel';
import type { Tracer } from '@opentelemetry/api';
import { generateText, simulateReadableStream, stepCountIs, streamText, ToolLoopAgent, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import { type AiSdkFlavour, runAiSdkFlavour } from '../harness/ai-sdk-runner.js';
import type { ScenarioName, ScenarioOptions, ScenarioResult } from '../harness/types.js';

// One integration per scenario run (per tracer), as an application would register it once.
const integrations = new WeakMap<Tracer, OpenTelemetry>();
function integrationFor(tracer: Tracer): OpenTelemetry {
  let integration = integrations.get(tracer);
  if (!integration) {
    integration = new OpenTelemetry({ tracer, agentSpanName: 'functionId' });
    integrations.set(tracer, integration);
  }
  return integration;
}

/** AI SDK 7: telemetry through the `@ai-sdk/otel` integration, GenAI semconv spans; agent names from `functionId`. */
const AI_SDK_7: AiSdkFlavour = {
  framework: 'ai-sdk-v7',
  ai: { generateText, simulateReadableStream, stepCountIs, streamText, ToolLoopAgent, tool },
  MockModel: MockLanguageModelV4,
  z,
  telemetry: (tracer, functionId) => ({
    telemetry: { isEnabled: true, functionId, integrations: integrationFor(tracer) },
  }),
};

/**
 * Runs one scenario with AI SDK 7 and its `@ai-sdk/otel` integration, which emits GenAI semconv
 * spans (`invoke_agent`, `step`, `chat`, `execute_tool`).
 */
export function runAiSdkV7Scenario(
  scenario: ScenarioName,
  options: ScenarioOptions = {},
): Promise<ScenarioResult> {
  return runAiSdkFlavour(AI_SDK_7, scenario, options);
}
