import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TraceBuilder } from '../helpers/trace-builder.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsx = join(root, 'node_modules/.bin/tsx');
const main = join(root, 'src/cli/main.ts');
let dir: string;

function score(format: string): Promise<string> {
  return new Promise((resolve) =>
    execFile(
      tsx,
      [main, 'score', 'traces.jsonl', '--policy', 'policy.yaml', '--format', format],
      { cwd: dir },
      (_err, stdout) => resolve(stdout),
    ),
  );
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwatch-controls-'));
  const t = new TraceBuilder({ traceId: '0'.repeat(31) + '1' });
  // A screen clear, a window-title change and a colour, in span data.
  t.agent('refund-agent\u001b[2J\u001b]0;pwned\u0007').tool('lookup\u001b[31m', { args: { id: 1 } });
  await writeFile(join(dir, 'traces.jsonl'), `${JSON.stringify(t.toOtlp())}\n`);
  await writeFile(
    join(dir, 'policy.yaml'),
    'version: 1\nrules:\n  - name: refunds\n    scorers:\n      - kind: trajectory\n        expected_tools: [get_order_detail]\n',
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('reports carry no raw control bytes from span data', () => {
  it.each(['table', 'markdown'])('--format %s escapes them', async (format) => {
    const out = await score(format);
    expect(out).toContain('refund-agent\\x1b[2J\\x1b]0;pwned\\x07');
    // Before: the agent name reached the terminal as is (screen cleared, title changed).
    expect(out).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(out.split('\n').length).toBeGreaterThan(5);
  });
});
