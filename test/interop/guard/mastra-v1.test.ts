import { describe, it } from 'vitest';
import { NEXT_INSTALLED } from '../harness/run-scenario.js';
import { expectGuarded } from './expect-guarded.js';
import { runGuarded } from './guarded-run.js';

describe.skipIf(!NEXT_INSTALLED)('Mastra 1: toolwatchToolHooks', () => {
  it('skips the forbidden call in beforeToolCall; the model reads why and answers', async () => {
    const { mastraV1Guarded } = await import('../next/guard-mastra-v1.js');
    expectGuarded(await runGuarded('mastra-v1', mastraV1Guarded), { viaProcessor: false });
  }, 60_000);
});
