import { spansFromOtlpJson } from '../conventions/from-otlp-json.js';
import { VerdictSummarizer } from '../evaluation/check-gates.js';
import { printable } from '../input/printable.js';
import { describeValue, isRequestShaped } from '../input/read-records.js';
import type { Problem, SpanLike } from '../types.js';
import { emptyStats, type ProblemSink, type ScoreStreamOptions, TraceScorer } from './score-stream.js';
import type { Scoring } from './scoring.js';
import type { ShardItem, ShardStats } from './trace-shards.js';

export interface ShardScorerOptions {
  scoring: Scoring;
  window?: number;
  maxOpenSpans?: number;
  onVerdict: ScoreStreamOptions['onVerdict'];
  rebuild?: boolean;
  log: ProblemSink;
}

/**
 * One thread's share of `toolwatch score --jobs`: the records handed to it (lines to parse, or
 * spans decoded where they were read), judged by a `TraceScorer` that sees the whole input's
 * record numbers, so its window closes traces as one scorer's would.
 */
export class ShardScorer {
  readonly stats = emptyStats();
  readonly summarizer: VerdictSummarizer;
  /** Lines counted as records where they were read that turned out unreadable. */
  private notRecords = 0;
  private readonly scorer: TraceScorer;

  constructor(private readonly options: ShardScorerOptions) {
    const { policy, select } = options.scoring;
    this.summarizer = new VerdictSummarizer(policy);
    this.scorer = new TraceScorer({
      policy,
      ...(select ? { select } : {}),
      ...(options.window !== undefined ? { window: options.window } : {}),
      ...(options.maxOpenSpans !== undefined ? { maxOpenSpans: options.maxOpenSpans } : {}),
      stats: this.stats,
      log: options.log,
      ...(options.rebuild ? { rebuild: true } : {}),
      onVerdict: (v, file, rebuilt) => {
        this.summarizer.add(v);
        return options.onVerdict(v, file, rebuilt);
      },
    });
  }

  /** A record; `bytes` holds the lines handed over as bytes. */
  record(item: ShardItem, bytes: Buffer | undefined): void | Promise<void> {
    // The records before this one went by (to other threads): a trace they left behind closes
    // now, before this record's spans are added, as a single scorer would close it.
    const closed = this.scorer.advance(item.at - 1);
    if (closed) return closed.then(() => this.add(item, bytes));
    return this.add(item, bytes);
  }

  /** The input has reached record `at`. */
  advance(at: number): void | Promise<void> {
    return this.scorer.advance(at);
  }

  finish(): void | Promise<void> {
    return this.scorer.finish();
  }

  counts(): ShardStats {
    const { stats } = this;
    return {
      runs: stats.runs,
      verdicts: stats.verdicts,
      passed: stats.passed,
      unreadable: stats.unreadable,
      unmatched: stats.unmatched,
      split: stats.split,
      notRecords: this.notRecords,
      unjudged: stats.unjudged.entries(),
      spans: stats.spans,
      traces: stats.traces,
      agentRuns: stats.agentRuns,
      unmatchedRuns: stats.unmatchedRuns.entries(),
    };
  }

  private add(item: ShardItem, bytes: Buffer | undefined): void | Promise<void> {
    const spans = item.spans ?? this.read(item, bytes);
    if (spans === undefined) return;
    return this.scorer.record(spans, item.file, item.line, item.at);
  }

  /** A line's spans (all of this shard's), or undefined when it cannot be read (reported). */
  private read(item: ShardItem, bytes: Buffer | undefined): SpanLike[] | undefined {
    const where = `${item.file}:${item.line}`;
    const text = item.text ?? bytes!.toString('utf8', item.offset!, item.offset! + item.length!);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      this.unreadable(where, `not JSON: ${printable((err as Error).message)}`);
      return undefined;
    }
    if (!isRequestShaped(value)) {
      this.unreadable(where, `not an OTLP ExportTraceServiceRequest (${describeValue(value)})`);
      return undefined;
    }
    const found: Problem[] = [];
    const spans = spansFromOtlpJson(value, found);
    this.stats.spans += spans.length;
    if (found.length > 0) {
      this.stats.unreadable++;
      for (const p of found) this.options.log.report(p.code, where, p.message);
    }
    return spans;
  }

  private unreadable(where: string, message: string): void {
    this.stats.unreadable++;
    this.notRecords++;
    this.options.log.report('unreadable', where, message);
  }
}
