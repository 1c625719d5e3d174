import { stat } from 'node:fs/promises';
import { spansFromOtlpJson } from '../conventions/from-otlp-json.js';
import { evaluateTraceSpans, type TraceJudgement } from '../evaluation/evaluate-traces.js';
import { JudgeLimiter } from '../evaluation/judge-limiter.js';
import { type InputProblem, isTraceRecord, readInput, type TraceRecord } from '../input/read-records.js';
import { type TraceGroup, TraceWindow } from '../input/trace-window.js';
import { describeRun, type RebuiltRun } from '../report/rebuilt-run.js';
import type { Policy, Problem, SpanLike, Verdict } from '../types.js';
import type { CliIo } from './cli-io.js';
import { NameTally } from './name-tally.js';
import type { ProblemLog } from './problem-log.js';
import { UnjudgedTally } from './unjudged-tally.js';

export interface ScoreStreamOptions {
  files: string[];
  policy: Policy;
  /**
   * The policy a complete trace is judged with (eval datasets pick the case's rule); return
   * undefined to leave the trace unscored (counted as unmatched). Default: `policy`.
   */
  select?: (group: TraceGroup) => Policy | undefined;
  judges?: Record<string, unknown>;
  /** Records without a mention before a trace is complete. Default 1000. */
  window?: number;
  maxOpenSpans?: number;
  /** `rebuilt`: with `rebuild`, what toolwatch rebuilt of a failing verdict's run. */
  onVerdict: (verdict: Verdict, file: string, rebuilt?: RebuiltRun) => void | Promise<void>;
  /** Describe each failing verdict's run for the report (the HTML drill-down). Default false. */
  rebuild?: boolean;
  /** How often the progress line is redrawn (only when stderr is a terminal). Default 500 ms. */
  progressIntervalMs?: number;
  io: CliIo;
  log: ProblemLog;
}

export interface ScoreStats {
  /** Distinct agent runs some scorer judged (a verdict of only `skipped` results judges nothing). */
  runs: number;
  verdicts: number;
  /** Verdicts that passed, of those some scorer judged. */
  passed: number;
  /** Verdicts of only `skipped` results (out of the sample, over a limit), by their reason. */
  unjudged: UnjudgedTally;
  files: number;
  records: number;
  /** Records that could not be read, or were read with spans that had to be dropped. */
  unreadable: number;
  /** Traces no case was tied to (eval datasets only). */
  unmatched: number;
  /** Spans read. */
  spans: number;
  /** Traces judged (complete groups of spans). */
  traces: number;
  /** Outermost agent runs found in the judged traces, matched or not. */
  agentRuns: number;
  /** Outermost agent runs no rule matched, by agent name. */
  unmatchedRuns: NameTally;
  /** Traces that reappeared after their window closed, or were closed early by the span bound. */
  split: number;
  bytes: number;
}

/**
 * `toolwatch score`'s engine: reads every input as a stream, decodes each record on its own,
 * groups spans by trace in a bounded window and judges each trace as it completes, with one
 * judge budget for the whole run. Memory is bounded by the window, not by the input.
 */
export async function scoreStream(options: ScoreStreamOptions): Promise<ScoreStats> {
  const { io, log } = options;
  const stats = emptyStats();
  const scorer = new TraceScorer({ ...options, stats });
  const progress = io.stderrIsTTY
    ? startProgress(options.files, stats, io, options.progressIntervalMs ?? 500)
    : undefined;
  try {
    for (const file of options.files) {
      stats.files++;
      const batches = readInput(file, {
        onBytes: (n) => {
          stats.bytes += n;
        },
        ...(io.stdin ? { stdin: io.stdin } : {}),
      });
      for await (const batch of batches) {
        for (const item of batch) {
          if (!isTraceRecord(item)) {
            reportInputProblem(item, stats, log);
            continue;
          }
          stats.records++;
          const spans = decodeRecord(item, stats, log);
          const judged = scorer.record(spans, file, item.line);
          if (judged) await judged;
        }
      }
    }
    const judged = scorer.finish();
    if (judged) await judged;
  } finally {
    progress?.stop();
  }
  return stats;
}

export function emptyStats(): ScoreStats {
  return {
    runs: 0,
    verdicts: 0,
    passed: 0,
    unjudged: new UnjudgedTally(),
    files: 0,
    records: 0,
    unreadable: 0,
    unmatched: 0,
    spans: 0,
    traces: 0,
    agentRuns: 0,
    unmatchedRuns: new NameTally(),
    split: 0,
    bytes: 0,
  };
}

/** Reports what the reader could not read, counted as unreadable records. */
export function reportInputProblem(item: InputProblem, stats: ScoreStats, log: ProblemSink): void {
  stats.unreadable += item.records;
  const where = `${item.file}${item.line ? `:${item.line}${item.toLine ? `-${item.toLine}` : ''}` : ''}${
    item.offset !== undefined ? ` (byte ${item.offset})` : ''
  }`;
  log.report(item.records > 0 ? 'unreadable' : 'input', where, item.message);
}

/** A record's spans; a record read with spans that had to be dropped counts as unreadable. */
export function decodeRecord(item: TraceRecord, stats: ScoreStats, log: ProblemSink): SpanLike[] {
  const problems: Problem[] = [];
  const spans = spansFromOtlpJson(item.value, problems);
  stats.spans += spans.length;
  if (problems.length > 0) {
    stats.unreadable++;
    for (const p of problems)
      log.report(p.code, `${item.file}${item.line ? `:${item.line}` : ''}`, p.message);
  }
  return spans;
}

/** Where problems go: the CLI's `ProblemLog`, or a worker's messages to it. */
export type ProblemSink = Pick<ProblemLog, 'report'>;

export interface TraceScorerOptions {
  policy: Policy;
  select?: ScoreStreamOptions['select'];
  judges?: Record<string, unknown>;
  window?: number;
  maxOpenSpans?: number;
  onVerdict: ScoreStreamOptions['onVerdict'];
  rebuild?: boolean;
  log: ProblemSink;
  /** Counted into as verdicts are written. */
  stats: ScoreStats;
}

/**
 * Groups records' spans by trace in a bounded window, judges each trace as it completes
 * (with one judge budget) and counts what it writes. Judging and writing stay synchronous
 * unless a judge runs or the output pushes back: a stream of small traces then costs no
 * promise per trace.
 */
export class TraceScorer {
  private readonly window: TraceWindow;
  private readonly limiter: JudgeLimiter;
  private readonly stats: ScoreStats;
  /** Whether the run of the verdicts being written has a judged one yet (its verdicts are consecutive). */
  private runJudged = false;

  constructor(private readonly options: TraceScorerOptions) {
    this.stats = options.stats;
    this.window = new TraceWindow({
      ...(options.window !== undefined ? { window: options.window } : {}),
      ...(options.maxOpenSpans !== undefined ? { maxOpenSpans: options.maxOpenSpans } : {}),
    });
    this.limiter = new JudgeLimiter({
      maxPerMinute: options.policy.judge.maxPerMinute,
      maxConcurrent: options.policy.judge.maxConcurrent,
    });
  }

  /** One record's spans (`at`: its number in the whole input, when this scorer sees a shard of it). */
  record(spans: readonly SpanLike[], file: string, line: number, at?: number): void | Promise<void> {
    return this.judgeAll(this.noted(this.window.add(spans, file, line, at)), 0);
  }

  /** Records of other shards went by, up to `at`. */
  advance(at: number): void | Promise<void> {
    return this.judgeAll(this.noted(this.window.advance(at)), 0);
  }

  /** The end of input: every open trace is judged. */
  finish(): void | Promise<void> {
    return this.judgeAll(this.window.drain(), 0);
  }

  private noted(done: TraceGroup[]): TraceGroup[] {
    const window = this.window;
    if (window.reappeared + window.forced !== this.stats.split) {
      this.stats.split = window.reappeared + window.forced;
      for (const e of window.events.splice(0)) {
        this.options.log.report(
          e.kind === 'reappeared' ? 'split_trace' : 'forced_trace',
          `${e.file}:${e.line}`,
          e.kind === 'reappeared'
            ? `trace ${e.traceId} reappeared after its window closed; its runs were judged without these spans (raise --window)`
            : `trace ${e.traceId} judged before its window closed: more than the open-span bound are buffered`,
        );
      }
    }
    return done;
  }

  private judgeAll(groups: TraceGroup[], from: number): void | Promise<void> {
    for (let i = from; i < groups.length; i++) {
      const judged = this.judge(groups[i]!);
      if (judged) return judged.then(() => this.judgeAll(groups, i + 1));
    }
  }

  private judge(group: TraceGroup): void | Promise<void> {
    const { options } = this;
    const chosen = options.select ? options.select(group) : options.policy;
    if (!chosen) {
      this.stats.unmatched++;
      return;
    }
    const problems: Problem[] = [];
    const judged = evaluateTraceSpans(
      group.spans,
      chosen,
      {
        problems,
        limiter: this.limiter,
        ...(options.judges ? { judges: options.judges } : {}),
      },
      options.rebuild === true,
    );
    if (judged instanceof Promise) return judged.then((j) => this.emit(group, j, problems, chosen));
    return this.emit(group, judged, problems, chosen);
  }

  private emit(
    group: TraceGroup,
    judged: TraceJudgement,
    problems: Problem[],
    policy: Policy,
  ): void | Promise<void> {
    for (const p of problems)
      this.options.log.report(p.code, `${group.file}${group.line ? `:${group.line}` : ''}`, p.message);
    const stats = this.stats;
    stats.traces++;
    stats.agentRuns += judged.runs;
    for (const run of judged.unmatched) stats.unmatchedRuns.add(run.agent);
    const rebuilt = judged.failingRuns?.map((run) => (run ? describeRun(run, policy.redact) : undefined));
    return this.write(group.file, judged.verdicts, 0, rebuilt);
  }

  private write(
    file: string,
    verdicts: Verdict[],
    from: number,
    rebuilt?: Array<RebuiltRun | undefined>,
  ): void | Promise<void> {
    const stats = this.stats;
    for (let i = from; i < verdicts.length; i++) {
      const v = verdicts[i]!;
      // Verdicts come ordered by run, then rule: a new run is a new (trace, span).
      const prev = i > 0 ? verdicts[i - 1] : undefined;
      if (!prev || prev.span_id !== v.span_id || prev.trace_id !== v.trace_id) this.runJudged = false;
      stats.verdicts++;
      // Counted as scored and passed, a record of skipped results made a sampled-out file
      // read "62 runs scored, 62 passed" with nothing judged (and a gate hold on nothing).
      if (stats.unjudged.add(v)) {
        if (!this.runJudged) stats.runs++;
        this.runJudged = true;
        if (v.passed) stats.passed++;
      }
      const written = this.options.onVerdict(v, file, rebuilt?.[i]);
      if (written) return written.then(() => this.write(file, verdicts, i + 1, rebuilt));
    }
  }
}

/** A progress line on a terminal: runs scored, runs/s, bytes read of the total. */
export function startProgress(
  files: string[],
  stats: ScoreStats,
  io: CliIo,
  intervalMs: number,
): { stop: () => void } {
  const started = Date.now();
  let total: number | undefined;
  Promise.all(
    files.map((f) =>
      f === '-'
        ? Promise.resolve(undefined)
        : stat(f).then(
            (s) => s.size,
            () => undefined,
          ),
    ),
  )
    .then((sizes) => {
      if (sizes.every((s) => s !== undefined)) total = sizes.reduce((a, b) => a + (b ?? 0), 0);
    })
    .catch(() => {});
  const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
  const timer = setInterval(() => {
    const seconds = (Date.now() - started) / 1000;
    const rate = seconds > 0 ? Math.round(stats.runs / seconds) : 0;
    io.stderr(
      `\r\x1b[K${stats.runs} runs scored, ${rate} runs/s, ${mb(stats.bytes)}${total !== undefined ? ` / ${mb(total)}` : ''} MB read`,
    );
  }, intervalMs);
  timer.unref();
  return {
    stop: () => {
      clearInterval(timer);
      io.stderr('\r\x1b[K');
    },
  };
}
