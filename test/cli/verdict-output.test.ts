import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { TraceBuilder } from '../helpers/trace-builder.js';

const policy = fileURLToPath(new URL('../fixtures/policies/cli-refunds.yaml', import.meta.url));

function line(i: number): string {
  const t = new TraceBuilder({ traceId: i.toString(16).padStart(32, '0') });
  t.agent('refund-agent').tool('get_order_detail', { id: 'c1', args: { order_id: 'A1024' } });
  return `${JSON.stringify(t.toOtlp())}\n`;
}

function capture() {
  const writes: string[] = [];
  return {
    writes,
    io: {
      stdout: (text: string) => {
        writes.push(text);
      },
      stderr: () => {},
    },
  };
}

describe('JSON verdict output', () => {
  it('writes verdicts in batches, the same lines as one write per verdict would', async () => {
    const { writes, io } = capture();
    const stdin = new PassThrough();
    const done = main(['score', '-', '--policy', policy], { ...io, stdin });
    for (let i = 1; i <= 2000; i++) stdin.write(line(i));
    stdin.end();
    expect(await done).toBe(0);
    const lines = writes.join('').split('\n').filter(Boolean);
    expect(lines).toHaveLength(2000);
    expect(new Set(lines.map((l) => JSON.parse(l).trace_id)).size).toBe(2000);
    expect(writes.length).toBeLessThan(lines.length / 10);
  });

  it('still writes a verdict as soon as its trace is judged while the input trickles in', async () => {
    const { writes, io } = capture();
    const stdin = new PassThrough();
    // With a window of 1 record, the first trace is complete once the second record is read.
    const done = main(['score', '-', '--policy', policy, '--window', '1'], { ...io, stdin });
    stdin.write(line(1));
    stdin.write(line(2));
    const deadline = Date.now() + 10_000;
    while (writes.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    // The input is still open: the verdict came out before the end of input.
    expect(writes.join('')).toContain(`"trace_id":"${(1).toString(16).padStart(32, '0')}"`);
    stdin.end();
    expect(await done).toBe(0);
    expect(writes.join('').trim().split('\n')).toHaveLength(2);
  });

  it('--out writes the bytes stdout gets: several batches, multi-byte text, escapes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolwatch-out-'));
    try {
      // Agent names beyond ASCII (accents, CJK, an emoji, a lone surrogate, a control byte)
      // reach the verdict lines; 3,000 runs make several 64 KiB batches.
      const names = [
        'refund-agent',
        'refund-agént',
        'refund-代理',
        'refund-🤖',
        'refund-\ud800x',
        'refund-\u0007',
      ];
      let input = '';
      for (let i = 1; i <= 3000; i++) {
        const t = new TraceBuilder({ traceId: i.toString(16).padStart(32, '0') });
        t.agent(names[i % names.length]!).tool('get_order_detail', { id: 'c1', args: { order_id: 'A1024' } });
        input += `${JSON.stringify(t.toOtlp())}\n`;
      }
      const file = join(dir, 'in.jsonl');
      writeFileSync(file, input);
      const { writes, io } = capture();
      expect(await main(['score', file, '--policy', policy], io)).toBe(0);
      const out = join(dir, 'out.jsonl');
      expect(await main(['score', file, '--policy', policy, '--out', out], capture().io)).toBe(0);
      const stdout = writes.join('');
      expect(stdout.length).toBeGreaterThan(3 * 64 * 1024);
      // Compared as bytes: a deep equality of two 600 KB buffers takes vitest ~20 s.
      const written = readFileSync(out);
      const expected = Buffer.from(stdout, 'utf8');
      expect(written.length).toBe(expected.length);
      expect(written.equals(expected)).toBe(true);
      const agents = new Set(
        stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l).agent),
      );
      // The lone surrogate and the control byte travel as JSON escapes, in and out.
      expect(stdout).toContain('refund-\\ud800x');
      expect(agents).toEqual(new Set(names));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
