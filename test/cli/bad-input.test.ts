import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TraceBuilder } from '../helpers/trace-builder.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsx = join(root, 'node_modules/.bin/tsx');
const main = join(root, 'src/cli/main.ts');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[], stdin?: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      tsx,
      [main, ...args],
      { cwd: dir, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
    if (stdin !== undefined) child.stdin!.end(stdin);
  });
}

function trace(n: number, tools: string[]) {
  const t = new TraceBuilder({ traceId: n.toString(16).padStart(32, '0') });
  const a = t.agent('refund-agent');
  for (const name of tools) a.tool(name, { args: { order_id: 'A1024' } });
  return t.toOtlp();
}

const POLICY = `version: 1
rules:
  - name: refunds
    match: { agent: "refund-*" }
    scorers:
      - kind: trajectory
        expected_tools: [get_order_detail, check_refund_policy]
        forbidden_tools: [submit_refund]
gates:
  tool_selection_accuracy: { min: 0.5 }
  forbidden_tool_calls: { max: 0 }
  regression_vs_baseline: { max_drop: 0.1 }
`;

let dir: string;
let goodLines: string[];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwatch-bad-input-'));
  goodLines = Array.from({ length: 40 }, (_, i) =>
    JSON.stringify(trace(i + 1, ['get_order_detail', 'check_refund_policy'])),
  );
  const pretty = JSON.stringify(trace(99, ['get_order_detail']), null, 2);
  await Promise.all([
    writeFile(join(dir, 'policy.yaml'), POLICY),
    // Another rule (a scorer changed), and the same rules under a tighter gate.
    writeFile(
      join(dir, 'other-policy.yaml'),
      POLICY.replace('[submit_refund]', '[submit_refund, cancel_order]'),
    ),
    writeFile(join(dir, 'tighter-gate.yaml'), POLICY.replace('min: 0.5', 'min: 0.6')),
    writeFile(join(dir, 'good.jsonl'), `${goodLines.join('\n')}\n`),
    writeFile(join(dir, 'empty.json'), ''),
    writeFile(join(dir, 'obj.json'), '{}'),
    writeFile(join(dir, 'trunc.json'), pretty.slice(0, pretty.length / 2)),
    writeFile(join(dir, 'binary.bin'), new Uint8Array([0, 1, 2, 3, 0xff, 0xfe])),
    writeFile(join(dir, 'escape.txt'), `\u001b[2J\u001b[31mhello\u001b[0m\n`.repeat(20)),
    writeFile(join(dir, 'fake.jsonl.gz'), gzipSync(`${goodLines.join('\n')}\n`).subarray(0, 100)),
    writeFile(join(dir, 'one-bad-line.jsonl'), `${goodLines[0]}\n{"resourceSpans": [\n${goodLines[1]}\n`),
  ]);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('bad input is never green', () => {
  it('with --gate, an empty, {}, truncated, binary, terminal-escape or corrupt gzip file fails with one message naming it', async () => {
    const files = ['empty.json', 'obj.json', 'trunc.json', 'binary.bin', 'escape.txt', 'fake.jsonl.gz'];
    const runs = await Promise.all(files.map((f) => cli(['score', f, '--policy', 'policy.yaml', '--gate'])));
    runs.forEach((r, i) => {
      const file = files[i]!;
      expect(r.code, file).toBe(1);
      expect(r.stdout, file).toBe('');
      expect(r.stderr, file).toContain('gate FAILED — nothing was scored');
      expect(r.stderr, file).toContain('0 runs scored, 0 verdicts, 0 passed, 1 files');
      expect(r.stderr, file).not.toMatch(/\bheld\b/);
      // Exactly one message about the file, naming it; no raw control bytes.
      const about = r.stderr.split('\n').filter((l) => l.startsWith(`toolwatch score: ${file}`));
      expect(about, file).toHaveLength(1);
      expect(r.stderr, file).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
    });
    expect(runs[3]!.stderr).toContain('binary.bin (byte 0): binary data');
    expect(runs[4]!.stderr).toContain('\\x1b[2J\\x1b[31mhello');
  });

  it('an unreadable record fails the gate unless --allow-unreadable; the line is named once', async () => {
    const [strict, allowed] = await Promise.all([
      cli(['score', 'one-bad-line.jsonl', '--policy', 'policy.yaml', '--gate']),
      cli(['score', 'one-bad-line.jsonl', '--policy', 'policy.yaml', '--gate', '--allow-unreadable']),
    ]);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toContain('one-bad-line.jsonl:2: not JSON');
    expect(strict.stderr).toContain('2 runs scored, 2 verdicts, 2 passed, 1 files, 1 unreadable records');
    expect(strict.stderr).toContain('gate FAILED — 1 unreadable records');
    expect(allowed.code).toBe(0);
    expect(allowed.stdout.trim().split('\n')).toHaveLength(2);
  });

  it('refuses a baseline saved under another policy (exit 2, both digests), and --baseline without --gate', async () => {
    const saved = await cli([
      'baseline',
      'save',
      'good.jsonl',
      '--policy',
      'other-policy.yaml',
      '--out',
      'base.jsonl',
    ]);
    expect(saved.code).toBe(0);
    const [mismatch, noGate, sameSaved] = await Promise.all([
      cli(['score', 'good.jsonl', '--policy', 'policy.yaml', '--gate', '--baseline', 'base.jsonl']),
      cli(['score', 'good.jsonl', '--policy', 'policy.yaml', '--baseline', 'base.jsonl']),
      cli(['baseline', 'save', 'good.jsonl', '--policy', 'policy.yaml', '--out', 'same.jsonl']),
    ]);
    const other = JSON.parse((await readFile(join(dir, 'base.jsonl'), 'utf8')).split('\n')[0]!).policy_digest;
    const mine = JSON.parse((await readFile(join(dir, 'same.jsonl'), 'utf8')).split('\n')[0]!).policy_digest;
    expect(other).not.toBe(mine);
    expect(mismatch.code).toBe(2);
    expect(mismatch.stderr).toContain(`saved under policy digest ${other}`);
    expect(mismatch.stderr).toContain(`the current policy's digest is ${mine}`);
    expect(noGate.code).toBe(2);
    expect(noGate.stderr).toContain('--baseline is only used by --gate');
    expect(sameSaved.code).toBe(0);
    const ok = await cli([
      'score',
      'good.jsonl',
      '--policy',
      'policy.yaml',
      '--gate',
      '--baseline',
      'same.jsonl',
    ]);
    expect(ok.code).toBe(0);
    expect(ok.stderr).toContain('gate regression_vs_baseline: 1 baseline 1 (max_drop 0.1) held');
    // Gates judge the verdicts and change none: a tightened threshold still compares.
    const tighter = await cli([
      'score',
      'good.jsonl',
      '--policy',
      'tighter-gate.yaml',
      '--gate',
      '--baseline',
      'same.jsonl',
    ]);
    expect(tighter.code).toBe(0);
    expect(tighter.stderr).toContain('gate tool_selection_accuracy: 1 (min 0.6) held');
    expect(tighter.stderr).toContain('gate regression_vs_baseline: 1 baseline 1 (max_drop 0.1) held');
  });

  it('baseline save refuses to write a baseline of nothing', async () => {
    const r = await cli([
      'baseline',
      'save',
      'empty.json',
      '--policy',
      'policy.yaml',
      '--out',
      'nothing.jsonl',
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('nothing was scored');
  });
});

describe('CLI behaviour', () => {
  it('reads stdin for -, gzip included, and prints a summary: counts, then the agent runs found', async () => {
    const r = await cli(['score', '-', '--policy', 'policy.yaml'], `${goodLines.slice(0, 3).join('\n')}\n`);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(3);
    expect(r.stderr).toBe(
      'toolwatch score: 3 runs scored, 3 verdicts, 3 passed, 1 files, 0 unreadable records\ntoolwatch score: 3 agent runs found, every one matched a rule\n',
    );
  });

  it('`| head -1` ends quietly: no EPIPE stack trace', async () => {
    // Enough verdicts to overflow the pipe after the reader is gone.
    const many = Array.from({ length: 3000 }, (_, i) =>
      JSON.stringify(trace(i + 1, ['get_order_detail', 'check_refund_policy'])),
    );
    await writeFile(join(dir, 'many.jsonl'), `${many.join('\n')}\n`);
    const r = await new Promise<{ code: number | null; stderr: string; first: string }>((resolve) => {
      const child = spawn(tsx, [main, 'score', 'many.jsonl', '--policy', 'policy.yaml'], { cwd: dir });
      let stderr = '';
      let first = '';
      child.stderr.on('data', (d) => {
        stderr += d;
      });
      child.stdout.once('data', (d: Buffer) => {
        first = d.toString().split('\n')[0]!;
        child.stdout.destroy();
      });
      child.on('close', (code) => resolve({ code, stderr, first }));
    });
    expect(JSON.parse(r.first).rule).toBe('refunds');
    expect(r.stderr).not.toContain('EPIPE');
    expect(r.stderr).not.toContain('Error');
    expect(r.code).toBe(0);
  });

  it('output that cannot be written is exit 2 with the path, not an internal error', async () => {
    const [noDir, full] = await Promise.all([
      cli(['score', 'good.jsonl', '--policy', 'policy.yaml', '--out', join(dir, 'missing', 'out.jsonl')]),
      cli(['score', 'good.jsonl', '--policy', 'policy.yaml', '--out', '/dev/full']),
    ]);
    expect(noDir.code).toBe(2);
    expect(noDir.stderr).toContain(`cannot write ${join(dir, 'missing', 'out.jsonl')}: ENOENT`);
    expect(full.code).toBe(2);
    expect(full.stderr).toContain('cannot write /dev/full: ENOSPC');
    expect(noDir.stderr + full.stderr).not.toContain('internal error');
  });

  it('a directory given as input is a usage error naming it, for score and baseline save', async () => {
    for (const command of [['score'], ['baseline', 'save', '--out', join(dir, 'b.json')]]) {
      const r = await cli([...command, dir, '--policy', 'policy.yaml']);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`${dir} is a directory: give its files`);
    }
  });

  it('--version, and --help for every command', async () => {
    const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string };
    const [version, top, score, baseline, rollouts] = await Promise.all([
      cli(['--version']),
      cli(['--help']),
      cli(['score', '--help']),
      cli(['baseline', 'save', '--help']),
      cli(['rollouts', '--help']),
    ]);
    expect(rollouts.code).toBe(0);
    expect(rollouts.stdout).toMatch(/^usage: toolwatch rollouts --cases C --agent MODULE/);
    expect(rollouts.stdout).toContain('saturated-pass (every');
    expect(version).toMatchObject({ code: 0, stdout: `toolwatch ${pkg.version}\n` });
    expect(top.code).toBe(0);
    expect(top.stdout).toContain('3 internal error');
    expect(score.code).toBe(0);
    expect(score.stdout).toMatch(/^usage: toolwatch score FILE/);
    expect(score.stdout).toContain('3 internal error');
    expect(baseline.code).toBe(0);
    expect(baseline.stdout).toMatch(/^usage: toolwatch baseline save/);
  });

  it('--window: a trace whose spans are further apart than the window is split and reported', async () => {
    // Trace 1's agent span and tool spans in records 1 and 4, with two other traces between.
    const t = trace(1, ['get_order_detail', 'check_refund_policy']) as {
      resourceSpans: Array<{ scopeSpans: Array<{ spans: unknown[] }> }>;
    };
    const spans = t.resourceSpans[0]!.scopeSpans[0]!.spans;
    const part = (s: unknown[]) =>
      JSON.stringify({
        resourceSpans: [
          { ...t.resourceSpans[0], scopeSpans: [{ ...t.resourceSpans[0]!.scopeSpans[0], spans: s }] },
        ],
      });
    const text = [part(spans.slice(1)), goodLines[5], goodLines[6], part(spans.slice(0, 1))].join('\n');
    await writeFile(join(dir, 'apart.jsonl'), `${text}\n`);
    const [wide, narrow] = await Promise.all([
      cli(['score', 'apart.jsonl', '--policy', 'policy.yaml', '--window', '3']),
      cli(['score', 'apart.jsonl', '--policy', 'policy.yaml', '--window', '2']),
    ]);
    expect(wide.stderr).toContain('3 runs scored, 3 verdicts, 3 passed');
    expect(narrow.stderr).toContain(
      'apart.jsonl:4: trace 00000000000000000000000000000001 reappeared after its window closed',
    );
    expect(narrow.stderr).toContain('1 traces split by the window');
  });
});
