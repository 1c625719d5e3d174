/**
 * docs/cli.md, exit status: "3 internal error — a bug; the message asks for a report
 * (`TOOLWATCH_DEBUG=1` prints the stack)". No test reached exit 3: every error the commands
 * expect is handled (exit 2), and the catch-all runs only for what they do not expect. A fault
 * is injected from outside the code: a rollouts agent module (run in process, by design)
 * replaces `JSON.stringify` with one that throws on the JSON report (its documented shape,
 * `grid` and `rollouts`), so the command fails after the rollouts, where nothing expects it.
 * If the command comes to guard the report against such an agent, this test needs another fault.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsx = join(root, 'node_modules/.bin/tsx');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwatch-internal-error-'));
  await writeFile(
    join(dir, 'cases.yaml'),
    `- id: refund
  input: Refund order A1024
  expected_tools: [get_order_detail]
`,
  );
  await writeFile(
    join(dir, 'breaks-the-report.mjs'),
    `const stringify = JSON.stringify;
export default async () => {
  JSON.stringify = function (value, ...rest) {
    if (value && typeof value === 'object' && 'grid' in value && 'rollouts' in value)
      throw new Error('fault injected into the report');
    return stringify.call(this, value, ...rest);
  };
  return 'done';
};
`,
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function rollouts(debug: boolean): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...process.env };
  delete env.TOOLWATCH_DEBUG;
  if (debug) env.TOOLWATCH_DEBUG = '1';
  const args = [
    'rollouts',
    '--cases',
    'cases.yaml',
    '--agent',
    './breaks-the-report.mjs',
    '-k',
    '1',
    '--format',
    'json',
  ];
  return new Promise((resolve) => {
    execFile(tsx, [join(root, 'src/cli/main.ts'), ...args], { cwd: dir, env }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('docs/cli.md: exit 3 is an internal error; the message asks for a report, TOOLWATCH_DEBUG=1 prints the stack', () => {
  it('an unexpected error: exit 3, the message and a request for a report, no stack', async () => {
    const run = await rollouts(false);
    expect(run.code).toBe(3);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      'toolwatch: internal error (exit 3; please report it): fault injected into the report\n',
    );
  }, 60_000);

  it('with TOOLWATCH_DEBUG=1: the same, with the stack', async () => {
    const run = await rollouts(true);
    expect(run.code).toBe(3);
    const [first, ...stack] = run.stderr.trimEnd().split('\n');
    expect(first).toBe(
      'toolwatch: internal error (exit 3; please report it): Error: fault injected into the report',
    );
    expect(stack.length).toBeGreaterThan(1);
    for (const line of stack) expect(line).toMatch(/^ {4}at /);
    // The stack reaches into toolwatch's own code, where the error was not expected.
    expect(stack.some((line) => line.includes('src/cli/commands/rollouts.ts'))).toBe(true);
  }, 60_000);
});
