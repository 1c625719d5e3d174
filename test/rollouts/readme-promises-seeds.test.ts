/**
 * docs/cli.md, rollouts: "The context also carries `caseId`, the case, its `context` field, the
 * rollout index and a `seed` fixed by (case, rollout)." No test looked at the seed. "Fixed by
 * (case, rollout)" is checked as what it excludes: the seed an agent gets does not depend on
 * the run (two runs, and a separate process through the CLI), on the order or number of the
 * cases, on k or on the concurrency, and two rollouts of a case, or the same rollout of two
 * cases, get different seeds. The formula (FNV-1a of `id#rollout`, in the code's comment) is
 * not documented, so it is not pinned.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCasesText } from '../../src/cases/load-cases.js';
import { type RolloutContext, runRollouts } from '../../src/rollouts/run-rollouts.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsx = join(root, 'node_modules/.bin/tsx');

const CASE = (id: string) => `- id: ${id}
  input: Refund order A1024
  expected_tools: [get_order_detail]
`;

/** Runs the cases (ids, in this order) in process; the seeds the agent was given, by "case#rollout". */
async function seeds(ids: string[], k: number, concurrency: number): Promise<Map<string, number>> {
  const given = new Map<string, number>();
  const result = await runRollouts({
    cases: parseCasesText(ids.map(CASE).join('')),
    agent: async (_input: unknown, context: RolloutContext) => {
      given.set(`${context.caseId}#${context.rollout}`, context.seed);
      // Let the rollouts interleave when the concurrency allows it.
      await new Promise((r) => setTimeout(r, (context.rollout * 7 + context.caseId.length) % 5));
      return 'done';
    },
    k,
    concurrency,
  });
  // The record of each rollout carries the seed its agent got.
  for (const r of result.rollouts) expect(r.seed).toBe(given.get(`${r.case}#${r.rollout}`));
  expect(given.size).toBe(ids.length * k);
  return given;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwatch-seeds-'));
  await writeFile(join(dir, 'cases.yaml'), ['refund-a', 'refund-b'].map(CASE).join(''));
  await writeFile(
    join(dir, 'agent.mjs'),
    `import { appendFileSync } from 'node:fs';
export default async (_input, context) => {
  appendFileSync(new URL('./given.txt', import.meta.url), \`\${context.caseId}#\${context.rollout} \${context.seed}\\n\`);
  return 'done';
};
`,
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('docs/cli.md: a rollout seed is fixed by (case, rollout)', () => {
  it('the same in two runs, whatever the other cases, their order, k and the concurrency', async () => {
    const first = await seeds(['refund-a', 'refund-b'], 3, 1);
    const again = await seeds(['refund-a', 'refund-b'], 3, 1);
    const other = await seeds(['refund-c', 'refund-b', 'refund-a'], 2, 6);
    expect(again).toEqual(first);
    for (const key of ['refund-a#0', 'refund-a#1', 'refund-b#0', 'refund-b#1'])
      expect(other.get(key)).toBe(first.get(key));
  });

  it('different for each rollout of a case and for each case', async () => {
    const given = await seeds(['refund-a', 'refund-b', 'refund-c'], 6, 6);
    expect(new Set(given.values()).size).toBe(18);
    for (const seed of given.values()) {
      expect(Number.isInteger(seed)).toBe(true);
      expect(seed >>> 0).toBe(seed);
    }
  });

  it('the same in another process: toolwatch rollouts gives its agent the seeds runRollouts gives', async () => {
    const { code, stdout } = await new Promise<{ code: number; stdout: string }>((resolve) => {
      execFile(
        tsx,
        [
          join(root, 'src/cli/main.ts'),
          'rollouts',
          '--cases',
          'cases.yaml',
          '--agent',
          './agent.mjs',
          '-k',
          '2',
          '--format',
          'json',
        ],
        { cwd: dir },
        (err, out) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout: out }),
      );
    });
    expect(code).toBe(0);
    const inProcess = await seeds(['refund-a', 'refund-b'], 2, 2);
    const given = new Map(
      (await readFile(join(dir, 'given.txt'), 'utf8'))
        .trim()
        .split('\n')
        .map((line) => line.split(' ') as [string, string])
        .map(([key, seed]) => [key, Number(seed)]),
    );
    expect(given).toEqual(inProcess);
    const reported = (
      JSON.parse(stdout) as { rollouts: Array<{ case: string; rollout: number; seed: number }> }
    ).rollouts;
    expect(new Map(reported.map((r) => [`${r.case}#${r.rollout}`, r.seed]))).toEqual(inProcess);
  }, 60_000);
});
