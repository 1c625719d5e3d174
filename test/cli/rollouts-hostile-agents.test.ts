/**
 * `toolwatch rollouts` runs a user's module in its own process: whatever that module does to
 * the process — exit it, throw from a timer, leave a rejection unhandled, leave an interval
 * running, or trace nothing — the grid completes, the report says what happened, and the exit
 * status means what it says (without the guard, `process.exit(0)` inside one rollout ended the
 * grid with exit 0 and nothing printed: green in CI with nothing run).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsx = join(root, 'node_modules/.bin/tsx');
const cases = join(root, 'examples/ci/cases.yaml');
const policy = join(root, 'examples/ci/policy.yaml');
const ciAgent = pathToFileURL(join(root, 'examples/ci/agent.mjs')).href;
let dir: string;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function rollouts(agentFile: string, ...extra: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      tsx,
      [
        join(root, 'src/cli/main.ts'),
        'rollouts',
        '--cases',
        cases,
        '--agent',
        join(dir, agentFile),
        '--policy',
        policy,
        '-k',
        '2',
        '-c',
        '2',
        '--format',
        'json',
        ...extra,
      ],
      { cwd: dir, timeout: 60_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

interface Rollout {
  case: string;
  rollout: number;
  passed: boolean;
  agent_spans: number;
  error?: string;
}

const rolloutsOf = (run: Run) => (JSON.parse(run.stdout) as { rollouts: Rollout[] }).rollouts;

/** The example's agent (traced, passing every gate), with `before` run first in each rollout. */
const wrapped = (before: string) =>
  `import agent from ${JSON.stringify(ciAgent)};\nexport default async (input, ctx) => {\n${before}\nreturn agent(input, ctx);\n};\n`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwatch-hostile-agents-'));
  await Promise.all([
    writeFile(join(dir, 'good.mjs'), wrapped('')),
    writeFile(join(dir, 'exits.mjs'), wrapped('if (ctx.rollout === 1) process.exit(0);')),
    writeFile(
      join(dir, 'stray-errors.mjs'),
      wrapped(
        `Promise.reject(new Error('a promise nobody awaited'));
setTimeout(() => { throw new Error('thrown from a timer \\x1b[31mred'); }, 1);
await new Promise((resolve) => setTimeout(resolve, 5));`,
      ),
    ),
    writeFile(join(dir, 'untraced.mjs'), `export default async () => 'Refund submitted.';\n`),
    writeFile(
      join(dir, 'interval.mjs'),
      `import agent from ${JSON.stringify(ciAgent)};\nlet poller;\nexport default async (input, ctx) => {\n  poller ??= setInterval(() => {}, 1000);\n  return agent(input, ctx);\n};\n`,
    ),
    writeFile(
      join(dir, 'late-error.mjs'),
      wrapped(
        "if (ctx.caseId === 'shipping-wrong-tool' && ctx.rollout === 1) setTimeout(() => { throw new Error('a timer left behind'); }, 1500);",
      ),
    ),
    writeFile(join(dir, 'exits-on-import.mjs'), `process.exit(0);\nexport default async () => 'never';\n`),
  ]);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('toolwatch rollouts with an agent that misbehaves', () => {
  it('process.exit inside a rollout fails that rollout; the grid completes and the gate fails', async () => {
    const [good, exits] = await Promise.all([
      rollouts('good.mjs', '--gate'),
      rollouts('exits.mjs', '--gate'),
    ]);
    // The same agent without the exit passes every gate: the failure below is the exit's.
    expect(good.code).toBe(0);
    expect(exits.code).toBe(1);
    const records = rolloutsOf(exits);
    expect(records).toHaveLength(8);
    const failed = records.filter((r) => r.error !== undefined);
    expect(failed.map((r) => r.rollout)).toEqual([1, 1, 1, 1]);
    for (const r of failed) {
      expect(r.error).toBe('the agent called process.exit(0)');
      expect(r.passed).toBe(false);
    }
    // The other rollouts were judged as the same agent's are without the exit (seeds are
    // fixed by case and rollout).
    const zero = (run: Run) => rolloutsOf(run).filter((r) => r.rollout === 0);
    expect(zero(exits).map((r) => [r.case, r.passed])).toEqual(zero(good).map((r) => [r.case, r.passed]));
    const passed = zero(good).filter((r) => r.passed).length;
    expect(exits.stderr).toContain(`8 rollouts, 8 scored, ${passed} passed, 4 errors`);
  }, 90_000);

  it('errors raised outside the rollouts are reported once each, escaped, and fail the gate', async () => {
    const [good, gated, ungated] = await Promise.all([
      rollouts('good.mjs', '--gate'),
      rollouts('stray-errors.mjs', '--gate'),
      rollouts('stray-errors.mjs'),
    ]);
    expect(good.code).toBe(0);
    const outcome = (run: Run) => rolloutsOf(run).map((r) => [r.case, r.rollout, r.passed, r.error]);
    for (const run of [gated, ungated]) {
      // The rollouts themselves were judged as without the stray errors: those are the
      // agent's, not the rollouts'.
      expect(outcome(run)).toEqual(outcome(good));
      const lines = run.stderr.split('\n');
      expect(
        lines.filter(
          (l) =>
            l ===
            'toolwatch rollouts: the agent raised an error outside its rollouts: unhandled rejection: a promise nobody awaited',
        ),
      ).toHaveLength(1);
      // The escape byte is shown, not sent to the terminal.
      expect(lines).toContain(
        'toolwatch rollouts: the agent raised an error outside its rollouts: thrown from a timer \\x1b[31mred',
      );
      expect(run.stderr).not.toContain('\x1b[31m');
      expect(run.stderr).toContain('the agent raised 16 errors outside its rollouts');
    }
    expect(gated.code).toBe(1);
    expect(gated.stderr).toContain('gate FAILED — the agent raised errors outside its rollouts');
    expect(ungated.code).toBe(0);
  }, 90_000);

  it('an error from a timer the agent left behind, after the report, is said and fails the gate through the exit status', async () => {
    const [gated, ungated] = await Promise.all([
      rollouts('late-error.mjs', '--gate'),
      rollouts('late-error.mjs'),
    ]);
    for (const run of [gated, ungated]) {
      expect(rolloutsOf(run)).toHaveLength(8);
      expect(run.stderr).toContain(
        'toolwatch rollouts: the agent raised an error after its rollouts ended: a timer left behind',
      );
      // Handled by the guard, not a crash with a stack trace.
      expect(run.stderr).not.toContain('at Timeout');
    }
    // The same agent without the timer passes every gate (first test): the exit status is the late error's.
    expect(gated.code).toBe(1);
    expect(ungated.code).toBe(0);
  }, 90_000);

  it('an agent traced through nothing is said to be, and its rollouts count no spans', async () => {
    const [good, untraced] = await Promise.all([rollouts('good.mjs'), rollouts('untraced.mjs')]);
    // Each of the 8 rollouts (every() alone would hold over none).
    expect(rolloutsOf(good).map((r) => r.agent_spans > 0)).toEqual(Array(8).fill(true));
    expect(good.stderr).not.toContain('captured no spans');
    expect(rolloutsOf(untraced).map((r) => r.agent_spans)).toEqual(Array(8).fill(0));
    expect(untraced.stderr).toContain(
      '8 of 8 rollouts captured no spans from the agent, so their runs have no tool calls: trace the agent with context.tracer',
    );
  }, 90_000);

  it('an agent that leaves an interval running does not keep the command alive', async () => {
    // Without the grace-period exit the process never ends and execFile's timeout kills it
    // (code null, SIGTERM).
    const run = await rollouts('interval.mjs', '--gate');
    expect(run.code).toBe(0);
    expect(rolloutsOf(run)).toHaveLength(8);
    expect(run.stderr).toContain(
      'the agent left handles open (timers, sockets) 2 s after the rollouts ended; exiting',
    );
  }, 90_000);

  it('a policy that samples runs leaves rollouts unscored, says why, and fails the gate', async () => {
    await writeFile(
      join(dir, 'sampled.yaml'),
      'version: 1\nsampling: { ratio: 0 }\ngates:\n  tool_selection_accuracy: { min: 0.7 }\n',
    );
    const run = await rollouts('good.mjs', '--gate', '--policy', join(dir, 'sampled.yaml'));
    expect(run.code).toBe(1);
    // Unjudged rollouts used to be scored and passed: a saturated-pass grid with nothing judged.
    expect(run.stderr).toContain('8 rollouts, 0 scored, 0 passed, 0 errors');
    expect(run.stderr).toContain(
      '8 of 8 rollouts were judged by no scorer (sampled_out ×8), so they are not scored: the policy samples runs (sampling.ratio)',
    );
    expect(rolloutsOf(run).every((r) => !r.passed)).toBe(true);
  }, 90_000);

  it('an agent module that exits while it is imported is a load error (exit 2)', async () => {
    const run = await rollouts('exits-on-import.mjs');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('cannot load the agent from');
    expect(run.stderr).toContain('the agent called process.exit(0)');
    expect(run.stdout).toBe('');
  }, 90_000);
});
