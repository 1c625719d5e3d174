import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsx = join(root, 'node_modules/.bin/tsx');
const agent = join(root, 'test/rollouts/scripted-agent.ts');
let dir: string;

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(tsx, [join(root, 'src/cli/main.ts'), ...args], { cwd: dir }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwatch-rollouts-cli-'));
  await writeFile(
    join(dir, 'cases.yaml'),
    `- id: good
  input: Refund A1024
  context: { order: A1024 }
  expected_tools: [get_order_detail, check_refund_policy]
- id: throws
  input: Refund A1024
  context: { fails_on_odd_rollouts: true }
  expected_tools: [get_order_detail, check_refund_policy]
`,
  );
  await writeFile(
    join(dir, 'notify.yaml'),
    `- id: notifies
  input: Refund A1024
  context: { order: A1024 }
  expected_tools: [get_order_detail, check_refund_policy, notify_customer]
`,
  );
  await writeFile(join(dir, 'not-an-agent.mjs'), 'export const answer = 42;\n');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('toolwatch rollouts', () => {
  it('json: the grid and every rollout with its verdict or error; junit: a test per rollout', async () => {
    const [json, junit] = await Promise.all([
      cli(['rollouts', '--cases', 'cases.yaml', '--agent', agent, '-k', '4', '-c', '2', '--format', 'json']),
      cli(['rollouts', '--cases', 'cases.yaml', '--agent', agent, '-k', '4', '--format', 'junit']),
    ]);
    expect(json.code).toBe(0);
    const doc = JSON.parse(json.stdout) as {
      grid: { rows: Array<{ case: string; passed: number; scored: number; class: string }> };
      rollouts: Array<{
        case: string;
        rollout: number;
        passed: boolean;
        error?: string;
        verdict?: { rule: string; results: Array<{ label: string }> };
      }>;
    };
    expect(doc.grid.rows.map((r) => [r.case, r.passed, r.scored, r.class])).toEqual([
      ['good', 4, 4, 'saturated-pass'],
      ['throws', 2, 4, 'learning-zone'],
    ]);
    // Those counted as passed were judged passes, not skipped records (passed: null).
    expect(
      doc.rollouts.filter((r) => r.passed).map((r) => [r.case, r.verdict?.results.map((x) => x.label)]),
    ).toEqual([...Array(4).fill(['good', ['pass']]), ['throws', ['pass']], ['throws', ['pass']]]);
    expect(doc.rollouts).toHaveLength(8);
    expect(doc.rollouts.filter((r) => r.error).map((r) => [r.case, r.rollout])).toEqual([
      ['throws', 1],
      ['throws', 3],
    ]);
    expect(doc.rollouts.filter((r) => !r.error).every((r) => r.verdict?.rule === r.case)).toBe(true);
    expect(json.stderr).toContain(
      '8 rollouts, 8 scored, 6 passed, 2 errors; good 4/4 saturated-pass, throws 2/4 learning-zone',
    );
    expect(junit.code).toBe(0);
    expect(junit.stdout).toContain(
      '<testsuites name="toolwatch rollouts" tests="8" failures="0" errors="2" skipped="0">',
    );
    expect(junit.stdout).toContain('<error message="scripted failure on rollout 1"/>');
  });

  it('html: a failing rollout opens to every expectation, the met ones too', async () => {
    const html = await cli([
      'rollouts',
      '--cases',
      'notify.yaml',
      '--agent',
      agent,
      '-k',
      '1',
      '--format',
      'html',
    ]);
    expect(html.code).toBe(0);
    const met = (tool: string) =>
      `<li class="met"><span class="mark">met</span> expected tool ${tool} was called and succeeded</li>`;
    expect(html.stdout).toContain(
      `<li class="scorer-fail"><code>trajectory</code> <span class="mark">unmet</span><ul>${met('get_order_detail')}${met('check_refund_policy')}<li class="unmet"><span class="mark">unmet</span> expected tool notify_customer was not called</li></ul></li>`,
    );
  }, 60_000);

  it('exit 2 for a module without an agent function, for bad -k, and without --cases', async () => {
    const [noFn, badK, noCases] = await Promise.all([
      cli(['rollouts', '--cases', 'cases.yaml', '--agent', 'not-an-agent.mjs']),
      cli(['rollouts', '--cases', 'cases.yaml', '--agent', agent, '-k', '0']),
      cli(['rollouts', '--agent', agent]),
    ]);
    expect(noFn.code).toBe(2);
    expect(noFn.stderr).toContain(
      'cannot load the agent from not-an-agent.mjs: the module exports no function',
    );
    expect(badK.code).toBe(2);
    expect(badK.stderr).toContain('-k must be a positive integer');
    expect(noCases.code).toBe(2);
    expect(noCases.stderr).toContain('--cases is required');
  });

  it('names the agent that ran, not the rollout wrapper; --gate without gates requires every rollout to pass', async () => {
    const [table, json] = await Promise.all([
      cli(['rollouts', '--cases', 'cases.yaml', '--agent', agent, '-k', '2', '--format', 'table', '--gate']),
      cli(['rollouts', '--cases', 'cases.yaml', '--agent', agent, '-k', '2', '--format', 'json']),
    ]);
    // The module's default export is a function named `agent`: the file names it.
    const doc = JSON.parse(json.stdout) as { rollouts: Array<{ verdict?: { agent: string } }> };
    const agents = new Set(doc.rollouts.flatMap((r) => (r.verdict ? [r.verdict.agent] : [])));
    expect([...agents]).toEqual(['scripted-agent']);
    expect(table.stdout).not.toContain('toolwatch.rollout');
    // The errored rollout's row names the agent too.
    expect(table.stdout).toMatch(
      /^[0-9a-f]{32}\s+scripted-agent\s+throws\s+throws #1\s+rollout error: scripted failure on rollout 1$/m,
    );
    // 3 of 4 rollouts passed: the rule --gate applies fails, and says so.
    expect(table.code).toBe(1);
    expect(table.stderr).toContain(
      'toolwatch rollouts: the policy has no gates: --gate applies pass_rate: { min: 1 } (every scored rollout must pass)',
    );
    expect(table.stderr).toContain('gate pass_rate: 0.75 (min 1) FAILED');
    expect(table.stdout).toContain('gate pass_rate: 0.75 (min 1) FAILED');
  }, 120_000);
});
