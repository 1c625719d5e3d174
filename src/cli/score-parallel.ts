import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { emptySummary, type VerdictSummary } from '../evaluation/check-gates.js';
import { isTraceRecord, readInput } from '../input/read-records.js';
import type { SpanLike, Verdict } from '../types.js';
import type { CliIo } from './cli-io.js';
import type { ProblemLog } from './problem-log.js';
import {
  decodeRecord,
  emptyStats,
  reportInputProblem,
  type ScoreStats,
  startProgress,
} from './score-stream.js';
import type { Scoring, ScoringSources } from './scoring.js';
import { ShardScorer } from './shard-scorer.js';
import {
  type FromShard,
  type Owners,
  ownersFor,
  type ShardItem,
  type ShardSetup,
  type ShardStats,
  shardOf,
  shardsOfBytes,
  shardsOfLine,
  type ToShard,
} from './trace-shards.js';

/** What the workers of a score run are started with, before anything is read. */
export interface ShardWorkersOptions {
  jobs: number;
  sources: ScoringSources;
  window?: number;
  /** Spans held open over all threads (each holds its share). Default 200,000. */
  maxOpenSpans?: number;
  /** JSON Lines output: workers send verdicts as lines. */
  lines: boolean;
}

/**
 * The N−1 workers of `--jobs N`, started as early as possible: each loads the CLI's modules
 * and the policy (~0.25 s of CPU) while the main thread does the same. Until a run takes them
 * over they do not keep the process alive, and an error they raise is kept, not thrown.
 */
export class ShardWorkers {
  /** By thread; 0, the main thread, has none. */
  readonly workers: Worker[] = [];
  failure: unknown;
  readonly owners: Owners;
  readonly maxOpenSpans: number;

  constructor(readonly options: ShardWorkersOptions) {
    const { jobs } = options;
    this.owners = ownersFor(jobs);
    this.maxOpenSpans = Math.max(1, Math.floor((options.maxOpenSpans ?? 200_000) / jobs));
    for (let shard = 1; shard < jobs; shard++) {
      const worker = startWorker({
        sources: options.sources,
        shard,
        ...(options.window !== undefined ? { window: options.window } : {}),
        maxOpenSpans: this.maxOpenSpans,
        lines: options.lines,
      });
      worker.unref();
      worker.on('error', (err) => {
        this.failure ??= err;
      });
      // Before a run takes it over, a worker has nothing to finish: any exit is a failure.
      worker.once('exit', (code) => {
        this.failure ??= new Error(`a score worker stopped (exit code ${code}) before it started`);
      });
      this.workers[shard] = worker;
    }
  }

  /** Ends every worker (after a run, or instead of one). */
  stop(): void {
    for (const worker of this.workers.slice(1)) {
      worker.removeAllListeners('exit');
      void worker.terminate();
    }
  }
}

export interface ScoreParallelOptions {
  files: string[];
  /** Threads that judge, this one included (it also reads): at least 2. */
  jobs: number;
  /** What this thread judges with (loaded from `sources`, as the workers load it). */
  scoring: Scoring;
  sources: ScoringSources;
  window?: number;
  /** Spans held open over all threads (each holds its share). Default 200,000. */
  maxOpenSpans?: number;
  /** JSON Lines output: workers send verdicts as lines, for `onLines`. */
  lines: boolean;
  /** Workers started earlier with the same options (`ShardWorkers`); default: started now. */
  workers?: ShardWorkers;
  onLines: (lines: string) => void | Promise<void>;
  onVerdict: (verdict: Verdict, file: string) => void | Promise<void>;
  progressIntervalMs?: number;
  /** Text queued for one worker, and output not yet written, before reading waits. Default 16 Mi characters. */
  maxQueuedChars?: number;
  io: CliIo;
  log: ProblemLog;
}

/** Text queued for one worker and not yet taken off its queue, before reading pauses. */
const MAX_QUEUED_CHARS = 16 * 1024 * 1024;
/** Records handed over per message (and what is pending at the end of every batch read). */
const BATCH_RECORDS = 64;
/** Records that go by before a worker that was handed none is told how far the input has got. */
const IDLE_UPDATE_RECORDS = 256;
/** The smallest buffer lines are copied into for a worker. */
const BATCH_BYTES = 256 * 1024;

/**
 * `toolwatch score --jobs N`: this thread reads the input, judges its share of the traces
 * and hands each other record to the worker its traces belong to (`trace-shards.ts`); JSON
 * Lines lines go over as bytes, undecoded, and are parsed there. Every thread groups and judges
 * its traces as a single scorer would, so the verdicts are the same; they are written as they
 * come, so their order differs from a single scorer's. Memory: each thread's window, plus about
 * `maxQueuedChars` of text queued per worker and as much output not yet written (reading waits
 * for both).
 */
export async function scoreParallel(options: ScoreParallelOptions): Promise<{
  stats: ScoreStats;
  summary: VerdictSummary;
}> {
  const { jobs, io, log } = options;
  const pool = options.workers ?? new ShardWorkers(options);
  const { owners, maxOpenSpans } = pool;
  const stats = emptyStats();
  const shardStats: ShardStats[] = [];
  const summary = emptySummary();
  // This thread's share: judged between reads, its verdicts written at once.
  const local = new ShardScorer({
    scoring: options.scoring,
    ...(options.window !== undefined ? { window: options.window } : {}),
    maxOpenSpans,
    log,
    onVerdict: options.onVerdict,
  });
  let localItems: ShardItem[] = [];
  // Per worker (index = thread): the characters of each message it has not taken off its
  // queue yet, oldest first (each message gets one reply), and their sum.
  const inFlight: number[][] = Array.from({ length: jobs }, () => []);
  const queuedChars = new Array<number>(jobs).fill(0);
  const pending: ShardItem[][] = Array.from({ length: jobs }, () => []);
  const pendingChars = new Array<number>(jobs).fill(0);
  // Lines taken as bytes, copied into one buffer per worker and message (transferred, not
  // copied again).
  const pendingBytes: Array<Buffer | undefined> = new Array(jobs).fill(undefined);
  const usedBytes = new Array<number>(jobs).fill(0);
  const toldUpTo = new Array<number>(jobs).fill(0);
  let records = 0;
  let failure: unknown;
  let wake: (() => void) | undefined;
  const workers = pool.workers;
  const ended: Array<Promise<void>> = [];
  const countRuns = () => {
    stats.runs = local.stats.runs + shardStats.reduce((n, s) => n + (s?.runs ?? 0), 0);
  };
  // Workers' output is written in order: a batch waits for the one before (the output may push
  // back). What waits counts against the same bound as the workers' queues: a slow reader of
  // the output slows the reading of the input.
  let writing: Promise<void> = Promise.resolve();
  let unwritten = 0;
  const write = (message: Extract<FromShard, { lines: string }>) => {
    const { lines, verdicts, problems } = message;
    for (const [kind, where, text] of problems) log.report(kind, where, text);
    if (lines.length === 0 && verdicts.length === 0) return;
    const size = lines.length + verdicts.length * 2048;
    unwritten += size;
    writing = writing.then(async () => {
      if (lines.length > 0) await options.onLines(lines);
      for (const [v, file] of verdicts) {
        const written = options.onVerdict(v, file);
        if (written) await written;
      }
      unwritten -= size;
      wake?.();
    });
    writing.catch(stop);
  };
  const stop = (err: unknown) => {
    failure ??= err;
    wake?.();
  };

  const progress = io.stderrIsTTY
    ? startProgress(options.files, stats, io, options.progressIntervalMs ?? 500)
    : undefined;
  try {
    if (pool.failure !== undefined) throw pool.failure;
    for (let shard = 1; shard < jobs; shard++) {
      const worker = workers[shard]!;
      worker.removeAllListeners('exit');
      worker.ref();
      ended.push(
        new Promise<void>((resolve, reject) => {
          let done = false;
          worker.on('message', (message: FromShard) => {
            shardStats[shard] = message.stats;
            countRuns();
            write(message);
            if (message.kind === 'progress') {
              queuedChars[shard]! -= inFlight[shard]!.shift() ?? 0;
              wake?.();
            } else {
              done = true;
              sumInto(summary, message.summary);
              resolve();
            }
          });
          worker.on('error', (err) => {
            stop(err);
            reject(err);
          });
          worker.on('exit', (code) => {
            if (done) return;
            const err = new Error(`a score worker stopped (exit code ${code}) before it finished`);
            stop(err);
            reject(err);
          });
        }),
      );
    }
    for (const p of ended) p.catch(() => {});

    const send = (shard: number) => {
      const items = pending[shard]!;
      pending[shard] = [];
      inFlight[shard]!.push(pendingChars[shard]!);
      queuedChars[shard]! += pendingChars[shard]!;
      pendingChars[shard] = 0;
      toldUpTo[shard] = records;
      const buffer = pendingBytes[shard];
      if (buffer === undefined || usedBytes[shard] === 0) {
        workers[shard]!.postMessage({ kind: 'records', items, upTo: records } satisfies ToShard);
        return;
      }
      const bytes = new Uint8Array(buffer.buffer, buffer.byteOffset, usedBytes[shard]);
      pendingBytes[shard] = undefined;
      usedBytes[shard] = 0;
      workers[shard]!.postMessage({ kind: 'records', items, bytes, upTo: records } satisfies ToShard, [
        buffer.buffer as ArrayBuffer,
      ]);
    };
    // A worker with nothing to do still learns now and then how far the input has got, so its
    // window closes its traces (and lets their spans go) while the records go to the others.
    const flush = () => {
      for (let shard = 1; shard < jobs; shard++) {
        if (pending[shard]!.length > 0 || records - toldUpTo[shard]! >= IDLE_UPDATE_RECORDS) send(shard);
      }
    };
    const queue = (shard: number, item: ShardItem, chars: number) => {
      if (shard === 0) {
        localItems.push(item);
        return;
      }
      pending[shard]!.push(item);
      pendingChars[shard]! += chars;
      if (pending[shard]!.length >= BATCH_RECORDS) send(shard);
    };
    /** This thread's records read since the last batch: judged now (the reader waits). */
    const judgeLocal = async () => {
      const items = localItems;
      localItems = [];
      for (const item of items) {
        const judged = local.record(item, undefined);
        if (judged) await judged;
      }
      const judged = local.advance(records);
      if (judged) await judged;
      countRuns();
    };
    const copy = (shard: number, chunk: Buffer, start: number, end: number): number => {
      const length = end - start;
      let buffer = pendingBytes[shard];
      const used = usedBytes[shard]!;
      if (buffer === undefined || used + length > buffer.length) {
        // Its own ArrayBuffer (never node's shared pool), so it can be transferred.
        const grown = Buffer.from(new ArrayBuffer(Math.max(BATCH_BYTES, 2 * (used + length))));
        if (buffer !== undefined) buffer.copy(grown, 0, 0, used);
        buffer = grown;
        pendingBytes[shard] = buffer;
      }
      chunk.copy(buffer, used, start, end);
      usedBytes[shard] = used + length;
      return used;
    };
    // A line taken for the one thread in `mask` (0, or several threads: not taken, the reader
    // parses it): one record; `fill` puts the line in the thread's item and returns its size.
    // A line that mixes traces of several threads is parsed here, once, and its spans handed
    // over: handed to each thread whole, it was parsed by every one of them, which made the
    // Collector's batches (thousands of traces a line) slower than one thread. Taken lines
    // wait, in input order, for the batch they were read with:
    // they are numbered (the window counts records) in line order with the records the reader
    // parsed between them, which it hands over only at the end of the batch (numbered as they
    // were taken, a record parsed between two taken lines came after both: found by
    // test/cli/score-jobs-hostile.test.ts).
    let taken: Array<{
      shard: number;
      file: string;
      line: number;
      fill: (item: ShardItem, shard: number) => number;
    }> = [];
    let next = 0;
    const take = (
      mask: number,
      file: string,
      line: number,
      fill: (item: ShardItem, shard: number) => number,
    ) => {
      if (mask === 0 || (mask & (mask - 1)) !== 0) return false;
      stats.records++;
      taken.push({ shard: 31 - Math.clz32(mask), file, line, fill });
      return true;
    };
    /** Numbers and hands on the lines taken before line `before`. */
    const handOn = (before: number) => {
      while (next < taken.length && taken[next]!.line < before) {
        const { shard, file, line, fill } = taken[next++]!;
        const item: ShardItem = { at: ++records, file, line };
        queue(shard, item, fill(item, shard));
      }
      if (next === taken.length) {
        taken = [];
        next = 0;
      }
    };
    // Nothing is taken from a file before the reader has parsed a record of it, so it judges
    // the file's start as one thread does: a first line that does not parse begins a
    // pretty-printed document (taken, it was reported apart as "not JSON"), and a file whose
    // first 1,000 lines are unreadable is not OTLP/JSON (taken lines counted as read, so the
    // rest of the file was judged).
    let readerRecords = false;
    const claimBytes = (chunk: Buffer, start: number, end: number, file: string, line: number): boolean =>
      readerRecords &&
      take(shardsOfBytes(chunk, start, end, owners), file, line, (item, shard) => {
        // This thread's own lines are decoded now; a worker's are copied for it, undecoded.
        if (shard === 0) item.text = chunk.toString('utf8', start, end);
        else {
          item.offset = copy(shard, chunk, start, end);
          item.length = end - start;
        }
        return end - start;
      });
    const claim = (text: string, file: string, line: number): boolean =>
      readerRecords &&
      take(shardsOfLine(text, owners), file, line, (item) => {
        item.text = text;
        return text.length;
      });
    const limit = options.maxQueuedChars ?? MAX_QUEUED_CHARS;
    const full = () => unwritten > limit || queuedChars.some((n) => n > limit);

    for (const file of options.files) {
      stats.files++;
      readerRecords = false;
      const batches = readInput(file, {
        onBytes: (n) => {
          stats.bytes += n;
        },
        claim,
        claimBytes,
        ...(io.stdin ? { stdin: io.stdin } : {}),
      });
      for await (const batch of batches) {
        for (const item of batch) {
          if (!isTraceRecord(item)) {
            reportInputProblem(item, stats, log);
            continue;
          }
          // Records read here (documents, protobuf, lines the shard scan cannot read): their
          // spans are decoded here and handed over by shard, after the lines taken before them.
          handOn(item.line);
          readerRecords = true;
          stats.records++;
          const at = ++records;
          const byShard = new Map<number, SpanLike[]>();
          for (const span of decodeRecord(item, stats, log)) {
            const shard = shardOf(span.traceId, owners);
            const spans = byShard.get(shard);
            if (spans) spans.push(span);
            else byShard.set(shard, [span]);
          }
          for (const [shard, spans] of byShard) queue(shard, { at, file, line: item.line, spans }, 0);
        }
        handOn(Number.POSITIVE_INFINITY);
        // The workers first, so they judge while this thread judges its share.
        flush();
        await judgeLocal();
        while (failure === undefined && full()) {
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
          wake = undefined;
        }
        if (failure !== undefined) throw failure;
      }
      // Lines taken after the file's last batch (its last line, read at its end).
      handOn(Number.POSITIVE_INFINITY);
    }
    for (let shard = 1; shard < jobs; shard++) if (pending[shard]!.length > 0) send(shard);
    for (const worker of workers.slice(1)) worker.postMessage({ kind: 'end' } satisfies ToShard);
    await judgeLocal();
    const judged = local.finish();
    if (judged) await judged;
    await Promise.all(ended);
    await writing;
    if (failure !== undefined) throw failure;
  } finally {
    progress?.stop();
    pool.stop();
  }
  sumInto(summary, local.summarizer.summary);
  for (const s of [local.counts(), ...shardStats.slice(1)]) {
    stats.verdicts += s.verdicts;
    stats.passed += s.passed;
    stats.unreadable += s.unreadable;
    stats.unmatched += s.unmatched;
    stats.split += s.split;
    stats.records -= s.notRecords;
    stats.unjudged.merge(s.unjudged);
  }
  countRuns();
  return { stats, summary };
}

function sumInto(into: VerdictSummary, from: VerdictSummary): void {
  for (const key of Object.keys(into) as Array<keyof VerdictSummary>) into[key] += from[key];
}

/**
 * A worker running `score-worker`: the built `.js` beside this file, or under tsx (tests, the
 * repository's own bin) the `.ts` source, loaded through tsx's loader registered in the worker
 * (a worker does not inherit the loader of the thread that starts it).
 */
function startWorker(setup: ShardSetup): Worker {
  const self = import.meta.url;
  if (self.endsWith('.js')) return new Worker(new URL('./score-worker.js', self), { workerData: setup });
  const tsx = join(createRequire(self).resolve('tsx/package.json'), '../dist/esm/api/index.mjs');
  const source = new URL('./score-worker.ts', self).href;
  return new Worker(
    `import(${JSON.stringify(`file://${tsx}`)}).then((m) => { m.register(); return import(${JSON.stringify(source)}); })`,
    { eval: true, workerData: setup },
  );
}
