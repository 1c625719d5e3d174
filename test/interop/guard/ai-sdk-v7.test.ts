import { describe, it } from 'vitest';
import { NEXT_INSTALLED } from '../harness/run-scenario.js';
import { expectGuarded } from './expect-guarded.js';
import { runGuarded } from './guarded-run.js';

describe.skipIf(!NEXT_INSTALLED)('AI SDK 7: guardTools', () => {
  it('refuses the forbidden call inside execute; the model reads why and answers', async () => {
    const { aiSdkV7Guarded } = await import('../next/guard-ai-sdk-v7.js');
    expectGuarded(await runGuarded('ai-sdk-v7', aiSdkV7Guarded));
  }, 60_000);
});
