import { describe, it } from 'vitest';
import { NEXT_INSTALLED } from '../harness/run-scenario.js';
import { expectGuarded } from './expect-guarded.js';
import { GUARD_CASES, runGuarded } from './guarded-run.js';

describe.skipIf(!NEXT_INSTALLED)('AI SDK 7: guardTools', () => {
  it.each(GUARD_CASES)(
    'refuses the %s call inside execute; the model reads why and answers',
    async (check) => {
      const { aiSdkV7Guarded } = await import('../next/guard-ai-sdk-v7.js');
      expectGuarded(await runGuarded('ai-sdk-v7', aiSdkV7Guarded, check));
    },
    60_000,
  );
});
