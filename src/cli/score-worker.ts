import { parentPort, workerData } from 'node:worker_threads';
import { spansFromOtlpJson } from '../conventions/from-otlp-json.js';
import { VerdictSummarizer } from '../evaluation/check-gates.js';
import { printable } from '../input/printable.js';
import { describeValue, isRequestShaped } from '../input/read-records.js';
import type { Problem, SpanLike, Verdict } from '../types.js';
import { loadScoring } from './commands/score.js';
import { emptyStats, TraceScorer } from './score-stream.js';
import {
  type FromShard,
  type ShardItem,
  type ShardSetup,
  type ShardStats,
  shardOf,
  type ToShard,
} from './trace-shards.js';
import { verdictLine } from './verdict-output.js';

/**
 * One worker of `toolwatch score --jobs`: judges the traces of its shard, from the records the
 * main thread hands it, with the same window and judging as a single scorer; sends back its
 * verdicts (as JSON lines for JSON Lines output), problems and counts.
 */
const setup = workerData as ShardSetup;
const port = parentPort!;
const { policy, select } = await loadScoring(setup.sources);
const stats = emptyStats();
let lines = '';
let verdicts: Array<[Verdict, string]> = [];
let problems: Array<[string, string, string]> = [];
let notRecords = 0;
const log = {
  report: (kind: string, where: string, message: string) => {
    problems.push([kind, where, message]);
  },
};
const summarizer = new VerdictSummarizer(policy);
const scorer = new TraceScorer({
  policy,
  ...(select ? { select } : {}),
  ...(setup.window !== undefined ? { window: setup.window } : {}),
  ...(setup.maxOpenSpans !== undefined ? { maxOpenSpans: setup.maxOpenSpans } : {}),
  stats,
  log,
  onVerdict: (v, file) => {
    summarizer.add(v);
    if (setup.lines) lines += verdictLine(v);
    else verdicts.push([v, file]);
  },
});

// Messages are handled one at a time, in order: a judge's promise (none without --judges)
// or the next batch waits for the one before.
let queue: Promise<void> = Promise.resolve();
port.on('message', (message: ToShard) => {
  queue = queue.then(() => handle(message)).catch(fail);
});

function fail(err: unknown): void {
  // An uncaught error in a worker reaches the main thread as its 'error' event: exit 3 there.
  setImmediate(() => {
    throw err;
  });
}

async function handle(message: ToShard): Promise<void> {
  if (message.kind === 'end') {
    const judged = scorer.finish();
    if (judged) await judged;
    port.postMessage({ kind: 'end', ...take(), summary: summarizer.summary } satisfies FromShard);
    port.close();
    return;
  }
  const bytes = message.bytes
    ? Buffer.from(message.bytes.buffer, message.bytes.byteOffset, message.bytes.byteLength)
    : undefined;
  for (const item of message.items) {
    // The records before this one went by (to other workers): a trace they left behind closes
    // now, before this record's spans are added, as a single scorer would close it.
    const closed = scorer.advance(item.at - 1);
    if (closed) await closed;
    const spans = item.spans ?? read(item, bytes);
    if (spans === undefined) continue;
    const judged = scorer.record(spans, item.file, item.line, item.at);
    if (judged) await judged;
  }
  const judged = scorer.advance(message.upTo);
  if (judged) await judged;
  port.postMessage({ kind: 'progress', done: message.items.length, ...take() } satisfies FromShard);
}

/** A line's spans of this shard, or undefined when it cannot be read (reported by one worker). */
function read(item: ShardItem, bytes: Buffer | undefined): SpanLike[] | undefined {
  const where = `${item.file}:${item.line}`;
  const text = item.text ?? bytes!.toString('utf8', item.offset!, item.offset! + item.length!);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    unreadable(item, where, `not JSON: ${printable((err as Error).message)}`);
    return undefined;
  }
  if (!isRequestShaped(value)) {
    unreadable(item, where, `not an OTLP ExportTraceServiceRequest (${describeValue(value)})`);
    return undefined;
  }
  const found: Problem[] = [];
  let spans = spansFromOtlpJson(value, found);
  if (found.length > 0 && item.reporter) {
    stats.unreadable++;
    for (const p of found) log.report(p.code, where, p.message);
  }
  if (item.filter) spans = spans.filter((s) => shardOf(s.traceId, setup.shards) === setup.shard);
  return spans;
}

function unreadable(item: ShardItem, where: string, message: string): void {
  if (!item.reporter) return;
  stats.unreadable++;
  notRecords++;
  log.report('unreadable', where, message);
}

/** What was written and counted since the last message, and the counts so far. */
function take() {
  const sent = { lines, verdicts, problems, stats: counts() };
  lines = '';
  verdicts = [];
  problems = [];
  return sent;
}

function counts(): ShardStats {
  return {
    runs: stats.runs,
    verdicts: stats.verdicts,
    passed: stats.passed,
    unreadable: stats.unreadable,
    unmatched: stats.unmatched,
    split: stats.split,
    notRecords,
    unjudged: stats.unjudged.entries(),
  };
}
