import { describe, it } from 'vitest';
import { NEXT_INSTALLED } from '../harness/run-scenario.js';
import { expectGuarded } from './expect-guarded.js';
import { GUARD_CASES, runGuarded } from './guarded-run.js';

describe.skipIf(!NEXT_INSTALLED)('Mastra 1: toolwatchToolHooks', () => {
  it.each(GUARD_CASES)(
    'skips the %s call in beforeToolCall; the model reads why and answers',
    async (check) => {
      const { mastraV1Guarded } = await import('../next/guard-mastra-v1.js');
      expectGuarded(await runGuarded('mastra-v1', mastraV1Guarded, check), { viaProcessor: false });
    },
    60_000,
  );
});
