import { link, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/cli-io.js';
import { scoreCommand } from '../../src/cli/commands/score.js';
import { TraceBuilder } from '../helpers/trace-builder.js';

let dir: string;
let traces: string;

async function score(argv: string[], name = 'score'): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const io: CliIo = {
    stdout: () => undefined,
    stderr: (t) => {
      stderr += t;
    },
  };
  return { code: await scoreCommand(argv, io, name), stderr };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwatch-out-'));
  const t = new TraceBuilder({ traceId: '0'.repeat(31) + '1' });
  t.agent('refund-agent').tool('get_order_detail', { args: { order_id: 'A1024' } });
  traces = `${JSON.stringify(t.toOtlp())}\n`;
  await writeFile(
    join(dir, 'policy.yaml'),
    'version: 1\nrules:\n  - name: refunds\n    scorers:\n      - kind: trajectory\n        expected_tools: [get_order_detail]\n',
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('--out naming an input', () => {
  it('is refused (exit 2) and the input is left as it was, for score and baseline save', async () => {
    const input = join(dir, 'traces.jsonl');
    for (const name of ['score', 'baseline save']) {
      await writeFile(input, traces);
      const r = await score([input, '--policy', join(dir, 'policy.yaml'), '--out', input], name);
      // Before: the output was opened first, emptying the input: "0 runs scored", exit 0
      // (score) and a recorded trace file lost.
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        `toolwatch ${name}: --out ${input} is the input ${input}: it would be emptied before it is read\n`,
      );
      expect(await readFile(input, 'utf8')).toBe(traces);
    }
  });

  it('is refused through another name for the same file (a hard link), and for the policy', async () => {
    const input = join(dir, 'traces2.jsonl');
    const alias = join(dir, 'alias.jsonl');
    await writeFile(input, traces);
    await link(input, alias);
    expect((await score([input, '--policy', join(dir, 'policy.yaml'), '--out', alias])).code).toBe(2);
    expect(await readFile(input, 'utf8')).toBe(traces);
    const policy = join(dir, 'policy.yaml');
    expect((await score([input, '--policy', policy, '--out', policy])).code).toBe(2);
    expect(await readFile(policy, 'utf8')).toContain('expected_tools');
  });

  it('writes a new file or another existing one as before', async () => {
    const input = join(dir, 'traces3.jsonl');
    await writeFile(input, traces);
    const out = join(dir, 'verdicts.jsonl');
    expect((await score([input, '--policy', join(dir, 'policy.yaml'), '--out', out])).code).toBe(0);
    expect((await readFile(out, 'utf8')).split('\n')[0]).toContain('"passed":true');
    expect((await score([input, '--policy', join(dir, 'policy.yaml'), '--out', out])).code).toBe(0);
  });
});

describe('a baseline from another policy', () => {
  it('is refused with its digest escaped (it is read from the file and printed on a terminal)', async () => {
    const input = join(dir, 'traces4.jsonl');
    await writeFile(input, traces);
    const baseline = join(dir, 'baseline.jsonl');
    await writeFile(
      baseline,
      `${JSON.stringify({ trace_id: 't', span_id: 's', passed: true, results: [], policy_digest: '\u001b[2Jevil' })}\n`,
    );
    const r = await score([input, '--policy', join(dir, 'policy.yaml'), '--gate', '--baseline', baseline]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('saved under policy digest \\x1b[2Jevil');
    // Before: the escape sequence was printed as it is.
    expect(r.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
  });
});
