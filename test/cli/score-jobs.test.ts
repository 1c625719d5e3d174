/**
 * `toolwatch score --jobs N` splits traces among worker threads by trace id. Whatever the
 * input's shape — a run per line, the Collector's batches (each line mixing traces, each trace
 * spread over lines), garbage between records, a window that splits traces, documents and gzip
 * read on the main thread, stdin — it must write the same verdicts, problems, summary, gates
 * and exit code as one thread; only the order of verdict lines may differ.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { ProblemLog } from '../../src/cli/problem-log.js';
import { scoreParallel } from '../../src/cli/score-parallel.js';
import { loadScoring } from '../../src/cli/scoring.js';
import { ownersFor, shardOf, shardsOfBytes, shardsOfLine } from '../../src/cli/trace-shards.js';
import { TraceBuilder } from '../helpers/trace-builder.js';
import {
  sameWithJobs as compareWithJobs,
  lines,
  POLICY,
  request,
  type Span,
  score,
  summary,
} from './score-jobs-harness.js';

const policies = fileURLToPath(new URL('../fixtures/policies/', import.meta.url));
const root = fileURLToPath(new URL('../../', import.meta.url));
const tsx = join(root, 'node_modules/.bin/tsx');
const cliMain = join(root, 'src/cli/main.ts');
/** Trace ids spread over every shard (consecutive ids would do too; these look like real ones). */
function traceId(i: number): string {
  return (Math.imul(i + 1, 2654435761) >>> 0).toString(16).padStart(32, '0');
}

const VARIANTS = [
  ['get_order_detail', 'check_refund_policy'],
  ['check_refund_policy', 'get_order_detail', 'submit_refund'],
  ['get_order_detail', 'lookup_customer', 'check_refund_policy', 'log_event'],
];

function run(i: number) {
  const t = new TraceBuilder({ traceId: traceId(i) });
  const a = t.agent('refund-agent');
  VARIANTS[i % VARIANTS.length]!.forEach((name, k) => {
    a.llm({ toolCalls: [{ name, id: `c${k}`, args: { order_id: i % 5 === 0 ? 'B7' : 'A1024' } }] });
    a.tool(name, { id: `c${k}`, args: { order_id: i % 5 === 0 ? 'B7' : 'A1024' }, result: { ok: true } });
  });
  return t.toOtlp();
}

/**
 * The Collector file exporter's shape: each line a batch of spans from several traces, each
 * trace's spans spread over several lines (in order), some spans linking to other traces.
 */
function batches(traces: number, perLine: number, from = 0): string[] {
  const queues = Array.from({ length: traces }, (_, i) => {
    const spans = run(from + i).resourceSpans[0]!.scopeSpans[0]!.spans;
    if (i % 4 === 1)
      spans[1]!.links = [{ traceId: traceId(from + i + 1), spanId: '0000000000000001', attributes: [] }];
    return spans;
  });
  const lines: string[] = [];
  let line: Span[] = [];
  // Up to 5 traces interleave at a time, a span from each in turn.
  for (let start = 0; start < traces; start += 5) {
    const open = queues.slice(start, start + 5);
    while (open.some((q) => q.length > 0)) {
      for (const q of open) {
        const span = q.shift();
        if (!span) continue;
        line.push(span);
        if (line.length === perLine) {
          lines.push(JSON.stringify(request(line)));
          line = [];
        }
      }
    }
  }
  if (line.length > 0) lines.push(JSON.stringify(request(line)));
  return lines;
}

let dir: string;
/** The differential of the harness, with two and three threads by default. */
const sameWithJobs = (args: string[], jobs: number[] = [2, 3], stdin?: () => Readable) =>
  compareWithJobs(args, jobs, dir, stdin);
let policy: string;
const file = (name: string) => join(dir, name);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwatch-jobs-'));
  policy = file('policy.yaml');
  await writeFile(policy, POLICY);
  const perLine = Array.from({ length: 300 }, (_, i) => JSON.stringify(run(i)));
  await writeFile(file('per-line.jsonl'), `${perLine.join('\n')}\n`);
  await writeFile(file('per-line.jsonl.gz'), gzipSync(`${perLine.join('\n')}\n`));
  const batched = batches(120, 7);
  await writeFile(file('batches.jsonl'), `${batched.join('\n')}\n`);
  // Every third batch moved to the end: its traces come back after their window closed.
  const late = batched.filter((_, i) => i % 3 === 2);
  await writeFile(file('gappy.jsonl'), `${[...batched.filter((_, i) => i % 3 !== 2), ...late].join('\n')}\n`);
  const mixed = batches(60, 5, 1000);
  const broken = traceId(5000);
  mixed.splice(3, 0, 'not json at all');
  mixed.splice(9, 0, '{}');
  // Claimed by the shard scan (it has a trace id and ends with a brace), unreadable in a worker.
  mixed.splice(14, 0, `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"${broken}",}]}]}]}`);
  // Read (by a worker) with a span that must be dropped: its span id is not hex.
  mixed.splice(
    20,
    0,
    JSON.stringify(request([{ traceId: broken, spanId: 'not-an-id', name: 'x', startTimeUnixNano: '1' }])),
  );
  // Upper-case ids are not read by the shard scan: decoded on the main thread, handed over.
  mixed.splice(25, 0, JSON.stringify(run(2000)).replaceAll(traceId(2000), traceId(2000).toUpperCase()));
  await writeFile(file('mixed.jsonl'), `${mixed.join('\n')}\n`);
  // A pretty-printed document: read and decoded on the main thread, its spans handed over.
  const doc = request(
    Array.from({ length: 20 }, (_, i) => run(3000 + i).resourceSpans[0]!.scopeSpans[0]!.spans).flat(),
  );
  await writeFile(file('doc.json'), JSON.stringify(doc, null, 2));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('toolwatch score --jobs', () => {
  it('a run per line: the same verdicts, summary and gates as one thread', async () => {
    const one = await sameWithJobs([file('per-line.jsonl'), '--policy', policy, '--gate']);
    expect(lines(one.stdout)).toHaveLength(300);
    expect(summary(one.stderr)).toBe(
      'toolwatch score: 300 runs scored, 300 verdicts, 160 passed, 1 files, 0 unreadable records',
    );
    expect(one.stderr).toContain('tool_selection_accuracy');
    expect(one.code).toBe(0);
  });

  it("the Collector's batches (traces mixed in lines, spread over lines, linking to others)", async () => {
    const one = await sameWithJobs([file('batches.jsonl'), '--policy', policy]);
    expect(lines(one.stdout)).toHaveLength(120);
    expect(summary(one.stderr)).toMatch(
      /^toolwatch score: 120 runs scored, 120 verdicts, \d+ passed, 1 files, 0 unreadable records$/,
    );
  });

  it('garbage between records: the same problems, each reported once, and the same counts', async () => {
    const one = await sameWithJobs([file('mixed.jsonl'), '--policy', policy, '--gate']);
    expect(one.stderr).toContain('mixed.jsonl:4: not JSON');
    expect(one.stderr).toContain('mixed.jsonl:10: not an OTLP ExportTraceServiceRequest');
    expect(one.stderr).toContain('mixed.jsonl:15: not JSON');
    expect(one.stderr).toMatch(/mixed\.jsonl:21: .*span/);
    // 60 runs and the upper-case one; the broken trace's one readable span has no agent.
    expect(summary(one.stderr)).toMatch(
      /^toolwatch score: 61 runs scored, 61 verdicts, \d+ passed, 1 files, 4 unreadable records$/,
    );
    expect(one.code).toBe(1);
  });

  it('a window that splits traces splits them the same way, reported the same', async () => {
    const one = await sameWithJobs([file('gappy.jsonl'), '--policy', policy, '--window', '2']);
    expect(one.stderr).toContain('reappeared after its window closed');
    expect(summary(one.stderr)).toMatch(/, \d+ traces split by the window$/);
  });

  it('a worker closes a trace when the window passes it, even while the records between went to another worker', async () => {
    // T (the main thread's: bucket 17) is mentioned at records 1 and 5; records 2-4 are the
    // worker's (buckets 34-38). With --window 2, T closes after record 3 and reappears at 5,
    // as with one thread: both of T's records are judged in one batch, which must close T
    // between them.
    const t = run(0).resourceSpans[0]!.scopeSpans[0]!.spans.map((span) => ({
      ...span,
      traceId: '1'.repeat(32),
    }));
    const other = (i: number) =>
      run(i).resourceSpans[0]!.scopeSpans[0]!.spans.map((span) => ({
        ...span,
        traceId: `${'2'.repeat(31)}${2 * i}`,
      }));
    const records = [
      request(t.slice(0, 2)),
      request(other(1)),
      request(other(2)),
      request(other(3)),
      request(t.slice(2)),
    ];
    await writeFile(file('reappears.jsonl'), `${records.map((r) => JSON.stringify(r)).join('\n')}\n`);
    const one = await sameWithJobs([file('reappears.jsonl'), '--policy', policy, '--window', '2'], [2]);
    expect(one.stderr).toContain(`reappears.jsonl:5: trace ${'1'.repeat(32)} reappeared`);
  });

  it('documents and gzip (read on the main thread) and stdin', async () => {
    const doc = await sameWithJobs([file('doc.json'), file('per-line.jsonl.gz'), '--policy', policy]);
    expect(summary(doc.stderr)).toMatch(
      /^toolwatch score: 320 runs scored, 320 verdicts, \d+ passed, 2 files, 0 unreadable records$/,
    );
    const text = `${Array.from({ length: 50 }, (_, i) => JSON.stringify(run(i))).join('\n')}\n`;
    const piped = await sameWithJobs(['-', '--policy', policy], [2], () => Readable.from([text]));
    expect(lines(piped.stdout)).toHaveLength(50);
  });

  it('a report (Markdown, with gates) reads the same', async () => {
    const one = await sameWithJobs(
      [
        file('batches.jsonl'),
        file('mixed.jsonl'),
        '--policy',
        join(policies, 'cli-gates.yaml'),
        '--format',
        'markdown',
        '--gate',
      ],
      [2],
    );
    expect(one.stdout).toContain('| refunds |');
  });

  it('`| head -1` ends quietly, workers and all: exit 0, no EPIPE, no stack', async () => {
    const r = await new Promise<{ code: number | null; stderr: string; first: string }>((resolve) => {
      const child = spawn(
        tsx,
        [cliMain, 'score', file('per-line.jsonl'), '--policy', policy, '--jobs', '3'],
        {
          cwd: root,
        },
      );
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

  it('an invalid policy with --jobs: exit 2 with every problem, the workers started early stopped', async () => {
    const one = await score([file('per-line.jsonl'), '--policy', join(policies, 'invalid.yaml')]);
    const many = await score([
      file('per-line.jsonl'),
      '--policy',
      join(policies, 'invalid.yaml'),
      '--jobs',
      '3',
    ]);
    expect(one.code).toBe(2);
    expect(many).toEqual(one);
  });

  it('refuses a bad --jobs, and --jobs with --judges (one judge budget cannot be split)', async () => {
    for (const bad of ['0', '33', 'two', '1.5']) {
      const r = await score([file('per-line.jsonl'), '--policy', policy, '--jobs', bad]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('--jobs must be an integer from 1 to 32');
    }
    const judged = await score([
      file('per-line.jsonl'),
      '--policy',
      policy,
      '--jobs',
      '2',
      '--judges',
      join(policies, 'judges.mjs'),
    ]);
    expect(judged.code).toBe(2);
    expect(judged.stderr).toContain('--jobs cannot be combined with --judges');
  });

  it('reading waits for the workers: what is read but not yet judged stays bounded', async () => {
    // 3,000 runs of ~20 KB each, generated as they are read: without backpressure the reader
    // would run through all of them before the workers judged a tenth.
    const pad = 'x'.repeat(20_000);
    let produced = 0;
    let worst = 0;
    let judged = 0;
    function* generate() {
      for (let i = 0; i < 3000; i++) {
        produced++;
        worst = Math.max(worst, produced - judged);
        const r = run(i);
        (r.resourceSpans[0]!.scopeSpans[0]!.spans[0]!.attributes as unknown[]).push({
          key: 'pad',
          value: { stringValue: pad },
        });
        yield `${JSON.stringify(r)}\n`;
      }
    }
    let stderr = '';
    const code = await main(['score', '-', '--policy', policy, '--jobs', '2', '--window', '10'], {
      stdout: (t) => {
        judged += t.split('\n').length - 1;
      },
      stderr: (t) => {
        stderr += t;
      },
      stdin: Readable.from(generate(), { objectMode: false, highWaterMark: 1 }),
    });
    expect(code).toBe(0);
    expect(judged).toBe(3000);
    expect(stderr).toContain('3000 runs scored');
    // Each worker's queue holds up to 16 M characters (~800 of these lines), plus its window
    // and the batches in flight: well under the 3,000 a reader that never waits runs ahead.
    expect(worst).toBeLessThan(2200);
  });
});

describe('scoreParallel', () => {
  it('a slow reader of the output slows the reading: output not yet written stays bounded', async () => {
    let produced = 0;
    let written = 0;
    let worst = 0;
    function* generate() {
      for (let i = 0; i < 2000; i++) {
        produced++;
        worst = Math.max(worst, produced - written);
        yield `${JSON.stringify(run(i))}\n`;
      }
    }
    const stderr: string[] = [];
    const io = { stdout: () => {}, stderr: (t: string) => stderr.push(t), stdin: Readable.from(generate()) };
    const { stats } = await scoreParallel({
      files: ['-'],
      jobs: 2,
      scoring: await loadScoring({ policy, matchInput: false, judge: false }),
      sources: { policy, matchInput: false, judge: false },
      window: 10,
      lines: true,
      // ~200 verdict lines of ~1.6 KB before reading waits.
      maxQueuedChars: 300_000,
      onLines: async (lines) => {
        await new Promise((resolve) => setTimeout(resolve, 2));
        written += lines.split('\n').length - 1;
      },
      // The main thread's own share is written as it is judged (its reading waits for it).
      onVerdict: () => {
        written++;
      },
      io,
      log: new ProblemLog(io.stderr, 'toolwatch score'),
    });
    expect(stats.runs).toBe(2000);
    expect(written).toBe(2000);
    expect(stderr).toEqual([]);
    // Unbounded, the reader runs through all 2,000 runs while the output is still writing
    // its first hundreds; bounded, it waits within a few hundred (queued, windows, batches).
    expect(worst).toBeLessThan(1000);
  });
});

describe('scoreParallel progress', () => {
  it("on a terminal, the progress line counts every thread's runs as they are judged", async () => {
    let stderr = '';
    const io = {
      stdout: () => {},
      stderr: (t: string) => {
        stderr += t;
      },
      stderrIsTTY: true,
    };
    const slow = () => new Promise<void>((resolve) => setImmediate(resolve));
    const { stats } = await scoreParallel({
      files: [file('per-line.jsonl')],
      jobs: 3,
      scoring: await loadScoring({ policy, matchInput: false, judge: false }),
      sources: { policy, matchInput: false, judge: false },
      lines: true,
      onLines: slow,
      onVerdict: slow,
      progressIntervalMs: 1,
      io,
      log: new ProblemLog(io.stderr, 'toolwatch score'),
    });
    expect(stats.runs).toBe(300);
    const frames = stderr.split('\r\x1b[K').filter(Boolean);
    expect(frames.length).toBeGreaterThan(0);
    const counts = frames.map((f) => {
      expect(f).toMatch(/^\d+ runs scored, \d+ runs\/s, \d+\.\d( \/ \d+\.\d)? MB read$/);
      return Number(f.split(' ')[0]);
    });
    for (let i = 1; i < counts.length; i++) expect(counts[i]!).toBeGreaterThanOrEqual(counts[i - 1]!);
    // Runs judged by the workers are counted as their replies come, not only at the end: the
    // main thread's own share is about 30 % of the 300 (19 of 64 buckets with 3 threads).
    expect(Math.max(...counts)).toBeGreaterThan(150);
    expect(stderr.endsWith('\r\x1b[K')).toBe(true);
  });
});

describe('scoreParallel failures', () => {
  it("a worker that fails (here: its policy file is gone) fails the run with the worker's error", async () => {
    const io = { stdout: () => {}, stderr: () => {}, stdin: Readable.from([`${JSON.stringify(run(1))}\n`]) };
    await expect(
      scoreParallel({
        files: ['-'],
        jobs: 2,
        scoring: await loadScoring({ policy, matchInput: false, judge: false }),
        sources: { policy: file('no-such-policy.yaml'), matchInput: false, judge: false },
        lines: true,
        onLines: () => {},
        onVerdict: () => {},
        io,
        log: new ProblemLog(io.stderr, 'toolwatch score'),
      }),
    ).rejects.toThrow(/no-such-policy\.yaml/);
  });
});

describe('trace shards', () => {
  it("a line's shards, read from its text or its bytes, agree with its decoded spans' ids", () => {
    for (const threads of [2, 3, 7]) {
      const owners = ownersFor(threads);
      for (let i = 0; i < 50; i++) {
        const text = JSON.stringify(
          request([
            ...run(i).resourceSpans[0]!.scopeSpans[0]!.spans,
            ...run(i + 1).resourceSpans[0]!.scopeSpans[0]!.spans,
          ]),
        );
        const expected = (1 << shardOf(traceId(i), owners)) | (1 << shardOf(traceId(i + 1), owners));
        expect(shardsOfLine(text, owners)).toBe(expected);
        const bytes = Buffer.from(`xx${text}yy`);
        expect(shardsOfBytes(bytes, 2, bytes.length - 2, owners)).toBe(expected);
      }
    }
  });

  it('every thread owns buckets; the main thread, which also reads, fewer than an even share', () => {
    for (const threads of [2, 3, 4, 8, 32]) {
      const owners = ownersFor(threads);
      const share = (t: number) => owners.filter((o) => o === t).length;
      for (let t = 0; t < threads; t++) expect(share(t)).toBeGreaterThan(0);
      expect(share(0)).toBeLessThan(64 / threads);
      expect(new Set(owners).size).toBe(threads);
    }
  });

  it('a line whose ids it cannot read safely is left to the main thread (mask 0)', () => {
    const owners = ownersFor(2);
    const id = traceId(1);
    const both = (text: string) => {
      const bytes = Buffer.from(text);
      const fromBytes = shardsOfBytes(bytes, 0, bytes.length, owners);
      expect(fromBytes).toBe(shardsOfLine(text, owners));
      return fromBytes;
    };
    expect(both(`{"traceId": "${id}"}`)).toBe(0);
    expect(both(`{"traceId":"${id.toUpperCase()}"}`)).toBe(0);
    expect(both(`{"traceId":"${id.slice(1)}"}`)).toBe(0);
    expect(both(`{"traceId":"${id}","x":{"traceId":5}}`)).toBe(0);
    expect(both('{"resourceSpans":[]}')).toBe(0);
    // Escaped inside a string value: not a key, not counted.
    expect(both(`{"traceId":"${id}","v":"{\\"traceId\\":\\"zz\\"}"}`)).toBe(1 << shardOf(id, owners));
  });

  it('keys that end like traceId ("sourceId", "priceId") are neither read as trace ids nor hide the ones that are', () => {
    const owners = ownersFor(32);
    const [id, other] = [traceId(1), traceId(2)];
    expect(shardOf(id, owners)).not.toBe(shardOf(other, owners));
    const both = (text: string) => {
      const bytes = Buffer.from(`ceId"${text}`);
      const fromBytes = shardsOfBytes(bytes, 5, bytes.length, owners);
      expect(fromBytes).toBe(shardsOfLine(text, owners));
      expect(shardsOfBytes(bytes, 0, bytes.length, owners)).toBe(fromBytes);
      return fromBytes;
    };
    expect(both(`{"priceId":"${other}","traceId":"${id}","sourceId":"${other}"}`)).toBe(
      1 << shardOf(id, owners),
    );
    expect(both(`{"sourceId":"${id}"}`)).toBe(0);
    expect(both(`{"traceId":"${id}","s":[{"traceId":"${other}"}]}`)).toBe(
      (1 << shardOf(id, owners)) | (1 << shardOf(other, owners)),
    );
  });
});
