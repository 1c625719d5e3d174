import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TraceBuilder } from '../helpers/trace-builder.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsx = join(root, 'node_modules/.bin/tsx');
const main = join(root, 'src/cli/main.ts');
let dir: string;
const RUNS = 2000;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwatch-stderr-'));
  const lines: string[] = [];
  for (let i = 1; i <= RUNS; i++) {
    const t = new TraceBuilder({ traceId: i.toString(16).padStart(32, '0') });
    t.agent('refund-agent').tool('get_order_detail', { args: { order_id: 'A1024' } });
    // A bad line before each run: diagnostics on stderr all along.
    lines.push(`not json ${i}`, JSON.stringify(t.toOtlp()));
  }
  await writeFile(join(dir, 'traces.jsonl'), `${lines.join('\n')}\n`);
  await writeFile(
    join(dir, 'policy.yaml'),
    'version: 1\nrules:\n  - name: refunds\n    scorers:\n      - kind: trajectory\n        expected_tools: [get_order_detail]\n',
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('stderr that goes away (`2>&1 | head -1`)', () => {
  it('does not end the run: every verdict reaches --out and the exit status is 0', async () => {
    const child = spawn(tsx, [main, 'score', 'traces.jsonl', '--policy', 'policy.yaml', '--out', 'v.jsonl'], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    // Read the first diagnostic, then close the reading end, as `head -1` does.
    child.stderr!.once('data', () => child.stderr!.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    // Before: EPIPE on stderr was unhandled: exit 1 (a gate failure, as far as CI can tell)
    // and an empty v.jsonl.
    expect(code).toBe(0);
    const verdicts = (await readFile(join(dir, 'v.jsonl'), 'utf8')).trim().split('\n');
    expect(verdicts).toHaveLength(RUNS);
  });
});
