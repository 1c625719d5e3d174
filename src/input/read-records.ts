import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { printable } from './printable.js';

/** One OTLP request read from an input: `line` is 1-based (0 for a whole binary file). */
export interface TraceRecord {
  file: string;
  line: number;
  value: unknown;
}

/** Something that could not be read; `records` is how many records it cost (0 for a warning). */
export interface InputProblem {
  file: string;
  /** First line concerned (1-based), when the input is text. */
  line?: number;
  /** Last line, when the problem covers a run of lines. */
  toLine?: number;
  /** Byte offset in the (decompressed) input, when that is more useful than a line. */
  offset?: number;
  message: string;
  records: number;
}

export interface ReadRecordsOptions {
  onProblem: (problem: InputProblem) => void;
  /** Called with the count of raw bytes read (compressed bytes for gzip), for progress. */
  onBytes?: (bytes: number) => void;
  /** The stream read for `-`. The CLI passes `process.stdin`. */
  stdin?: Readable;
  /**
   * Largest single JSON document or protobuf file held whole. JSON Lines are read line by
   * line; a longer line is skipped to its end without being held, and reported. Default 256 MiB.
   */
  maxDocumentBytes?: number;
  /** Leading lines that may all be unreadable before a file is declared not OTLP/JSON. Default 1000. */
  maxLeadingUnreadable?: number;
  /**
   * Offered each JSON Lines line that looks like one request (starts with `{"resourceSpans":`,
   * ends with `}`) before it is parsed; returning true takes it: it is counted as read and not
   * parsed here (`toolwatch score --jobs` parses it in a worker, which reports it if it is
   * unreadable). A line right after an unreadable one is not offered: parsed here, it ends the
   * run of unreadable lines or joins it, so the run stays one problem as with one thread.
   * Default: none (every line is parsed here).
   */
  claim?: (text: string, file: string, line: number) => boolean;
  /**
   * The same offer for a line still in the read chunk, as its bytes `chunk[start, end)`
   * (without the line break): taken this way, the line is never decoded here. Lines that span
   * two chunks, and the first line of a file, are offered to `claim` as text. Default: none.
   */
  claimBytes?: (chunk: Buffer, start: number, end: number, file: string, line: number) => boolean;
}

const MiB = 1024 * 1024;
/**
 * How an OTLP/JSON request line starts as the Collector's file exporter (and `JSON.stringify`
 * of a request) writes it. Only such lines are offered to `claim`: other JSON (a span per
 * line, a log record) is parsed here, so a file of it gives one problem for its run of
 * unreadable lines, not one per line from the thread each was handed to.
 */
const REQUEST_START = '{"resourceSpans":';
const REQUEST_START_BYTES = Buffer.from(REQUEST_START);
/** Records handed over per yield. */
const BATCH_RECORDS = 16;
const GZIP_MAGIC = [0x1f, 0x8b];

/** What reading yields, in input order: a record, or a problem (which has no `value`). */
export type InputItem = TraceRecord | InputProblem;

/** Whether an item from `readInput` is a record (problems have no `value`). */
export function isTraceRecord(item: InputItem): item is TraceRecord {
  return 'value' in item;
}

/**
 * Reads OTLP trace requests from one input as a stream: JSON Lines line by line (the
 * Collector file exporter's form), a single pretty-printed OTLP/JSON document, a JSON array
 * of requests, or OTLP/protobuf (`.pb`/`.binpb`); gzip-compressed when the data starts with
 * gzip's magic bytes (whatever the name) or the name ends in `.gz`; `-` is `stdin`.
 *
 * Bad input never throws and is reported once per problem with its file and line: a run of
 * consecutive unreadable lines is one problem; a file where nothing can be read (binary,
 * truncated document, plain text) is one problem; lines that parse but are not an
 * `ExportTraceServiceRequest` (`{}`) count as unreadable.
 */
export async function* readRecords(file: string, options: ReadRecordsOptions): AsyncGenerator<TraceRecord> {
  for await (const batch of readInput(file, options)) {
    for (const item of batch) {
      if (isTraceRecord(item)) yield item;
      else options.onProblem(item);
    }
  }
}

/**
 * `readRecords` a chunk at a time: each array holds the records and problems one read
 * chunk produced, in input order (`onProblem` is not called). One await per chunk rather
 * than per record is what keeps the reader off the profile.
 */
export async function* readInput(
  file: string,
  options: Omit<ReadRecordsOptions, 'onProblem'>,
): AsyncGenerator<InputItem[]> {
  const maxDocument = options.maxDocumentBytes ?? 256 * MiB;
  const sink = new Sink();
  const report = (p: InputProblem) => sink.items.push(p);
  let source: Readable;
  try {
    source =
      file === '-'
        ? (options.stdin ?? failNoStdin())
        : createReadStream(file, { highWaterMark: 1024 * 1024 });
  } catch (err) {
    report({ file, message: `cannot read: ${(err as Error).message}`, records: 1 });
    yield sink.take();
    return;
  }
  const chunks = countBytes(source, options.onBytes);
  let head: Buffer;
  try {
    head = await peek(chunks, 2);
  } catch (err) {
    source.destroy();
    report({ file, message: `cannot read: ${(err as Error).message}`, records: 1 });
    yield sink.take();
    return;
  }
  const gzipped = (head[0] === GZIP_MAGIC[0] && head[1] === GZIP_MAGIC[1]) || /\.gz$/i.test(file);
  const data: AsyncIterable<Buffer> = gzipped ? gunzip(chunks.rest(head)) : chunks.rest(head);
  const bare = file.replace(/\.gz$/i, '');
  try {
    if (/\.(bin)?pb$/i.test(bare)) await readProtobuf(file, data, maxDocument, sink);
    else yield* readJson(file, data, maxDocument, options.maxLeadingUnreadable ?? 1000, sink, options);
  } catch (err) {
    // Stream errors (a corrupt gzip member, an I/O error): what was read stays read.
    const what = gzipped ? 'gzip data is corrupt or truncated' : 'read failed';
    report({ file, message: `${what}: ${printable((err as Error).message)}`, records: 1 });
  } finally {
    source.destroy();
  }
  if (sink.items.length > 0) yield sink.take();
}

/** Records and problems gathered until the next yield. */
class Sink {
  items: InputItem[] = [];
  take(): InputItem[] {
    const items = this.items;
    this.items = [];
    return items;
  }
}

function failNoStdin(): never {
  throw new Error('no standard input');
}

async function readProtobuf(
  file: string,
  data: AsyncIterable<Buffer>,
  maxDocument: number,
  sink: Sink,
): Promise<void> {
  const report = (p: InputProblem) => sink.items.push(p);
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of data) {
    size += chunk.length;
    if (size > maxDocument) {
      report({
        file,
        message: `OTLP/protobuf file larger than ${maxDocument / MiB} MiB; split it`,
        records: 1,
      });
      return;
    }
    parts.push(chunk);
  }
  if (size === 0) {
    report({ file, message: 'empty file, no records', records: 0 });
    return;
  }
  // The protobuf decoder is loaded for protobuf files only: JSON input starts without it.
  const { otlpJsonFromProtobuf } = await import('../otlp/otlp-protobuf.js');
  let value: unknown;
  try {
    value = otlpJsonFromProtobuf(Buffer.concat(parts));
  } catch (err) {
    report({ file, message: `unreadable OTLP/protobuf (${printable((err as Error).message)})`, records: 1 });
    return;
  }
  sink.items.push({ file, line: 0, value });
}

/** A run of unreadable lines, reported as one problem when it ends. */
interface BadRun {
  from: number;
  to: number;
  count: number;
  first: string;
}

function readJson(
  file: string,
  data: AsyncIterable<Buffer>,
  maxDocument: number,
  maxLeadingUnreadable: number,
  sink: Sink,
  claims: Pick<ReadRecordsOptions, 'claim' | 'claimBytes'> = {},
): AsyncGenerator<InputItem[]> {
  return new JsonLinesReader(file, maxDocument, maxLeadingUnreadable, sink, claims).read(data);
}

/**
 * Reads OTLP/JSON: JSON Lines (one request, or an array of them, per line), or one
 * pretty-printed document, told apart by the first line. Runs of unreadable lines are
 * reported as one problem each; a file whose first lines are all unreadable is not read on.
 * The phases of a chunk are the methods `read` calls, in order.
 */
class JsonLinesReader {
  private _lineNo = 0;
  private _good = 0;
  private _sawText = false;
  private _checkedBinary = false;
  private _skipping = false;
  private _bad: BadRun | undefined;
  /**
   * The start of a line that continues into the next chunk: bytes, decoded once it is whole
   * (so a character split between chunks decodes right, and no chunk is copied into a string
   * only to be cut into lines).
   */
  private _carry: Buffer[] = [];
  private _carryBytes = 0;
  /** A first line that opens but does not close a JSON value: maybe a pretty-printed document. */
  private _doc: string[] | undefined;
  private _docSize = 0;
  private readonly _claim: ReadRecordsOptions['claim'];
  private readonly _claimBytes: ReadRecordsOptions['claimBytes'];

  constructor(
    private readonly _file: string,
    private readonly _maxDocument: number,
    private readonly _maxLeadingUnreadable: number,
    private readonly _sink: Sink,
    claims: Pick<ReadRecordsOptions, 'claim' | 'claimBytes'>,
  ) {
    this._claim = claims.claim;
    this._claimBytes = claims.claimBytes;
  }

  async *read(data: AsyncIterable<Buffer>): AsyncGenerator<InputItem[]> {
    const sink = this._sink;
    for await (const chunk of data) {
      if (!this._checkedBinary && this._binary(chunk)) return;
      let start = this._lineCarried(chunk);
      if (start === STOP) return;
      if (start === NEXT_CHUNK) continue;
      let nl = chunk.indexOf(0x0a, start);
      while (nl !== -1) {
        if (!this._offerBytes(chunk, start, nl) && !this._handle(chunk.toString('utf8', start, nl))) {
          this._stopEarly();
          return;
        }
        start = nl + 1;
        nl = chunk.indexOf(0x0a, start);
        // Parsed records handed over a few at a time, not a whole chunk's worth: they die young
        // (decoded, then dropped) instead of outliving a scavenge together.
        if (sink.items.length >= BATCH_RECORDS) yield sink.take();
      }
      if (!this._keepRest(chunk, start)) return;
      // With a claim, every chunk ends in a yield, empty or not: its reader hands the claimed
      // lines on (and waits for their takers) between chunks.
      if (sink.items.length > 0 || this._claim !== undefined || this._claimBytes !== undefined)
        yield sink.take();
    }
    if (
      this._carryBytes > 0 &&
      !this._handle(Buffer.concat(this._carry, this._carryBytes).toString('utf8'))
    ) {
      this._stopEarly();
      return;
    }
    this._end();
  }

  /** Whether the first chunk holds binary data (reported: it is not OTLP/JSON). */
  private _binary(chunk: Buffer): boolean {
    this._checkedBinary = true;
    const at = binaryOffset(chunk);
    if (at < 0) return false;
    this._report({
      file: this._file,
      offset: at,
      message: `binary data, not OTLP/JSON (byte 0x${chunk[at]!.toString(16).padStart(2, '0')} at offset ${at}); OTLP/protobuf files must be named .pb or .binpb`,
      records: 1,
    });
    return true;
  }

  /**
   * Ends the line carried over from the chunks before, if it ends in this one; returns where
   * this chunk's next line starts, STOP to stop reading the file, or NEXT_CHUNK when the
   * whole chunk belongs to a line being dropped.
   */
  private _lineCarried(chunk: Buffer): number {
    const nl = chunk.indexOf(0x0a);
    if (this._skipping) {
      // The rest of an over-long line: dropped up to its end, without holding it.
      if (nl === -1) return NEXT_CHUNK;
      this._skipping = false;
      return nl + 1;
    }
    if (this._carryBytes === 0 || nl === -1) return 0;
    if (this._carryBytes + nl > this._maxDocument) {
      // A line (or a document's line) that ends here past the bound: known from its size,
      // before its parts are joined and decoded (which held it three times over).
      this._carry = [];
      this._carryBytes = 0;
      if (this._doc) {
        this._docTooLarge(this._doc);
        return STOP;
      }
      this._noteBad(++this._lineNo, `line longer than ${this._maxDocument / MiB} MiB`);
      return nl + 1;
    }
    this._carry.push(chunk.subarray(0, nl));
    const line = Buffer.concat(this._carry, this._carryBytes + nl).toString('utf8');
    this._carry = [];
    this._carryBytes = 0;
    if (!this._handle(line)) {
      this._stopEarly();
      return STOP;
    }
    return nl + 1;
  }

  /** Keeps the chunk's unfinished last line, within the bounds; false to stop reading the file. */
  private _keepRest(chunk: Buffer, start: number): boolean {
    if (start < chunk.length) {
      this._carry.push(start === 0 ? chunk : chunk.subarray(start));
      this._carryBytes += chunk.length - start;
    }
    if (this._doc && this._docSize + this._carryBytes > this._maxDocument) {
      // A document's line that never ends is held only up to the document bound, as its
      // whole lines are.
      this._docTooLarge(this._doc);
      return false;
    }
    if (this._carryBytes > this._maxDocument && !this._doc) {
      this._noteBad(++this._lineNo, `line longer than ${this._maxDocument / MiB} MiB`);
      this._carry = [];
      this._carryBytes = 0;
      this._skipping = true;
    }
    return true;
  }

  /** One decoded line. Returns false to stop reading the file. */
  private _handle(line: string): boolean {
    this._lineNo++;
    let text = line.length > 0 && line.charCodeAt(line.length - 1) === 0x0d ? line.slice(0, -1) : line;
    // A byte-order mark (Windows editors, PowerShell) is not part of the first record.
    if (this._lineNo === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (this._doc) return this._documentLine(this._doc, text);
    if (text.length === 0) return true;
    const c0 = text.charCodeAt(0);
    if (c0 !== 0x7b && c0 !== 0x5b && text.trim() === '') return true;
    if (text.length > this._maxDocument) {
      this._noteBad(this._lineNo, `line longer than ${this._maxDocument / MiB} MiB`);
      return true;
    }
    if (
      this._claim !== undefined &&
      this._bad === undefined &&
      text.startsWith(REQUEST_START) &&
      text.charCodeAt(text.length - 1) === 0x7d &&
      this._claim(text, this._file, this._lineNo)
    ) {
      this._sawText = true;
      this._flushBad();
      this._good++;
      return true;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      const first = text.trimStart()[0];
      if (!this._sawText && this._good === 0 && !this._bad && (first === '{' || first === '[')) {
        this._doc = [text];
        this._docSize = Buffer.byteLength(text) + 1;
        this._sawText = true;
        return true;
      }
      this._sawText = true;
      this._noteBad(this._lineNo, `not JSON: ${printable((err as Error).message)}`);
      return !(this._good === 0 && this._bad !== undefined && this._bad.count >= this._maxLeadingUnreadable);
    }
    this._sawText = true;
    if (isRequestShaped(value)) {
      this._flushBad();
      this._good++;
      this._emit(this._lineNo, value);
    } else if (Array.isArray(value) && value.length > 0 && value.every(isRequestShaped)) {
      this._flushBad();
      this._good += value.length;
      for (const item of value) this._emit(this._lineNo, item);
    } else {
      this._noteBad(this._lineNo, `not an OTLP ExportTraceServiceRequest (${describeValue(value)})`);
    }
    return true;
  }

  /** A line inside a candidate document. Returns false to stop reading the file. */
  private _documentLine(doc: string[], text: string): boolean {
    // Inside a candidate document, a line that is a whole request means JSON Lines after all.
    const value = text.length > 0 && text[0] === '{' ? tryParse(text) : undefined;
    if (value !== undefined && isRequestShaped(value) && !insideArray(doc)) {
      const lines = doc.length;
      const lineNo = this._lineNo;
      this._doc = undefined;
      this._docSize = 0;
      this._report({
        file: this._file,
        line: lineNo - lines,
        ...(lines > 1 ? { toLine: lineNo - 1 } : {}),
        message:
          lines > 1
            ? `${lines} unreadable lines (a truncated record?)`
            : 'unreadable line (a truncated record?)',
        records: lines,
      });
      this._good++;
      this._emit(lineNo, value);
      return true;
    }
    doc.push(text);
    // Bytes, as the bound is stated (a character may take up to three).
    this._docSize += Buffer.byteLength(text) + 1;
    if (this._docSize > this._maxDocument) {
      this._docTooLarge(doc);
      this._doc = undefined;
      return false;
    }
    return true;
  }

  /**
   * A whole line in `chunk` that looks like one request, taken by `claimBytes` undecoded.
   * The first line is decoded (a byte-order mark, or the start of a document), and so is
   * every line while a document may be open.
   */
  private _offerBytes(chunk: Buffer, start: number, nl: number): boolean {
    const claimBytes = this._claimBytes;
    if (claimBytes === undefined || this._lineNo === 0 || this._doc !== undefined || this._bad !== undefined)
      return false;
    const end = nl > start && chunk[nl - 1] === 0x0d ? nl - 1 : nl;
    if (
      end - start <= REQUEST_START_BYTES.length ||
      end - start > this._maxDocument ||
      chunk[end - 1] !== 0x7d ||
      chunk.compare(
        REQUEST_START_BYTES,
        0,
        REQUEST_START_BYTES.length,
        start,
        start + REQUEST_START_BYTES.length,
      ) !== 0
    )
      return false;
    if (!claimBytes(chunk, start, end, this._file, this._lineNo + 1)) return false;
    this._lineNo++;
    this._sawText = true;
    this._flushBad();
    this._good++;
    return true;
  }

  /** At the end of the file: the document, if it was one, or what could not be read. */
  private _end(): void {
    const file = this._file;
    const doc = this._doc;
    if (doc) {
      this._endDocument(doc);
      return;
    }
    const bad = this._bad;
    if (this._good === 0 && bad) {
      this._report({
        file,
        line: bad.from,
        message: `not OTLP/JSON: no line could be read (${bad.count} unreadable; line ${bad.from}: ${bad.first})`,
        records: bad.count,
      });
      return;
    }
    this._flushBad();
    if (!this._sawText) this._report({ file, message: 'empty file, no records', records: 0 });
  }

  private _endDocument(doc: readonly string[]): void {
    const file = this._file;
    const first = this._lineNo - doc.length + 1;
    const whole = doc.join('\n');
    let value: unknown;
    try {
      value = JSON.parse(whole);
    } catch (err) {
      this._report({
        file,
        line: first,
        message: `not a complete JSON document (${printable((err as Error).message)}; ${whole.length} characters read — truncated?)`,
        records: 1,
      });
      return;
    }
    const items = Array.isArray(value) ? value : [value];
    if (items.length > 0 && items.every(isRequestShaped)) {
      for (const item of items) this._emit(first, item);
    } else {
      this._report({
        file,
        line: 1,
        message: `not an OTLP ExportTraceServiceRequest (${describeValue(value)})`,
        records: 1,
      });
    }
  }

  /** Reading stops early: the leading run of unreadable lines says why. */
  private _stopEarly(): void {
    const b = this._bad;
    if (!b) return;
    this._report({
      file: this._file,
      line: b.from,
      message: `not OTLP/JSON: the first ${b.count} lines are unreadable (line ${b.from}: ${b.first}); stopped reading`,
      records: b.count,
    });
  }

  private _report(problem: InputProblem): void {
    this._sink.items.push(problem);
  }

  private _emit(line: number, value: unknown): void {
    this._sink.items.push({ file: this._file, line, value });
  }

  private _flushBad(): void {
    const bad = this._bad;
    if (!bad) return;
    const { from, to, count, first } = bad;
    this._bad = undefined;
    this._report(
      count === 1
        ? { file: this._file, line: from, message: first, records: 1 }
        : {
            file: this._file,
            line: from,
            toLine: to,
            message: `${count} unreadable lines (first: ${first})`,
            records: count,
          },
    );
  }

  private _docTooLarge(lines: readonly string[]): void {
    this._report({
      file: this._file,
      line: this._lineNo - lines.length + 1,
      message: `a single JSON document larger than ${this._maxDocument / MiB} MiB; write JSON Lines (one request per line) instead`,
      records: 1,
    });
  }

  private _noteBad(line: number, message: string): void {
    const bad = this._bad;
    if (bad) {
      bad.to = line;
      bad.count++;
    } else this._bad = { from: line, to: line, count: 1, first: message };
  }
}

/** `JsonLinesReader._lineCarried`: stop reading the file. */
const STOP = -1;
/** `JsonLinesReader._lineCarried`: nothing more in this chunk. */
const NEXT_CHUNK = -2;

/**
 * Whether the next line of a candidate document is an element of a JSON array that is open:
 * the document opened with `[` and its last line is that `[` or ends with a comma. A whole
 * request there is one element of an array written a request per line, not JSON Lines after
 * a truncated first record.
 */
function insideArray(doc: readonly string[]): boolean {
  if (doc[0]!.trimStart()[0] !== '[') return false;
  const last = doc[doc.length - 1]!.trimEnd();
  return last.endsWith(',') || (doc.length === 1 && last.trim() === '[');
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** An `ExportTraceServiceRequest`: an object with a `resourceSpans` (or snake_case) array. */
/** Whether a parsed JSON value is an OTLP `ExportTraceServiceRequest` (has a `resourceSpans` list). */
export function isRequestShaped(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  return Array.isArray(v.resourceSpans) || Array.isArray(v.resource_spans);
}

/** What a parsed JSON value that is no request is, for the message that says so. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? 'an empty array' : 'an array of other things';
  if (typeof value === 'object') {
    const v = value as Record<string, unknown>;
    const spans = v.resourceSpans ?? v.resource_spans;
    if (spans !== undefined) return `resourceSpans is ${spans === null ? 'null' : typeof spans}, not a list`;
    const keys = Object.keys(value as object);
    return keys.length === 0
      ? 'an empty object'
      : `an object without resourceSpans; keys ${printable(keys.slice(0, 5).join(', '), 80)}`;
  }
  return typeof value;
}

/**
 * Offset of the first byte no text file has (NUL or a C0 control other than tab/LF/FF/CR/ESC)
 * before the first whole line that opens a JSON value, or -1. A JSON Lines file whose end a
 * crash padded with NULs keeps its good lines (the padding is one unreadable line); binary
 * files are refused whole — a PNG's first line is text, and OTLP/protobuf starts with a
 * newline byte, but neither has a line opening with `{` or `[` before its control bytes.
 */
function binaryOffset(chunk: Buffer): number {
  const n = Math.min(chunk.length, 4096);
  // A byte-order mark is not content.
  let i = chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf ? 3 : 0;
  let lineStart = true;
  let opensJson = false;
  for (; i < n; i++) {
    const b = chunk[i]!;
    if (b === 0x0a) {
      if (opensJson) return -1;
      lineStart = true;
    } else if (b < 0x20 && b !== 0x09 && b !== 0x0c && b !== 0x0d && b !== 0x1b) return i;
    else if (lineStart && b !== 0x20 && b !== 0x09 && b !== 0x0c && b !== 0x0d) {
      lineStart = false;
      opensJson = b === 0x7b || b === 0x5b;
    }
  }
  return -1;
}

/** A chunk iterator that can give back what it peeked. */
interface Chunks {
  next(): Promise<Buffer | undefined>;
  rest(head: Buffer): AsyncIterable<Buffer>;
}

function countBytes(source: Readable, onBytes?: (n: number) => void): Chunks {
  const it = source[Symbol.asyncIterator]() as AsyncIterator<Buffer | string>;
  const next = async () => {
    const r = await it.next();
    if (r.done) return undefined;
    const chunk = typeof r.value === 'string' ? Buffer.from(r.value) : r.value;
    onBytes?.(chunk.length);
    return chunk;
  };
  return {
    next,
    async *rest(head: Buffer) {
      if (head.length > 0) yield head;
      for (let c = await next(); c !== undefined; c = await next()) yield c;
    },
  };
}

/** At least `n` bytes from the front of the stream (fewer at its end). */
async function peek(chunks: Chunks, n: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let size = 0;
  while (size < n) {
    const c = await chunks.next();
    if (c === undefined) break;
    parts.push(c);
    size += c.length;
  }
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

async function* gunzip(data: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const gz = createGunzip();
  const source = Readable.from(data);
  source.on('error', (err) => gz.destroy(err));
  source.pipe(gz);
  try {
    for await (const chunk of gz) yield chunk as Buffer;
  } finally {
    source.destroy();
  }
}
