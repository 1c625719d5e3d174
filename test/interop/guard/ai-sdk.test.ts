import { generateText, simulateReadableStream, stepCountIs, streamText, ToolLoopAgent, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, it } from 'vitest';
import { z } from 'zod';
import { aiSdkGuarded } from './ai-sdk-guarded.js';
import { expectGuarded } from './expect-guarded.js';
import { runGuarded } from './guarded-run.js';

describe('AI SDK 6: guardTools', () => {
  it('refuses the forbidden call inside execute; the model reads why and answers', async () => {
    const run = await runGuarded(
      'ai-sdk',
      aiSdkGuarded({
        framework: 'ai-sdk',
        ai: { generateText, simulateReadableStream, stepCountIs, streamText, ToolLoopAgent, tool },
        MockModel: MockLanguageModelV3,
        z,
        telemetry: (tracer, functionId) => ({
          experimental_telemetry: { isEnabled: true, tracer, functionId },
        }),
      }),
    );
    expectGuarded(run);
  }, 60_000);
});
