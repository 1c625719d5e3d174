import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsx = join(root, 'node_modules/.bin/tsx');
const CASES = '- id: refund\n  input: refund A1\n  expected_tools: [lookup]\n';
let dir: string;

function rollouts(args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) =>
    execFile(
      tsx,
      [join(root, 'src/cli/main.ts'), 'rollouts', ...args],
      { cwd: dir },
      (err, _stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr }),
    ),
  );
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwatch-rollouts-out-'));
  await writeFile(join(dir, 'cases.yaml'), CASES);
  await writeFile(join(dir, 'agent.mjs'), "export default async () => 'done';\n");
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('rollouts --out naming an input', () => {
  it('is refused (exit 2) and the case file is left as it was', async () => {
    const r = await rollouts([
      '--cases',
      'cases.yaml',
      '--agent',
      'agent.mjs',
      '-k',
      '1',
      '--out',
      'cases.yaml',
    ]);
    // Before: the rollouts ran and the report replaced the dataset.
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'toolwatch rollouts: --out cases.yaml is the input cases.yaml: it would be overwritten\n',
    );
    expect(await readFile(join(dir, 'cases.yaml'), 'utf8')).toBe(CASES);
  });
});
