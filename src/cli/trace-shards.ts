import type { VerdictSummary } from '../evaluation/check-gates.js';
import type { RebuiltRun } from '../report/rebuilt-run.js';
import type { SpanLike, Verdict } from '../types.js';
import type { NameTally } from './name-tally.js';
import type { ScoringSources } from './scoring.js';

/**
 * `toolwatch score --jobs N` splits the input's traces among N threads by trace id: a trace's
 * spans all go to one thread, which groups and judges them exactly as a single scorer would.
 * A trace id's last 8 hex digits pick one of `BUCKETS` buckets, and each bucket has an owner
 * (`ownersFor`); the main thread, which also reads the input, owns fewer buckets.
 */

export const BUCKETS = 64;

/** Bucket → thread. */
export type Owners = readonly number[];

/**
 * The owner of each bucket for `threads` threads (thread 0 is the main thread, 1… the
 * workers): thread 0 gets about 0.85 of an even share, as reading and handing over records
 * takes the rest of its time (measured: ~0.9 s of ~6 s per 100,000 runs); the workers split
 * the other buckets evenly.
 */
export function ownersFor(threads: number): Owners {
  if (threads <= 1) return new Array<number>(BUCKETS).fill(0);
  const main = Math.max(1, Math.floor((BUCKETS / threads) * 0.9));
  const owners: number[] = [];
  for (let b = 0; b < BUCKETS; b++) owners.push(b < main ? 0 : 1 + ((b - main) % (threads - 1)));
  return owners;
}

/** The thread a trace belongs to. */
export function shardOf(traceId: string, owners: Owners): number {
  const n = Number.parseInt(traceId.slice(-8), 16);
  // Ids that are not hex (unusual encodings) still land somewhere, the same place each time.
  return owners[(Number.isNaN(n) ? hashOf(traceId) : n) % BUCKETS]!;
}

function hashOf(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

const KEY = '"traceId"';
const KEY_AND_QUOTE = '"traceId":"';
/**
 * What the scan searches for: the end of every `"traceId"`, whose first character is rare in
 * OTLP/JSON. A search for `"traceId"` itself stops at every `"` of the line (all 9 of a
 * line's keys: 2.8 µs a 5 KB line, `ceId"` 0.6 µs).
 */
const KEY_TAIL = 'ceId"';
/** Where `"traceId"` starts, from where its `KEY_TAIL` does. */
const TAIL_AT = KEY.length - KEY_TAIL.length;
/** The decoder's other spelling of the key (`field(raw, 'traceId', 'trace_id')`). */
const SNAKE_KEY = '"trace_id"';
/**
 * Its end, looked for first: a search for `"trace_id"` stops at every `"` of a JSON line
 * (3.6 µs a 5 KB line), one for `_id"` rarely (1.1 µs); only a line with it is searched again.
 */
const SNAKE_TAIL = '_id"';
/** A `\u00XX` escape, which JSON allows in keys too: `"trace\u0049d"` is `traceId`. */
const ESCAPE = '\\u00';
/** The letters of `traceId` and `trace_id`, as the two hex digits of their escapes. */
const KEY_LETTERS = new Set(['74', '72', '61', '63', '65', '49', '64', '5f', '69']);

/**
 * Whether a line may name a span's trace under a key the scan does not read: `trace_id`, or
 * a key with one of its letters escaped. Such a span would go to another line's shard, or to
 * none (found by test/cli/score-jobs-hostile.test.ts), so the line is decoded where it is read.
 */
function hidesKey(text: string): boolean {
  if (text.includes(SNAKE_TAIL) && text.includes(SNAKE_KEY)) return true;
  for (let at = text.indexOf(ESCAPE); at !== -1; at = text.indexOf(ESCAPE, at + ESCAPE.length)) {
    if (KEY_LETTERS.has(text.slice(at + 4, at + 6).toLowerCase())) return true;
  }
  return false;
}

/**
 * The shards a JSON Lines line's spans belong to, read from its text without parsing it: a
 * bit mask, or 0 when the text cannot be read that way (then the line is parsed where it is
 * read). Each `"traceId"` key must be followed directly by a 32-digit lower-case hex id — the
 * form the decoder keeps as is — so the mask agrees with the decoded spans' ids. Escaped text
 * inside string values (`\"traceId\"`) never matches. Span links name other traces: their
 * shards are included, which costs a parse where nothing is kept, never a lost span.
 */
export function shardsOfLine(text: string, owners: Owners): number {
  // A line's spans mostly share one trace: an id equal to the last one read costs a compare.
  let last = '';
  let mask = 0;
  let found = false;
  for (let tail = text.indexOf(KEY_TAIL); tail !== -1; ) {
    const at = tail - TAIL_AT;
    if (at < 0 || !text.startsWith(KEY, at)) {
      tail = text.indexOf(KEY_TAIL, tail + KEY_TAIL.length);
      continue;
    }
    found = true;
    if (!text.startsWith(KEY_AND_QUOTE, at)) return 0;
    const from = at + KEY_AND_QUOTE.length;
    if (text.charCodeAt(from + 32) !== 0x22 /* " */) return 0;
    if (last === '' || !text.startsWith(last, from)) {
      for (let i = from; i < from + 32; i++) {
        const c = text.charCodeAt(i);
        if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return 0;
      }
      last = text.slice(from, from + 32);
      mask |= 1 << shardOf(last, owners);
    }
    tail = text.indexOf(KEY_TAIL, from + 33);
  }
  if (!found) return 0;
  return hidesKey(text) ? 0 : mask;
}

const KEY_TAIL_BYTES = Buffer.from(KEY_TAIL);
const SNAKE_KEY_BYTES = Buffer.from(SNAKE_KEY);
const SNAKE_TAIL_BYTES = Buffer.from(SNAKE_TAIL);
const ESCAPE_BYTES = Buffer.from(ESCAPE);

/** `hidesKey` for a line's bytes. */
function hidesKeyInBytes(line: Buffer): boolean {
  if (line.includes(SNAKE_TAIL_BYTES) && line.includes(SNAKE_KEY_BYTES)) return true;
  for (
    let at = line.indexOf(ESCAPE_BYTES);
    at !== -1;
    at = line.indexOf(ESCAPE_BYTES, at + ESCAPE_BYTES.length)
  ) {
    if (KEY_LETTERS.has(line.toString('latin1', at + 4, at + 6).toLowerCase())) return true;
  }
  return false;
}

/** `shardsOfLine` for a line still in its read chunk, `chunk[start, end)`, without decoding it. */
export function shardsOfBytes(chunk: Buffer, start: number, end: number, owners: Owners): number {
  const line = chunk.subarray(start, end);
  let last = -1;
  let mask = 0;
  let found = false;
  for (let tail = line.indexOf(KEY_TAIL_BYTES); tail !== -1; ) {
    const at = tail - TAIL_AT;
    // `"tra` before it, read byte by byte (a compare is a call into C++).
    if (
      at < 0 ||
      line[at] !== 0x22 ||
      line[at + 1] !== 0x74 ||
      line[at + 2] !== 0x72 ||
      line[at + 3] !== 0x61
    ) {
      tail = line.indexOf(KEY_TAIL_BYTES, tail + KEY_TAIL.length);
      continue;
    }
    found = true;
    const from = at + KEY_AND_QUOTE.length;
    if (line[at + KEY.length] !== 0x3a /* : */ || line[from - 1] !== 0x22 || line[from + 32] !== 0x22)
      return 0;
    if (last === -1 || !sameId(line, last, from)) {
      let low = 0;
      for (let i = from; i < from + 32; i++) {
        const c = line[i]!;
        const digit = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1;
        if (digit === -1) return 0;
        // The last 8 digits, as `shardOf` reads them.
        if (i >= from + 24) low = low * 16 + digit;
      }
      last = from;
      mask |= 1 << owners[low % BUCKETS]!;
    }
    tail = line.indexOf(KEY_TAIL_BYTES, from + 33);
  }
  if (!found) return 0;
  return hidesKeyInBytes(line) ? 0 : mask;
}

/** Whether the 32-digit ids at `a` and `b` are the same (in JS: a compare is a call into C++). */
function sameId(line: Buffer, a: number, b: number): boolean {
  for (let i = 0; i < 32; i++) if (line[a + i] !== line[b + i]) return false;
  return true;
}

/** Most workers a score run starts: the shard mask is a 32-bit integer. */
export const MAX_JOBS = 32;

/** What a worker is started with. */
export interface ShardSetup {
  sources: ScoringSources;
  /** The worker's thread number (1…N−1). */
  shard: number;
  window?: number;
  maxOpenSpans?: number;
  /** JSON Lines output: the worker sends verdict lines, not verdicts. */
  lines: boolean;
  /** The HTML report: failing verdicts go with what was rebuilt of their run. */
  rebuild?: boolean;
}

/** A record for a worker: a line's text to parse, or spans decoded where the record was read. */
export interface ShardItem {
  /** The record's number in the whole input (the window counts records). */
  at: number;
  file: string;
  line: number;
  text?: string;
  /** The line as bytes of the message's `bytes`, from `offset`, `length` long. */
  offset?: number;
  length?: number;
  spans?: SpanLike[];
}

export type ToShard =
  | { kind: 'records'; items: ShardItem[]; bytes?: Uint8Array; upTo: number }
  | { kind: 'end' };

export interface ShardStats {
  runs: number;
  verdicts: number;
  passed: number;
  unreadable: number;
  unmatched: number;
  split: number;
  /** Lines counted as records where they were read that turned out unreadable. */
  notRecords: number;
  unjudged: Array<[string, number]>;
  spans: number;
  traces: number;
  agentRuns: number;
  unmatchedRuns: ReturnType<NameTally['entries']>;
}

export type FromShard =
  | {
      /** The reply to one `records` message (the main thread counts its queue by them). */
      kind: 'progress';
      lines: string;
      verdicts: Array<[Verdict, string, RebuiltRun?]>;
      problems: Array<[string, string, string]>;
      stats: ShardStats;
    }
  | {
      kind: 'end';
      lines: string;
      verdicts: Array<[Verdict, string, RebuiltRun?]>;
      problems: Array<[string, string, string]>;
      stats: ShardStats;
      summary: VerdictSummary;
    };
