import { OpenTelemetry } from '@ai-sdk/otel';
import { generateText, simulateReadableStream, stepCountIs, streamText, ToolLoopAgent, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import { aiSdkGuarded } from '../guard/ai-sdk-guarded.js';
import type { GuardedScenario } from '../guard/guarded-run.js';

/** AI SDK 7 with `guardTools`, its modules resolved from this folder's install. */
export const aiSdkV7Guarded: GuardedScenario = aiSdkGuarded({
  framework: 'ai-sdk-v7',
  ai: { generateText, simulateReadableStream, stepCountIs, streamText, ToolLoopAgent, tool },
  MockModel: MockLanguageModelV4,
  z,
  telemetry: (tracer, functionId) => ({
    telemetry: {
      isEnabled: true,
      functionId,
      integrations: new OpenTelemetry({ tracer, agentSpanName: 'functionId' }),
    },
  }),
});
