import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProblemLog } from '../../src/cli/problem-log.js';
import { scoreStream } from '../../src/cli/score-stream.js';
import { parsePolicyText } from '../../src/policy/load-policy.js';
import { TraceBuilder } from '../helpers/trace-builder.js';

let dir: string;
let file: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwatch-progress-'));
  file = join(dir, 'runs.jsonl');
  const lines: string[] = [];
  for (let i = 1; i <= 3000; i++) {
    const t = new TraceBuilder({ traceId: i.toString(16).padStart(32, '0') });
    t.agent('refund-agent').tool('get_order_detail', { args: { order_id: 'A1024' } });
    lines.push(JSON.stringify(t.toOtlp()));
  }
  await writeFile(file, `${lines.join('\n')}\n`);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const policy = parsePolicyText(`version: 1
rules:
  - name: r
    scorers:
      - kind: trajectory
        expected_tools: [get_order_detail]
`);

async function score(tty: boolean): Promise<{ stderr: string; runs: number }> {
  let stderr = '';
  const io = {
    stdout: () => {},
    stderr: (t: string) => {
      stderr += t;
    },
    stderrIsTTY: tty,
  };
  const stats = await scoreStream({
    files: [file],
    policy,
    io,
    log: new ProblemLog(io.stderr, 'toolwatch score'),
    onVerdict: () => new Promise<void>((resolve) => setImmediate(resolve)),
    progressIntervalMs: 1,
  });
  return { stderr, runs: stats.runs };
}

describe('progress on stderr', () => {
  it('redraws one line on a terminal (runs, runs/s, MB read of the total) and clears it at the end', async () => {
    const { stderr, runs } = await score(true);
    expect(runs).toBe(3000);
    const frames = stderr.split('\r\x1b[K').filter(Boolean);
    expect(frames.length).toBeGreaterThan(0);
    for (const f of frames)
      expect(f).toMatch(/^\d+ runs scored, \d+ runs\/s, \d+\.\d( \/ \d+\.\d)? MB read$/);
    expect(stderr.endsWith('\r\x1b[K')).toBe(true);
    expect(stderr).not.toContain('\n');
  });

  it('is silent when stderr is not a terminal', async () => {
    expect((await score(false)).stderr).toBe('');
  });
});
