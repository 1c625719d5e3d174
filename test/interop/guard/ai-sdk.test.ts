import { generateText, simulateReadableStream, stepCountIs, streamText, ToolLoopAgent, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, it } from 'vitest';
import { z } from 'zod';
import { aiSdkGuarded } from './ai-sdk-guarded.js';
import { expectGuarded } from './expect-guarded.js';
import { GUARD_CASES, runGuarded } from './guarded-run.js';

describe('AI SDK 6: guardTools', () => {
  it.each(GUARD_CASES)(
    'refuses the %s call inside execute; the model reads why and answers',
    async (check) => {
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
        check,
      );
      expectGuarded(run);
    },
    60_000,
  );
});
