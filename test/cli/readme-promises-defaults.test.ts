/**
 * `toolwatch score`'s documented defaults: "a trace is judged when `--window` records
 * (default 1,000) have gone by without mentioning it", "at most 200,000 spans are held open
 * (beyond that the oldest trace is judged early, also reported)", and the reports' failing
 * runs ("the first 500 kept; the rest counted"). The committed tests pass `--window 2/3`,
 * `maxOpenSpans: 50` and `maxFailing: 2`, so none of the numbers had a test. Each runs the
 * real CLI (tsx src/cli/main.ts) with nothing set, just inside and just past the value.
 */
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

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(tsx, [main, ...args], { cwd: dir, maxBuffer: 256 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

const POLICY = `version: 1
rules:
  - name: refunds
    match: { agent: "refund-*" }
    scorers:
      - kind: trajectory
        expected_tools: [get_order_detail]
`;

const traceId = (n: number) => n.toString(16).padStart(32, '0');

/** One refund run: its agent span and one tool span, as an OTLP/JSON request. */
function run(n: number, tool: string) {
  const t = new TraceBuilder({ traceId: traceId(n) });
  t.agent('refund-agent').tool(tool, { args: { order_id: 'A1024' } });
  return t.toOtlp() as { resourceSpans: Array<{ scopeSpans: Array<{ spans: unknown[] }> }> };
}

/** The same request with only the spans `pick` keeps. */
function part(request: ReturnType<typeof run>, pick: (spans: unknown[]) => unknown[]): string {
  const rs = request.resourceSpans[0]!;
  const ss = rs.scopeSpans[0]!;
  return JSON.stringify({ resourceSpans: [{ ...rs, scopeSpans: [{ ...ss, spans: pick(ss.spans) }] }] });
}

/** `count` plain spans of one trace (no agent: nothing to judge, only held), as one record. */
function plainSpans(trace: number, count: number): string {
  const id = traceId(trace);
  const spans = [];
  for (let i = 0; i < count; i++) {
    spans.push({
      traceId: id,
      spanId: (trace * 1_000_000 + i + 1).toString(16).padStart(16, '0'),
      name: 'GET /',
      startTimeUnixNano: '1764000000000000000',
      endTimeUnixNano: '1764000000001000000',
    });
  }
  return JSON.stringify({ resourceSpans: [{ resource: {}, scopeSpans: [{ scope: {}, spans }] }] });
}

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwatch-readme-defaults-'));
  // Trace 1's tool span first, its agent span `gap` records later, other runs between.
  const apart = (gap: number) => {
    const split = run(1, 'get_order_detail');
    const between = Array.from({ length: gap - 1 }, (_, i) => JSON.stringify(run(i + 2, 'get_order_detail')));
    return `${[part(split, (s) => s.slice(1)), ...between, part(split, (s) => s.slice(0, 1))].join('\n')}\n`;
  };
  const failing = (n: number) =>
    `${Array.from({ length: n }, (_, i) => JSON.stringify(run(i + 1, 'search_web'))).join('\n')}\n`;
  await Promise.all([
    writeFile(join(dir, 'policy.yaml'), POLICY),
    writeFile(join(dir, 'apart-1000.jsonl'), apart(1000)),
    writeFile(join(dir, 'apart-1001.jsonl'), apart(1001)),
    writeFile(join(dir, 'failing-500.jsonl'), failing(500)),
    writeFile(join(dir, 'failing-501.jsonl'), failing(501)),
    // 200,000 spans open across two traces, then one more span of a third.
    writeFile(join(dir, 'open-200000.jsonl'), `${plainSpans(1, 100_000)}\n${plainSpans(2, 100_000)}\n`),
    writeFile(
      join(dir, 'open-200001.jsonl'),
      `${plainSpans(1, 100_000)}\n${plainSpans(2, 100_000)}\n${plainSpans(3, 1)}\n`,
    ),
  ]);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('docs/cli.md: toolwatch score defaults', () => {
  it('--window (1,000): a trace whose spans are 1,000 records apart is whole; 1,001 apart, split and reported', async () => {
    const [within, past] = await Promise.all([
      cli(['score', 'apart-1000.jsonl', '--policy', 'policy.yaml']),
      cli(['score', 'apart-1001.jsonl', '--policy', 'policy.yaml']),
    ]);
    expect(within.code).toBe(0);
    expect(within.stderr).not.toContain('reappeared');
    expect(within.stderr).toContain('1000 runs scored, 1000 verdicts, 1000 passed');
    expect(past.stderr).toContain(
      `apart-1001.jsonl:1002: trace ${traceId(1)} reappeared after its window closed`,
    );
    expect(past.stderr).toContain('1 traces split by the window');
  }, 60_000);

  it('failing runs in a report: the first 500 are shown, the rest counted', async () => {
    const [all, capped] = await Promise.all([
      cli(['score', 'failing-500.jsonl', '--policy', 'policy.yaml', '--format', 'table']),
      cli(['score', 'failing-501.jsonl', '--policy', 'policy.yaml', '--format', 'table']),
    ]);
    expect(all.stdout).toMatch(/failing runs: 500\n/);
    expect(capped.stdout).toContain('failing runs: 501 (first 500 shown)');
  }, 60_000);

  it('at most 200,000 spans are held open: one more judges the oldest trace early, reported', async () => {
    const [at, past] = await Promise.all([
      cli(['score', 'open-200000.jsonl', '--policy', 'policy.yaml']),
      cli(['score', 'open-200001.jsonl', '--policy', 'policy.yaml']),
    ]);
    expect(at.stderr).not.toContain('judged before its window closed');
    expect(past.stderr).toContain(
      `open-200001.jsonl:1: trace ${traceId(1)} judged before its window closed: more than the open-span bound are buffered`,
    );
  }, 60_000);
});
