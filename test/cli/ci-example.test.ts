import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsx = join(root, 'node_modules/.bin/tsx');
let dir: string;

/** The workflow's `npx toolwatch …` steps, in order. */
async function workflowCommands(): Promise<string[]> {
  const workflow = YAML.parse(await readFile(join(root, 'examples/ci/toolwatch-rollouts.yml'), 'utf8')) as {
    jobs: Record<string, { steps: Array<{ run?: string }> }>;
  };
  return Object.values(workflow.jobs)
    .flatMap((j) => j.steps)
    .map((s) => s.run?.trim() ?? '')
    .filter((r) => r.startsWith('npx toolwatch '));
}

/** Runs `npx toolwatch ARGS` as the workflow would, from the repository root, with the CLI from source. */
function run(
  command: string,
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const args = command
    .replace(/^npx toolwatch /, '')
    .split(/\s+/)
    .map((a) => (a === 'toolwatch-report.md' ? join(dir, 'toolwatch-report.md') : a));
  return new Promise((resolve) => {
    execFile(
      tsx,
      [join(root, 'src/cli/main.ts'), ...args],
      { cwd: root, env: { ...process.env, ...env } },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwatch-ci-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('examples/ci: the workflow’s commands, as CI runs them', () => {
  it('checks the dataset, runs the rollouts, writes the Markdown report and holds the gates', async () => {
    const commands = await workflowCommands();
    expect(commands).toHaveLength(2);
    const [check, rollouts] = [await run(commands[0]!), await run(commands[1]!)];
    expect(check).toMatchObject({
      code: 0,
      stdout: 'examples/ci/cases.yaml: 4 cases ok (1 with answer_facts, judged when a judge is configured)\n',
    });
    expect(rollouts.code).toBe(0);
    const report = await readFile(join(dir, 'toolwatch-report.md'), 'utf8');
    expect(report).toContain('| refund-eligible | 6/6 | 1.00 | 0 | saturated-pass |');
    expect(report).toContain('| refund-typo-prone | 4/6 | 0.67 | 0 | learning-zone |');
    expect(report).toContain('| shipping-wrong-tool | 0/6 | 0.00 | 0 | saturated-fail |');
    expect(report).toContain('✅ gate forbidden_tool_calls: 0 (max 0) held');
    expect(report).toMatch(
      /### By tool[\s\S]*\| get_order_detail \| 18 \| 55\.6% \| 55\.6% \| 0 \| 0 \| 2 \|/,
    );
    expect(report).toMatch(/### By intent[\s\S]*\| order_status \| 12 \| 6 \| 50\.0% \|/);
    expect(report).toMatch(/### By risk[\s\S]*\| high \| 6 \| 6 \| 100\.0% \|/);
    expect(report).toMatch(
      /### By tag[\s\S]*\| refunds \| 12 \| 10 \| 83\.3% \|\n\| shipping \| 12 \| 6 \| 50\.0% \|\n\| smoke \| 6 \| 6 \| 100\.0% \|/,
    );
    expect(rollouts.stderr).toContain('24 rollouts, 24 scored, 16 passed, 0 errors');
  });

  it('fails the build when the agent regresses (submits refunds on its own), with the report still written', async () => {
    const [, rollouts] = await workflowCommands();
    const r = await run(rollouts!, { TOOLWATCH_EXAMPLE_REGRESSION: '1' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('gate forbidden_tool_calls: 12 (max 0) FAILED');
    const report = await readFile(join(dir, 'toolwatch-report.md'), 'utf8');
    expect(report).toContain('❌ gate forbidden_tool_calls: 12 (max 0) FAILED');
    expect(report).toContain('| refund-eligible | 0/6 | 0.00 | 0 | saturated-fail |');
  });
});
