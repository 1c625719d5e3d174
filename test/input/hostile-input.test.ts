import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { type InputItem, type InputProblem, isTraceRecord, readInput } from '../../src/input/read-records.js';
import { TraceBuilder } from '../helpers/trace-builder.js';

const MiB = 1024 * 1024;

async function readAll(
  source: Iterable<Buffer> | AsyncIterable<Buffer>,
  options: { maxDocumentBytes?: number } = {},
): Promise<{ lines: number[]; problems: InputProblem[] }> {
  const items: InputItem[] = [];
  for await (const batch of readInput('-', { stdin: Readable.from(source), ...options }))
    items.push(...batch);
  return {
    lines: items.filter(isTraceRecord).map((r) => r.line),
    problems: items.filter((i): i is InputProblem => !isTraceRecord(i)),
  };
}

describe('readInput, hostile input', () => {
  it('holds a document whose line never ends only up to maxDocumentBytes, then stops reading', async () => {
    let pulled = 0;
    function* endless() {
      yield Buffer.from('{\n"resourceSpans": [\n');
      for (let i = 0; i < 1024; i++) {
        pulled += 64 * 1024;
        yield Buffer.alloc(64 * 1024, 0x61);
      }
    }
    const { lines, problems } = await readAll(endless(), { maxDocumentBytes: MiB });
    expect(lines).toEqual([]);
    expect(problems).toEqual([
      {
        file: '-',
        line: 1,
        message: 'a single JSON document larger than 1 MiB; write JSON Lines (one request per line) instead',
        records: 1,
      },
    ]);
    // Before: all 64 MiB were pulled and held before the document was refused.
    expect(pulled).toBeLessThanOrEqual(MiB + 2 * 64 * 1024);
  });
});

function request(n: number) {
  const t = new TraceBuilder({ traceId: n.toString(16).padStart(32, '0') });
  t.agent('refund-agent').tool('get_order_detail', { args: { order_id: 'A1024' } });
  return t.toOtlp();
}

describe('readInput, what Windows tools write', () => {
  it('skips a UTF-8 byte-order mark before JSON Lines and before a pretty-printed document', async () => {
    const lines = `\uFEFF${JSON.stringify(request(1))}\r\n${JSON.stringify(request(2))}\r\n`;
    expect(await readAll([Buffer.from(lines)])).toEqual({ lines: [1, 2], problems: [] });
    const doc = `\uFEFF${JSON.stringify(request(1), null, 2)}\n`;
    expect(await readAll([Buffer.from(doc)])).toEqual({ lines: [1], problems: [] });
  });
});

describe('readInput, a JSON array of requests', () => {
  it('reads an array written one request per line, as a document, not as JSON Lines after a cut line', async () => {
    const [a, b, c] = [1, 2, 3].map((n) => JSON.stringify(request(n)));
    expect(await readAll([Buffer.from(`[\n${a},\n${b},\n${c}\n]\n`)])).toEqual({
      lines: [1, 1, 1],
      problems: [],
    });
    expect(await readAll([Buffer.from(`[${a},\n${b}\n]\n`)])).toEqual({ lines: [1, 1], problems: [] });
  });

  it('still reads JSON Lines after a first line that is a cut array of requests', async () => {
    const [a, b] = [1, 2].map((n) => JSON.stringify(request(n)));
    const { lines, problems } = await readAll([Buffer.from(`[${a.slice(0, 40)}\n${a}\n${b}\n`)]);
    expect(lines).toEqual([2, 3]);
    expect(problems.map((p) => [p.line, p.message])).toEqual([[1, 'unreadable line (a truncated record?)']]);
  });
});

describe('readInput, NUL bytes', () => {
  it('keeps the good lines of a JSON Lines file whose end a crash padded with NULs', async () => {
    const text = `${JSON.stringify(request(1))}\n${JSON.stringify(request(2))}\n`;
    const { lines, problems } = await readAll([Buffer.concat([Buffer.from(text), Buffer.alloc(3000)])]);
    // Before: the whole file was "binary data" and both records were lost.
    expect(lines).toEqual([1, 2]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ line: 3, records: 1 });
    expect(problems[0]!.message).toMatch(/^not JSON: /);
    expect(problems[0]!.message).not.toMatch(/\u0000/);
  });

  it('still refuses binary data whole, OTLP/protobuf (which starts with a newline byte) included', async () => {
    const protobuf = Buffer.from([0x0a, 0x85, 0x01, 0x12, 0x82, 0x01, 0x0a, 0x00, 0x12, 0x7e, 0x0a, 0x10]);
    for (const data of [protobuf, Buffer.from([0x00, 0x01, 0x02, 0x7b])]) {
      const { lines, problems } = await readAll([data]);
      expect(lines).toEqual([]);
      expect(problems).toHaveLength(1);
      expect(problems[0]!.message).toMatch(/^binary data, not OTLP\/JSON/);
    }
  });
});
