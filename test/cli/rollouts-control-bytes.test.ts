import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsx = join(root, 'node_modules/.bin/tsx');
let dir: string;

function rollouts(format: string): Promise<string> {
  return new Promise((resolve) =>
    execFile(
      tsx,
      [
        join(root, 'src/cli/main.ts'),
        'rollouts',
        '--cases',
        'cases.yaml',
        '--agent',
        'agent.mjs',
        '-k',
        '1',
        '--format',
        format,
      ],
      { cwd: dir },
      (_err, stdout) => resolve(stdout),
    ),
  );
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwatch-rollouts-controls-'));
  await writeFile(join(dir, 'cases.yaml'), '- id: refund\n  input: refund A1\n  expected_tools: [lookup]\n');
  // An agent whose error message carries a screen clear and a window-title change.
  await writeFile(
    join(dir, 'agent.mjs'),
    "export default async () => { throw new Error('model said \\u001b[2J\\u001b]0;pwned\\u0007'); };\n",
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('rollouts reports carry no raw control bytes', () => {
  it.each(['table', 'markdown'])('--format %s escapes them', async (format) => {
    const out = await rollouts(format);
    expect(out).toContain('model said \\x1b[2J\\x1b]0;pwned\\x07');
    // Before: the agent's error message reached the terminal as is.
    expect(out).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  });
});
