import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { addSummary, emptySummary, type VerdictSummary } from '../evaluation/check-gates.js';
import { isTraceRecord, readInput } from '../input/read-records.js';
import type { SpanLike } from '../types.js';
import type { CliIo } from './cli-io.js';
import type { ProblemLog } from './problem-log.js';
import {
  decodeRecord,
  emptyStats,
  reportInputProblem,
  type ScoreStats,
  type ScoreStreamOptions,
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
import { WorkerChannel } from './worker-channel.js';

/** What the workers of a score run are started with, before anything is read. */
export interface ShardWorkersOptions {
  jobs: number;
  sources: ScoringSources;
  window?: number;
  /** Spans held open over all threads (each holds its share). Default 200,000. */
  maxOpenSpans?: number;
  /** JSON Lines output: workers send verdicts as lines. */
  lines: boolean;
  /** The HTML report: failing verdicts go with what was rebuilt of their run. */
  rebuild?: boolean;
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
        ...(options.rebuild ? { rebuild: true } : {}),
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
  rebuild?: boolean;
  /** Workers started earlier with the same options (`ShardWorkers`); default: started now. */
  workers?: ShardWorkers;
  onLines: (lines: string) => void | Promise<void>;
  onVerdict: ScoreStreamOptions['onVerdict'];
  progressIntervalMs?: number;
  /** Text queued for one worker, and output not yet written, before reading waits. Default 16 Mi characters. */
  maxQueuedChars?: number;
  io: CliIo;
  log: ProblemLog;
}

/** Text queued for one worker and not yet taken off its queue, before reading pauses. */
const MAX_QUEUED_CHARS = 16 * 1024 * 1024;

/**
 * `toolwatch score --jobs N`: this thread reads the input, judges its share of the traces
 * and hands each other record to the worker its traces belong to (`trace-shards.ts`); JSON
 * Lines lines go over as bytes, undecoded, and are parsed there. Every thread groups and judges
 * its traces as a single scorer would, so the verdicts are the same; they are written as they
 * come, so their order differs from a single scorer's. Memory: each thread's window, plus about
 * `maxQueuedChars` of text queued per worker and as much output not yet written (reading waits
 * for both).
 */
export function scoreParallel(options: ScoreParallelOptions): Promise<{
  stats: ScoreStats;
  summary: VerdictSummary;
}> {
  return new ParallelScore(options).run();
}

/** A line taken for one thread, waiting for the batch it was read with. */
interface TakenLine {
  shard: number;
  file: string;
  line: number;
  /** Puts the line in the thread's item; returns its size. */
  fill: (item: ShardItem, shard: number) => number;
}

/** One `--jobs` run: the phases are the methods, in the order `run` calls them. */
class ParallelScore {
  private readonly _pool: ShardWorkers;
  private readonly _stats = emptyStats();
  private readonly _shardStats: ShardStats[] = [];
  private readonly _summary = emptySummary();
  /** This thread's share: judged between reads, its verdicts written at once. */
  private readonly _local: ShardScorer;
  private _localItems: ShardItem[] = [];
  /** By thread; 0, this thread, has none. */
  private readonly _channels: WorkerChannel[] = [];
  /** Records numbered so far (the windows count records). */
  private _records = 0;
  private _failure: unknown;
  private _wake: (() => void) | undefined;
  private readonly _ended: Array<Promise<void>> = [];
  /**
   * Workers' output is written in order: a batch waits for the one before (the output may
   * push back). What waits counts against the same bound as the workers' queues: a slow
   * reader of the output slows the reading of the input.
   */
  private _writing: Promise<void> = Promise.resolve();
  private _unwritten = 0;
  private _taken: TakenLine[] = [];
  private _next = 0;
  /**
   * Nothing is taken from a file before the reader has parsed a record of it, so it judges
   * the file's start as one thread does: a first line that does not parse begins a
   * pretty-printed document (taken, it was reported apart as "not JSON"), and a file whose
   * first 1,000 lines are unreadable is not OTLP/JSON (taken lines counted as read, so the
   * rest of the file was judged).
   */
  private _readerRecords = false;
  private readonly _limit: number;

  constructor(private readonly _options: ScoreParallelOptions) {
    this._pool = _options.workers ?? new ShardWorkers(_options);
    this._local = new ShardScorer({
      scoring: _options.scoring,
      ...(_options.window !== undefined ? { window: _options.window } : {}),
      maxOpenSpans: this._pool.maxOpenSpans,
      log: _options.log,
      ...(_options.rebuild ? { rebuild: true } : {}),
      onVerdict: _options.onVerdict,
    });
    this._limit = _options.maxQueuedChars ?? MAX_QUEUED_CHARS;
  }

  async run(): Promise<{ stats: ScoreStats; summary: VerdictSummary }> {
    const { io, files } = this._options;
    const progress = io.stderrIsTTY
      ? startProgress(files, this._stats, io, this._options.progressIntervalMs ?? 500)
      : undefined;
    try {
      if (this._pool.failure !== undefined) throw this._pool.failure;
      this._listen();
      for (const file of files) await this._readFile(file);
      await this._finish();
    } finally {
      progress?.stop();
      this._pool.stop();
    }
    return this._totals();
  }

  /** Takes the workers over: their replies are counted and written, their failures stop the run. */
  private _listen(): void {
    const workers = this._pool.workers;
    for (let shard = 1; shard < this._options.jobs; shard++) {
      const worker = workers[shard]!;
      const channel = new WorkerChannel(worker);
      this._channels[shard] = channel;
      worker.removeAllListeners('exit');
      worker.ref();
      this._ended.push(
        new Promise<void>((resolve, reject) => {
          let done = false;
          worker.on('message', (message: FromShard) => {
            this._shardStats[shard] = message.stats;
            this._countRuns();
            this._write(message);
            if (message.kind === 'progress') {
              channel.taken();
              this._wake?.();
            } else {
              done = true;
              addSummary(this._summary, message.summary);
              resolve();
            }
          });
          worker.on('error', (err) => {
            this._stop(err);
            reject(err);
          });
          worker.on('exit', (code) => {
            if (done) return;
            const err = new Error(`a score worker stopped (exit code ${code}) before it finished`);
            this._stop(err);
            reject(err);
          });
        }),
      );
    }
    for (const p of this._ended) p.catch(() => {});
  }

  /** Reads one file, handing its records over by shard and judging this thread's share batch by batch. */
  private async _readFile(file: string): Promise<void> {
    const { io, log } = this._options;
    const stats = this._stats;
    stats.files++;
    this._readerRecords = false;
    const batches = readInput(file, {
      onBytes: (n) => {
        stats.bytes += n;
      },
      claim: this._claim,
      claimBytes: this._claimBytes,
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
        this._handOn(item.line);
        this._readerRecords = true;
        stats.records++;
        const at = ++this._records;
        const byShard = new Map<number, SpanLike[]>();
        for (const span of decodeRecord(item, stats, log)) {
          const shard = shardOf(span.traceId, this._pool.owners);
          const spans = byShard.get(shard);
          if (spans) spans.push(span);
          else byShard.set(shard, [span]);
        }
        for (const [shard, spans] of byShard) this._queue(shard, { at, file, line: item.line, spans }, 0);
      }
      this._handOn(Number.POSITIVE_INFINITY);
      // The workers first, so they judge while this thread judges its share.
      for (const channel of this._channels.slice(1)) channel.flush(this._records);
      await this._judgeLocal();
      await this._waitForRoom();
      if (this._failure !== undefined) throw this._failure;
    }
    // Lines taken after the file's last batch (its last line, read at its end).
    this._handOn(Number.POSITIVE_INFINITY);
  }

  /** Ends the input for every thread and waits for their verdicts and for the output. */
  private async _finish(): Promise<void> {
    for (const channel of this._channels.slice(1)) if (channel.hasPending) channel.send(this._records);
    for (const worker of this._pool.workers.slice(1)) worker.postMessage({ kind: 'end' } satisfies ToShard);
    await this._judgeLocal();
    const judged = this._local.finish();
    if (judged) await judged;
    await Promise.all(this._ended);
    await this._writing;
    if (this._failure !== undefined) throw this._failure;
  }

  /** Every thread's counts and summaries, summed. */
  private _totals(): { stats: ScoreStats; summary: VerdictSummary } {
    const stats = this._stats;
    addSummary(this._summary, this._local.summarizer.summary);
    for (const s of [this._local.counts(), ...this._shardStats.slice(1)]) {
      stats.verdicts += s.verdicts;
      stats.passed += s.passed;
      stats.unreadable += s.unreadable;
      stats.unmatched += s.unmatched;
      stats.split += s.split;
      stats.records -= s.notRecords;
      stats.unjudged.merge(s.unjudged);
      stats.spans += s.spans;
      stats.traces += s.traces;
      stats.agentRuns += s.agentRuns;
      stats.unmatchedRuns.merge(s.unmatchedRuns);
    }
    this._countRuns();
    return { stats, summary: this._summary };
  }

  private _countRuns(): void {
    this._stats.runs = this._local.stats.runs + this._shardStats.reduce((n, s) => n + (s?.runs ?? 0), 0);
  }

  private _write(message: Extract<FromShard, { lines: string }>): void {
    const { lines, verdicts, problems } = message;
    for (const [kind, where, text] of problems) this._options.log.report(kind, where, text);
    if (lines.length === 0 && verdicts.length === 0) return;
    const size = lines.length + verdicts.length * 2048;
    this._unwritten += size;
    this._writing = this._writing.then(async () => {
      if (lines.length > 0) await this._options.onLines(lines);
      for (const [v, file, rebuilt] of verdicts) {
        const written = this._options.onVerdict(v, file, rebuilt);
        if (written) await written;
      }
      this._unwritten -= size;
      this._wake?.();
    });
    this._writing.catch((err) => this._stop(err));
  }

  private _stop(err: unknown): void {
    this._failure ??= err;
    this._wake?.();
  }

  /** Reading waits while a worker's queue, or the output not yet written, is over the bound. */
  private async _waitForRoom(): Promise<void> {
    const full = () =>
      this._unwritten > this._limit || this._channels.some((channel) => channel.queuedChars > this._limit);
    while (this._failure === undefined && full()) {
      await new Promise<void>((resolve) => {
        this._wake = resolve;
      });
      this._wake = undefined;
    }
  }

  private _queue(shard: number, item: ShardItem, chars: number): void {
    if (shard === 0) this._localItems.push(item);
    else this._channels[shard]!.queue(item, chars, this._records);
  }

  /** This thread's records read since the last batch: judged now (the reader waits). */
  private async _judgeLocal(): Promise<void> {
    const items = this._localItems;
    this._localItems = [];
    for (const item of items) {
      const judged = this._local.record(item, undefined);
      if (judged) await judged;
    }
    const judged = this._local.advance(this._records);
    if (judged) await judged;
    this._countRuns();
  }

  /**
   * A line taken for the one thread in `mask` (0, or several threads: not taken, the reader
   * parses it): one record. A line that mixes traces of several threads is parsed here, once,
   * and its spans handed over: handed to each thread whole, it was parsed by every one of
   * them, which made the Collector's batches (thousands of traces a line) slower than one
   * thread. Taken lines wait, in input order, for the batch they were read with: they are
   * numbered (the window counts records) in line order with the records the reader parsed
   * between them, which it hands over only at the end of the batch (numbered as they were
   * taken, a record parsed between two taken lines came after both: found by
   * test/cli/score-jobs-hostile.test.ts).
   */
  private _take(mask: number, file: string, line: number, fill: TakenLine['fill']): boolean {
    if (mask === 0 || (mask & (mask - 1)) !== 0) return false;
    this._stats.records++;
    this._taken.push({ shard: 31 - Math.clz32(mask), file, line, fill });
    return true;
  }

  /** Numbers and hands on the lines taken before line `before`. */
  private _handOn(before: number): void {
    const taken = this._taken;
    while (this._next < taken.length && taken[this._next]!.line < before) {
      const { shard, file, line, fill } = taken[this._next++]!;
      const item: ShardItem = { at: ++this._records, file, line };
      this._queue(shard, item, fill(item, shard));
    }
    if (this._next === taken.length) {
      this._taken = [];
      this._next = 0;
    }
  }

  private readonly _claimBytes = (chunk: Buffer, start: number, end: number, file: string, line: number) =>
    this._readerRecords &&
    this._take(shardsOfBytes(chunk, start, end, this._pool.owners), file, line, (item, shard) => {
      // This thread's own lines are decoded now; a worker's are copied for it, undecoded.
      if (shard === 0) item.text = chunk.toString('utf8', start, end);
      else {
        item.offset = this._channels[shard]!.copy(chunk, start, end);
        item.length = end - start;
      }
      return end - start;
    });

  private readonly _claim = (text: string, file: string, line: number) =>
    this._readerRecords &&
    this._take(shardsOfLine(text, this._pool.owners), file, line, (item) => {
      item.text = text;
      return text.length;
    });
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
