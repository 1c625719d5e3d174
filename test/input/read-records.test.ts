import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type InputProblem,
  isTraceRecord,
  readInput,
  readRecords,
  type TraceRecord,
} from '../../src/input/read-records.js';
import { TraceBuilder } from '../helpers/trace-builder.js';

let dir: string;

function request(traceId: string) {
  const t = new TraceBuilder({ traceId });
  t.agent('refund-agent').tool('get_order_detail', { args: { order_id: 'A1024' } });
  return t.toOtlp();
}

const ids = (n: number) => Array.from({ length: n }, (_, i) => (i + 1).toString(16).padStart(32, '0'));
const jsonl = (n: number) =>
  `${ids(n)
    .map((id) => JSON.stringify(request(id)))
    .join('\n')}\n`;

async function read(
  name: string,
  content: string | Uint8Array,
  options: { stdin?: Readable; maxLeadingUnreadable?: number } = {},
): Promise<{ records: TraceRecord[]; problems: InputProblem[] }> {
  const path = name === '-' ? '-' : join(dir, name);
  if (name !== '-') await writeFile(path, content);
  const problems: InputProblem[] = [];
  const records: TraceRecord[] = [];
  for await (const r of readRecords(path, { onProblem: (p) => problems.push(p), ...options }))
    records.push(r);
  return { records, problems };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwatch-input-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('readRecords', () => {
  it('reads JSON Lines line by line, with 1-based line numbers, CRLF and blank lines too', async () => {
    const text = jsonl(3).replace(/\n/g, '\r\n').replace('\r\n', '\r\n\r\n');
    const { records, problems } = await read('a.jsonl', text);
    expect(problems).toEqual([]);
    expect(records.map((r) => r.line)).toEqual([1, 3, 4]);
    expect(records[2]!.value).toEqual(request(ids(3)[2]!));
  });

  it('reads gzip by magic bytes whatever the name, and by a .gz name', async () => {
    const zipped = gzipSync(jsonl(5));
    const [named, unnamed] = await Promise.all([read('t.jsonl.gz', zipped), read('t.data', zipped)]);
    expect(named.records).toHaveLength(5);
    expect(unnamed.records).toHaveLength(5);
    expect(named.problems).toEqual([]);
  });

  it('reports a truncated gzip file once, keeping the records read before the cut', async () => {
    const zipped = gzipSync(jsonl(200));
    const { records, problems } = await read(
      'cut.jsonl.gz',
      zipped.subarray(0, Math.floor(zipped.length * 0.6)),
    );
    expect(records.length).toBeGreaterThan(10);
    expect(records.length).toBeLessThan(200);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.message).toMatch(/^gzip data is corrupt or truncated/);
  });

  it('reads a single pretty-printed document and a JSON array of requests', async () => {
    const [doc, array] = await Promise.all([
      read('doc.json', JSON.stringify(request(ids(1)[0]!), null, 2)),
      read('array.json', JSON.stringify([request(ids(2)[0]!), request(ids(2)[1]!)], null, 2)),
    ]);
    expect(doc.problems).toEqual([]);
    expect(doc.records).toHaveLength(1);
    expect(doc.records[0]!.value).toEqual(request(ids(1)[0]!));
    expect(array.records).toHaveLength(2);
  });

  it('reads OTLP/protobuf (.pb, .binpb.gz) as one record', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    provider.getTracer('t').startSpan('invoke_agent a').end();
    const bytes = ProtobufTraceSerializer.serializeRequest(exporter.getFinishedSpans())!;
    await provider.shutdown();
    const [pb, gz] = await Promise.all([read('t.pb', bytes), read('t.binpb.gz', gzipSync(bytes))]);
    expect(pb.records).toHaveLength(1);
    expect(gz.records).toEqual([{ ...pb.records[0]!, file: join(dir, 't.binpb.gz') }]);
  });

  it('reads stdin for -', async () => {
    const { records } = await read('-', '', { stdin: Readable.from([Buffer.from(jsonl(2))]) });
    expect(records.map((r) => [r.file, r.line])).toEqual([
      ['-', 1],
      ['-', 2],
    ]);
  });

  it('a truncated pretty-printed document is one problem, not one per line', async () => {
    const text = JSON.stringify(request(ids(1)[0]!), null, 2);
    const { records, problems } = await read('trunc.json', text.slice(0, Math.floor(text.length / 2)));
    expect(records).toEqual([]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ line: 1, records: 1 });
    expect(problems[0]!.message).toMatch(/^not a complete JSON document \(.*truncated\?\)$/);
  });

  it('a text file is one problem, with control bytes escaped and long text cut', async () => {
    const hostile = `\u001b[2J\u001b[31mred ${'x'.repeat(5000)}\n`.repeat(50);
    const { records, problems } = await read('text.log', hostile);
    expect(records).toEqual([]);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.message).toMatch(/^not OTLP\/JSON: no line could be read \(50 unreadable; line 1: /);
    expect(problems[0]!.message).not.toContain('\u001b');
    expect(problems[0]!.message).toContain('\\x1b[2J');
    expect(problems[0]!.message.length).toBeLessThan(400);
    expect(problems[0]!.records).toBe(50);
  });

  it('stops reading a file whose first lines are all unreadable', async () => {
    const { problems } = await read('junk.txt', 'junk\n'.repeat(5000), { maxLeadingUnreadable: 100 });
    expect(problems).toHaveLength(1);
    expect(problems[0]!.message).toMatch(
      /^not OTLP\/JSON: the first 100 lines are unreadable .*stopped reading$/,
    );
  });

  it('binary data is one problem naming the offset', async () => {
    const { records, problems } = await read(
      'image.png',
      new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]),
    );
    expect(records).toEqual([]);
    expect(problems).toEqual([
      {
        file: join(dir, 'image.png'),
        offset: 6,
        message: expect.stringMatching(/^binary data, not OTLP\/JSON \(byte 0x1a at offset 6\)/),
        records: 1,
      },
    ]);
  });

  it('an empty file and {} are reported; {} counts as unreadable', async () => {
    const [empty, obj] = await Promise.all([read('empty.json', ''), read('obj.json', '{}\n')]);
    expect(empty.problems).toEqual([
      { file: join(dir, 'empty.json'), message: 'empty file, no records', records: 0 },
    ]);
    expect(obj.problems).toHaveLength(1);
    expect(obj.problems[0]).toMatchObject({ line: 1, records: 1 });
    expect(obj.problems[0]!.message).toContain('not an OTLP ExportTraceServiceRequest (an empty object)');
  });

  it('coalesces a run of bad lines between good ones into one problem with its line range', async () => {
    const good = jsonl(2).split('\n');
    const text = [good[0], 'oops', '{"a":1}', '[1,2]', good[1], '{"resourceSpans": ['].join('\n');
    const wrong = await read('wrong.jsonl', `${good[0]}\n{"resourceSpans": "nope"}\n`);
    expect(wrong.problems.map((p) => p.message)).toEqual([
      'not an OTLP ExportTraceServiceRequest (resourceSpans is string, not a list)',
    ]);
    const { records, problems } = await read('mixed.jsonl', text);
    expect(records.map((r) => r.line)).toEqual([1, 5]);
    expect(problems.map((p) => [p.line, p.toLine, p.records])).toEqual([
      [2, 4, 3],
      [6, undefined, 1],
    ]);
    expect(problems[0]!.message).toMatch(/^3 unreadable lines \(first: not JSON: /);
  });

  it('a line longer than maxDocumentBytes is one problem, and the lines after it are still read', async () => {
    const path = join(dir, 'long.jsonl');
    await writeFile(path, `${jsonl(1)}{"resourceSpans": ["${'x'.repeat(3 * 1024 * 1024)}"]}\n${jsonl(2)}`);
    const problems: InputProblem[] = [];
    const records: TraceRecord[] = [];
    for await (const r of readRecords(path, {
      onProblem: (p) => problems.push(p),
      maxDocumentBytes: 1024 * 1024,
    })) {
      records.push(r);
    }
    expect(records.map((r) => r.line)).toEqual([1, 3, 4]);
    expect(problems).toEqual([{ file: path, line: 2, message: 'line longer than 1 MiB', records: 1 }]);
  });

  it('a JSON Lines file whose first line is cut is still read from its second line on', async () => {
    const lines = jsonl(3).split('\n');
    const text = [lines[0]!.slice(0, 40), lines[1], lines[2]].join('\n');
    const { records, problems } = await read('firstcut.jsonl', text);
    expect(records.map((r) => r.line)).toEqual([2, 3]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ line: 1, records: 1 });
  });
  it('decodes lines split anywhere between chunks, inside a multi-byte character too', async () => {
    const t = new TraceBuilder({ traceId: ids(1)[0]! });
    t.agent('agent-é').tool('lookup', { args: { city: 'Zürich 東京 🚀' } });
    const line = JSON.stringify(t.toOtlp());
    const bytes = Buffer.from(`${line}\r\n${line}\n\n${line}`);
    const rocket = bytes.indexOf(Buffer.from('🚀'));
    // Cuts inside the 4-byte rocket, one byte after a line's end, and a line over three chunks.
    const cuts = [
      0,
      rocket + 1,
      rocket + 3,
      line.length + 1,
      line.length + 3,
      bytes.length - 10,
      bytes.length,
    ];
    const chunks = cuts.slice(1).map((end, i) => bytes.subarray(cuts[i], end));
    const { records, problems } = await read('-', '', { stdin: Readable.from(chunks) });
    expect(problems).toEqual([]);
    expect(records.map((r) => r.line)).toEqual([1, 2, 4]);
    for (const r of records) expect(r.value).toEqual(JSON.parse(line));
  });

  it('readInput gives records and problems in input order, a read chunk at a time', async () => {
    const good = jsonl(3).split('\n');
    const text = [good[0], 'oops', good[1], '{}', good[2]].join('\n');
    const order: string[] = [];
    await writeFile(join(dir, 'order.jsonl'), text);
    for await (const batch of readInput(join(dir, 'order.jsonl'), {})) {
      for (const item of batch)
        order.push(isTraceRecord(item) ? `record ${item.line}` : `problem ${item.line}`);
    }
    expect(order).toEqual(['record 1', 'problem 2', 'record 3', 'problem 4', 'record 5']);
  });
});

describe('readInput: lines offered to claim (what `score --jobs` hands to workers undecoded)', () => {
  it('offers request lines, but neither other JSON nor the line after an unreadable one', async () => {
    const [a, b, c, d, e] = ids(5).map((id) => JSON.stringify(request(id)));
    const span = JSON.stringify({ traceId: ids(1)[0], spanId: '1'.repeat(16), name: 'x' });
    const name = join(dir, 'claims.jsonl');
    // 1 a, 2 b, 3 span, 4 c, 5 d, 6 "xx", 7 e
    await writeFile(name, `${a}\n${b}\n${span}\n${c}\n${d}\nxx\n${e}\n`);
    const offered: number[] = [];
    const parsed: number[] = [];
    for await (const batch of readInput(name, {
      claim: (_text, _file, line) => {
        offered.push(line);
        return true;
      },
      claimBytes: (_chunk, _start, _end, _file, line) => {
        offered.push(line);
        return true;
      },
    })) {
      for (const item of batch) if (isTraceRecord(item)) parsed.push(item.line);
    }
    // The span line is parsed here (unreadable); c and e, each right after an unreadable line,
    // are parsed here too, and end the run of unreadable lines.
    expect(offered).toEqual([1, 2, 5]);
    expect(parsed).toEqual([4, 7]);
  });
});
