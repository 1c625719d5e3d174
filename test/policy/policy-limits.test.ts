/**
 * A policy is read once, at start, by the gateway and the CLI, and kept for the life of the
 * process. Unbounded, a 100 MB file was accepted after 23 s at 3.9 GB of memory, `--policy
 * /dev/zero` read 632 MB before failing, and a 110 KB file whose 20,000-tool list was
 * aliased into 100 rules (within yaml's 100-aliases-per-node guard) expanded to 2,000,000
 * nodes and kept 290 MB. Each is refused now, at the limit, with the way to raise it.
 */
import { execFileSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPolicy, parsePolicyText } from '../../src/policy/load-policy.js';
import { PolicyError } from '../../src/policy/policy-error.js';
import { DEFAULT_POLICY_LIMITS } from '../../src/policy/policy-limits.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwatch-policy-limits-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const POLICY =
  'version: 1\nrules:\n  - name: r\n    scorers:\n      - kind: tool_order\n        expected_tool: a\n';

/** The valid policy above, padded with a comment to exactly `bytes` bytes. */
function policyOfSize(bytes: number): string {
  return `${POLICY}#${'x'.repeat(bytes - POLICY.length - 2)}\n`;
}

async function refusal(load: Promise<unknown>): Promise<PolicyError> {
  try {
    await load;
  } catch (err) {
    if (err instanceof PolicyError) return err;
    throw err;
  }
  throw new Error('accepted');
}

describe('the size of a policy file', () => {
  it('is at most 1 MiB by default: a file of exactly 1 MiB loads, one byte more is refused', async () => {
    expect(DEFAULT_POLICY_LIMITS.maxBytes).toBe(1024 * 1024);
    const fits = join(dir, 'fits.yaml');
    const over = join(dir, 'over.yaml');
    await writeFile(fits, policyOfSize(1024 * 1024));
    await writeFile(over, policyOfSize(1024 * 1024 + 1));
    expect((await loadPolicy(fits)).rules[0]!.name).toBe('r');
    const error = await refusal(loadPolicy(over));
    expect(error.message).toBe(
      `invalid toolwatch policy ${over} (1 problem)\n  the file is larger than 1048576 bytes, the limit for a policy (raise it with --max-policy-bytes, or the maxBytes option of loadPolicy)`,
    );
  });

  it('is raised (or lowered) by the maxBytes option', async () => {
    const over = join(dir, 'raised.yaml');
    await writeFile(over, policyOfSize(1024 * 1024 + 1));
    expect((await loadPolicy(over, { maxBytes: 2 * 1024 * 1024 })).rules).toHaveLength(1);
    const error = await refusal(loadPolicy(over, { maxBytes: 1000 }));
    expect(error.problems[0]!.message).toContain('larger than 1000 bytes');
  });

  it('/dev/zero is refused at the limit (it was read until 632 MB failed to decode)', async () => {
    const error = await refusal(loadPolicy('/dev/zero'));
    expect(error.problems).toEqual([
      {
        path: '',
        message:
          'the file is larger than 1048576 bytes, the limit for a policy (raise it with --max-policy-bytes, or the maxBytes option of loadPolicy)',
      },
    ]);
  });

  it('a pipe that never ends is refused at the limit', { timeout: 60_000 }, async () => {
    const fifo = join(dir, 'fifo.yaml');
    execFileSync('mkfifo', [fifo]);
    const writer = createWriteStream(fifo);
    const block = Buffer.alloc(64 * 1024, '#');
    let stopped = false;
    writer.on('error', () => {
      stopped = true;
    });
    const pump = () => {
      while (!stopped && writer.write(block)) {}
      if (!stopped) writer.once('drain', pump);
    };
    writer.once('open', pump);
    const error = await refusal(loadPolicy(fifo, { maxBytes: 256 * 1024 }));
    stopped = true;
    writer.destroy();
    expect(error.problems[0]!.message).toContain('larger than 262144 bytes');
  });

  it('an unreadable file is still said so', async () => {
    const missing = join(dir, 'missing.yaml');
    expect((await refusal(loadPolicy(missing))).problems).toEqual([
      { path: '', message: `cannot read policy file ${missing}: no such file` },
    ]);
  });
});

/** A policy of `rules` rules, each expecting the list of `tools` tools anchored in the first. */
function aliasedPolicy(tools: number, rules: number): string {
  const list = Array.from({ length: tools }, (_, i) => `t${i}`).join(', ');
  const out = ['version: 1', 'rules:'];
  for (let i = 0; i <= rules; i++) {
    out.push(`  - name: r${i}`, '    scorers:', '      - kind: trajectory');
    out.push(i === 0 ? `        expected_tools: &tools [${list}]` : '        expected_tools: *tools');
  }
  return `${out.join('\n')}\n`;
}

function problemsOf(text: string, limits = {}): PolicyError['problems'] {
  try {
    parsePolicyText(text, undefined, limits);
  } catch (err) {
    if (err instanceof PolicyError) return err.problems;
    throw err;
  }
  throw new Error('accepted');
}

describe('what the aliases of a policy expand to', () => {
  it('is at most 100,000 added nodes by default: a 2,000-node list aliased 50 times loads, 51 times is refused', () => {
    expect(DEFAULT_POLICY_LIMITS.maxAliasNodes).toBe(100_000);
    // The list is 1,999 scalars and itself: 2,000 nodes per alias.
    const policy = parsePolicyText(aliasedPolicy(1999, 50));
    expect(policy.rules).toHaveLength(51);
    expect(policy.rules[50]!.scorers[0]!.config).toMatchObject({ expected_tools: expect.any(Array) });
    expect(problemsOf(aliasedPolicy(1999, 51))).toEqual([
      {
        path: '',
        message:
          'aliases expand to 102000 nodes, over the limit of 100000 (raise it with --max-policy-alias-nodes, or the maxAliasNodes option of loadPolicy)',
        line: 10,
        column: 25,
      },
    ]);
  });

  it('refuses the 20,000-tool list aliased into 100 rules (2,000,100 nodes, 290 MB kept)', () => {
    const text = aliasedPolicy(20_000, 100);
    expect(text.length).toBeLessThan(200_000);
    const [problem] = problemsOf(text);
    expect(problem!.message).toMatch(/^aliases expand to 2000100 nodes, over the limit of 100000 /);
  });

  it('counts aliases inside aliased nodes as what they expand to', () => {
    // 3 aliases of a 3-node list inside a list (10 nodes expanded), that list aliased 3
    // times: 3 × 3 + 3 × 10.
    const text = 'version: 1\nx: [&a [1, 2], &b [*a, *a, *a], *b, *b, *b]\n';
    expect(problemsOf(text, { maxAliasNodes: 38 })[0]!.message).toMatch(/^aliases expand to 39 nodes/);
    // Within the limit, the file goes on to validation (x is not a policy key).
    expect(problemsOf(text, { maxAliasNodes: 39 })).toEqual([
      expect.objectContaining({ path: 'rules' }),
      { path: 'x', message: 'unknown key', line: 2, column: 1 },
    ]);
  });

  it('is raised by the maxAliasNodes option', () => {
    expect(
      parsePolicyText(aliasedPolicy(1999, 51), undefined, { maxAliasNodes: 102_000 }).rules,
    ).toHaveLength(52);
  });
});
