/**
 * An attack on `toolwatch score --jobs N` (2 December 2026): hostile inputs, layouts and
 * thread counts, each run with one thread and with N, which must write the same verdict lines
 * (in any order), problems, summary, gates and exit code. The helpers are
 * `score-jobs-harness.ts`'s.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownersFor, shardOf } from '../../src/cli/trace-shards.js';
import { mulberry32 } from '../helpers/seeded-random.js';
import { TraceBuilder } from '../helpers/trace-builder.js';
import {
  comparable,
  sameWithJobs as compareWithJobs,
  lines,
  POLICY,
  request,
  type Span,
  score,
  summary,
} from './score-jobs-harness.js';

const TOOLS = ['get_order_detail', 'check_refund_policy', 'submit_refund', 'lookup_customer', 'log_event'];

/** Seeded: the same inputs every run (mulberry32). */
function random(seed: number) {
  const next = mulberry32(seed);
  const int = (n: number) => Math.floor(next() * n);
  return { next, int, chance: (p: number) => next() < p, pick: <T>(xs: readonly T[]) => xs[int(xs.length)]! };
}
type Random = ReturnType<typeof random>;

function hex(r: Random, digits: number): string {
  let s = '';
  for (let i = 0; i < digits; i++) s += r.int(16).toString(16);
  return s;
}

/** A trace of an agent (refund or not, sometimes nested) calling random tools. */
function randomTrace(r: Random, id: string): Span[] {
  const t = new TraceBuilder({ traceId: id });
  const top = r.chance(0.2) ? t.span('POST /chat', {}, 1) : t;
  let agent = top.agent(r.chance(0.85) ? 'refund-agent' : 'other-agent');
  if (r.chance(0.15)) agent = agent.agent('refund-helper');
  const calls = r.int(6);
  for (let k = 0; k < calls; k++) {
    const name = r.pick(TOOLS);
    const args = { order_id: r.chance(0.8) ? 'A1024' : 'B7' };
    agent.llm({ toolCalls: [{ name, id: `c${k}`, args }] });
    const tool = agent.tool(name, { id: `c${k}`, args, result: { ok: true } });
    if (r.chance(0.1)) tool.error('boom');
  }
  return t.toOtlp().resourceSpans[0]!.scopeSpans[0]!.spans;
}

/** Lines the reader parses itself (none is taken by the shard scan): never a record. */
const GARBAGE = [
  'not json at all',
  '{}',
  '[1,2,3]',
  'null',
  '{"resourceSpans":"no"}',
  '   ',
  '\t',
  '{"a":1}',
];

interface Case {
  text: string;
  window: number;
  jobs: number;
  gate: boolean;
  what: string[];
}

/**
 * A random input: random traces laid out as runs per line or batches mixing traces, some
 * spans moved far away, lines repeated, garbage and empty lines, CRLF, a BOM, very long lines,
 * upper-case ids, a space after the key, `trace_id` keys, escaped keys, links to other traces.
 */
function randomCase(seed: number): Case {
  const r = random(seed);
  const what: string[] = [];
  const ids = Array.from({ length: 2 + r.int(25) }, () => `${hex(r, 24)}${hex(r, 8)}`);
  const traces = ids.map((id) => randomTrace(r, id));
  for (const spans of traces) {
    if (r.chance(0.15)) {
      spans[r.int(spans.length)]!.links = [
        { traceId: r.pick(ids), spanId: '0000000000000001', attributes: [] },
      ];
      what.push('links');
    }
  }
  let groups: Span[][] = [];
  const layout = r.int(3);
  if (layout === 0) {
    what.push('a run per line');
    groups = traces.map((s) => [...s]);
  } else {
    const perLine = 1 + r.int(10);
    const mixing = 2 + r.int(6);
    what.push(`batches of ${perLine} spans, ${mixing} traces interleaved`);
    const queues = traces.map((s) => [...s]);
    let line: Span[] = [];
    for (let start = 0; start < queues.length; start += mixing) {
      const open = queues.slice(start, start + mixing);
      while (open.some((q) => q.length > 0)) {
        const q = r.pick(open.filter((x) => x.length > 0));
        line.push(q.shift()!);
        if (line.length === perLine) {
          groups.push(line);
          line = [];
        }
      }
    }
    if (line.length > 0) groups.push(line);
  }
  if (layout === 2 && groups.length > 2) {
    // Some lines moved to the end: their traces come back later, far from the rest.
    what.push('lines moved far away');
    const moved = groups.filter(() => r.chance(0.2));
    groups = [...groups.filter((g) => !moved.includes(g)), ...moved];
  }
  const long = r.chance(0.2);
  if (long) what.push('very long lines');
  let lines = groups.map((spans) => {
    if (long && r.chance(0.3)) {
      const s = spans[0]!;
      s.attributes = [
        ...(s.attributes as unknown[]),
        { key: 'blob', value: { stringValue: 'x'.repeat(70_000 + r.int(200_000)) } },
      ];
    }
    return JSON.stringify(request(spans));
  });
  const mangle = (p: number, label: string, f: (line: string) => string) => {
    if (!r.chance(p)) return;
    what.push(label);
    lines = lines.map((l) => (r.chance(0.3) ? f(l) : l));
  };
  mangle(0.2, 'upper-case ids', (l) =>
    l.replace(/"traceId":"([0-9a-f]{32})"/g, (_, id: string) => `"traceId":"${id.toUpperCase()}"`),
  );
  mangle(0.2, 'a space after the key', (l) => l.replace(/"traceId":"/, '"traceId": "'));
  mangle(0.2, 'trace_id keys', (l) => l.replace(/"traceId":/, '"trace_id":'));
  mangle(0.2, 'escaped keys', (l) => l.replace(/"traceId":/, '"trace\\u0049d":'));
  if (r.chance(0.3)) {
    what.push('lines repeated');
    lines = lines.flatMap((l) => (r.chance(0.15) ? [l, l] : [l]));
  }
  if (r.chance(0.4)) {
    what.push('garbage and empty lines');
    lines = lines.flatMap((l) => (r.chance(0.15) ? [r.pick(GARBAGE), l] : r.chance(0.1) ? ['', l] : [l]));
  }
  if (r.chance(0.1)) {
    // A first line that looks like a record but does not parse (a truncated one, say).
    what.push('a broken first line');
    lines.unshift(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"${ids[0]}",}]}]}]}`);
  }
  const eol = r.chance(0.2) ? '\r\n' : '\n';
  if (eol === '\r\n') what.push('CRLF');
  const bom = r.chance(0.15) ? '\ufeff' : '';
  if (bom) what.push('a BOM');
  const text = `${bom}${lines.join(eol)}${r.chance(0.8) ? eol : ''}`;
  return { text, window: 1 + r.int(50), jobs: 2 + r.int(4), gate: r.chance(0.5), what };
}

let dir: string;
const sameWithJobs = (args: string[], jobs: number[], stdin?: () => Readable) =>
  compareWithJobs(args, jobs, dir, stdin);
let policy: string;
const file = (name: string) => join(dir, name);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwatch-jobs-hostile-'));
  policy = file('policy.yaml');
  await writeFile(policy, POLICY);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Two trace ids, the first owned by worker 1 and the second by the main thread, for 2 threads. */
function idsOnTwoThreads(): [string, string] {
  const owners = ownersFor(2);
  let a = 1;
  while (shardOf(a.toString(16).padStart(32, '0'), owners) !== 1) a++;
  let b = 1;
  while (shardOf(b.toString(16).padStart(32, '0'), owners) !== 0) b++;
  return [a.toString(16).padStart(32, '0'), b.toString(16).padStart(32, '0')];
}

const traceIdOf = (i: number) => (Math.imul(i + 1, 2654435761) >>> 0).toString(16).padStart(32, '0');

function goodRun(id: string): Span[] {
  const t = new TraceBuilder({ traceId: id });
  const a = t.agent('refund-agent');
  ['get_order_detail', 'check_refund_policy'].forEach((name, k) => {
    a.llm({ toolCalls: [{ name, id: `c${k}`, args: { order_id: 'A1024' } }] });
    a.tool(name, { id: `c${k}`, args: { order_id: 'A1024' }, result: { ok: true } });
  });
  return t.toOtlp().resourceSpans[0]!.scopeSpans[0]!.spans;
}

describe('score --jobs, attacked: one thread = N threads', () => {
  it('a line mixing traces where one span names its trace as `trace_id` or with an escaped key', async () => {
    // Found by this attack: the shard scan read only `"traceId":"…"`, so B's root span, keyed
    // another way the decoder accepts, went with A's line to A's thread and was judged apart
    // from the rest of B (a false "expected tool … was not called" for B).
    const [a, b] = idsOnTwoThreads();
    const verdicts: string[][] = [];
    for (const key of ['"trace_id":', '"trace\\u0049d":', '"\\u0074race_id":']) {
      const spansB = goodRun(b);
      const rootB = JSON.stringify(spansB.shift()).replace('"traceId":', key);
      const first = JSON.stringify(request(goodRun(a))).replace(/\]\}\]\}\]\}$/, `,${rootB}]}]}]}`);
      const name = file(`keys-${verdicts.length}.jsonl`);
      // Not the first line (that one the reader parses itself).
      const other = JSON.stringify(request(goodRun(traceIdOf(9))));
      await writeFile(name, `${other}\n${first}\n${JSON.stringify(request(spansB))}\n`);
      const one = await sameWithJobs([name, '--policy', policy, '--gate'], [2]);
      expect(summary(one.stderr)).toBe(
        'toolwatch score: 3 runs scored, 3 verdicts, 3 passed, 1 files, 0 unreadable records',
      );
      verdicts.push(lines(one.stdout));
    }
    expect(verdicts[1]).toEqual(verdicts[0]);
  });

  it('a first line that looks like a record but does not parse is a document begun, as with one thread', async () => {
    // Found by this attack: the first line was taken by the shard scan and reported as
    // "not JSON"; one thread takes it for the start of a pretty-printed document and reports
    // it, with the lines held after it, as "a truncated record?". (Now nothing is taken from
    // a file before the reader has parsed one of its records.)
    const [a, b] = idsOnTwoThreads();
    const broken = `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"${a}",}]}]}]}`;
    for (const before of ['', '\ufeff', '\n\n']) {
      const name = file('broken-first.jsonl');
      await writeFile(name, `${before}${broken}\n${JSON.stringify(request(goodRun(b)))}\n`);
      const one = await sameWithJobs([name, '--policy', policy], [2, 3]);
      expect(one.stderr).toContain('unreadable line (a truncated record?)');
    }
  });

  it('a file whose first 1,000 lines are unreadable is not read on, as with one thread', async () => {
    // Found by this attack: lines the shard scan takes count as read, so with --jobs the
    // reader never gave up on a file of 1,200 broken records (each reported, the records after
    // them judged); one thread stops after 1,000 ("not OTLP/JSON") and judges nothing.
    const broken = Array.from(
      { length: 1_200 },
      (_, i) => `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"${traceIdOf(i)}",}]}]}]}`,
    );
    const good = Array.from({ length: 5 }, (_, i) => JSON.stringify(request(goodRun(traceIdOf(5_000 + i)))));
    const name = file('leading-unreadable.jsonl');
    await writeFile(name, `${['not json', ...broken, ...good].join('\n')}\n`);
    const one = await sameWithJobs([name, '--policy', policy, '--gate'], [2]);
    expect(one.stderr).toContain('not OTLP/JSON: the first 1000 lines are unreadable');
    expect(one.stdout).toBe('');
    expect(one.code).not.toBe(0);
  });

  it('a record the reader parses between two lines taken by the scan is counted between them by the window', async () => {
    // Found by this attack: lines taken by the shard scan were numbered as they were read, the
    // reader's own records (here: upper-case ids) only when its batch was handed over, so B
    // came after A's second line. With --window 1 one thread closes A at B and reports A's
    // second line as reappeared; N threads judged A whole.
    const [a, b] = idsOnTwoThreads();
    const spansA = goodRun(a);
    const name = file('order.jsonl');
    await writeFile(
      name,
      [
        JSON.stringify(request(goodRun(traceIdOf(7)))),
        JSON.stringify(request(spansA.slice(0, 2))),
        JSON.stringify(request(goodRun(b))).replaceAll(b, `ABCDEF12${b.slice(8)}`),
        JSON.stringify(request(spansA.slice(2))),
        '',
      ].join('\n'),
    );
    const one = await sameWithJobs([name, '--policy', policy, '--window', '1'], [2, 3]);
    expect(one.stderr).toContain(`order.jsonl:4: trace ${a} reappeared after its window closed`);
  });

  it('a run of unreadable lines, one of them a broken request naming a worker’s trace, is one problem', async () => {
    // Found by an attack: consecutive unreadable lines are one problem with one thread
    // ("bad-run.jsonl:21-23: 3 unreadable lines (first: …)"), but a line the shard scan took
    // (it starts with `{`, ends with `}` and names a trace id) was parsed and reported by a
    // worker on its own, and cut the reader's run of bad lines in two: three problems.
    const [a, b] = idsOnTwoThreads();
    const name = file('bad-run.jsonl');
    const good = JSON.stringify(request(goodRun(b)));
    // After the reader's first batch of records (16), from which nothing is taken.
    const first = Array.from({ length: 20 }, (_, i) => JSON.stringify(request(goodRun(traceIdOf(300 + i)))));
    await writeFile(name, `${first.join('\n')}\nxx\n{"resourceSpans":[{"traceId":"${a}"},]}\nyy\n${good}\n`);
    const one = await sameWithJobs([name, '--policy', policy], [2]);
    expect(one.stderr).toMatch(/bad-run\.jsonl:21-23: 3 unreadable lines \(first: not JSON/);
  });

  it('a file of other JSON after a record (a span per line) is one problem, not one per line', async () => {
    // At scale the same cut gave 1,500 problems (20 shown) for 1,500 such lines: each was taken
    // by the scan, as it names a trace id, and reported by the thread it went to.
    const [a, b] = idsOnTwoThreads();
    const name = file('spans-per-line.jsonl');
    const first = Array.from({ length: 20 }, (_, i) => JSON.stringify(request(goodRun(traceIdOf(400 + i)))));
    const flat = Array.from({ length: 1_500 }, (_, i) =>
      JSON.stringify({
        traceId: i % 2 === 0 ? a : b,
        spanId: (i + 1).toString(16).padStart(16, '0'),
        name: 'x',
      }),
    );
    await writeFile(name, `${[...first, ...flat].join('\n')}\n`);
    const one = await sameWithJobs([name, '--policy', policy], [2, 3]);
    expect(one.stderr).toContain('spans-per-line.jsonl:21-1520: 1500 unreadable lines (first: not an OTLP');
    expect(one.stderr.split('\n').filter((line) => line.includes('spans-per-line.jsonl:'))).toHaveLength(1);
  });

  it('a seeded random differential: 36 random inputs, windows and thread counts', async () => {
    const seen = new Set<string>();
    for (let seed = 1; seed <= 36; seed++) {
      const c = randomCase(seed);
      for (const w of c.what) seen.add(w);
      const name = file(`random-${seed}.jsonl`);
      await writeFile(name, c.text);
      const args = [name, '--policy', policy, '--window', String(c.window), ...(c.gate ? ['--gate'] : [])];
      const one = await score(args);
      const many = await score([...args, '--jobs', String(c.jobs)]);
      expect({ seed, jobs: c.jobs, what: c.what, ...comparable(many, dir) }).toEqual({
        seed,
        jobs: c.jobs,
        what: c.what,
        ...comparable(one, dir),
      });
    }
    // Every shape was drawn at least once.
    for (const w of [
      'a run per line',
      'lines moved far away',
      'very long lines',
      'upper-case ids',
      'a space after the key',
      'trace_id keys',
      'escaped keys',
      'lines repeated',
      'garbage and empty lines',
      'a broken first line',
      'CRLF',
      'a BOM',
      'links',
    ])
      expect(seen).toContain(w);
  }, 240_000);

  // 32 threads start 31 workers, each loading the CLI under tsx (about 1 s each on 2 cores).
  it('hostile shapes: 32 threads on one run, more threads than traces, nothing to judge under --gate', async () => {
    const tiny = file('tiny.jsonl');
    await writeFile(tiny, `${JSON.stringify(request(goodRun(traceIdOf(1))))}\n`);
    const one = await sameWithJobs([tiny, '--policy', policy, '--gate'], [32]);
    expect(summary(one.stderr)).toBe(
      'toolwatch score: 1 runs scored, 1 verdicts, 1 passed, 1 files, 0 unreadable records',
    );
    expect(one.code).toBe(0);

    const few = file('few.jsonl');
    await writeFile(
      few,
      `${[2, 3, 4].map((i) => JSON.stringify(request(goodRun(traceIdOf(i))))).join('\n')}\n`,
    );
    expect(lines((await sameWithJobs([few, '--policy', policy], [8])).stdout)).toHaveLength(3);

    // Nothing judged is never green: the gate fails with N threads as with one.
    const empty = file('empty.jsonl');
    await writeFile(empty, '');
    const garbage = file('garbage.jsonl');
    await writeFile(garbage, `${['not json', '{}', '[]', '{"traceId":1}', 'null'].join('\n')}\n`);
    for (const input of [empty, garbage]) {
      const r = await sameWithJobs([input, '--policy', policy, '--gate'], [4]);
      expect(r.code).not.toBe(0);
      expect(r.stdout).toBe('');
    }
  }, 180_000);

  it('stdin that ends mid-line, and a gzip file cut in the middle', async () => {
    const text = Array.from({ length: 40 }, (_, i) =>
      JSON.stringify(request(goodRun(traceIdOf(100 + i)))),
    ).join('\n');
    // 100 characters into a line: the last record is cut short.
    const cut = text.slice(0, text.indexOf('\n', Math.floor(text.length * 0.6)) + 100);
    const piped = await sameWithJobs(['-', '--policy', policy], [2, 3], () =>
      Readable.from([Buffer.from(cut)]),
    );
    expect(piped.stderr).toMatch(/-:\d+: (not JSON|unreadable)/);
    // Its last line whole but with no line break: read at the end, after the last chunk.
    const whole = await sameWithJobs(['-', '--policy', policy], [2, 3], () =>
      Readable.from([Buffer.from(text)]),
    );
    expect(lines(whole.stdout)).toHaveLength(40);
    const gz = gzipSync(`${text}\n`);
    const truncated = file('cut.jsonl.gz');
    await writeFile(truncated, gz.subarray(0, Math.floor(gz.length / 2)));
    const one = await sameWithJobs([truncated, '--policy', policy, '--gate'], [2, 4]);
    expect(one.stderr).toContain('gzip data is corrupt or truncated');
    expect(one.code).not.toBe(0);
  }, 60_000);

  it("a Collector batch naming 10,000 traces in one line: every thread's share, judged the same", async () => {
    const spans: Span[] = [];
    for (let i = 0; i < 10_000; i++)
      spans.push(...goodRun(traceIdOf(20_000 + i)).slice(0, i % 7 === 0 ? 5 : 1));
    const name = file('collector-batch.jsonl');
    const good = JSON.stringify(request(goodRun(traceIdOf(1))));
    await writeFile(name, `${good}\n${JSON.stringify(request(spans))}\n${good}\n`);
    const one = await sameWithJobs([name, '--policy', policy], [4]);
    expect(lines(one.stdout)).toHaveLength(10_001);
  }, 120_000);
});
