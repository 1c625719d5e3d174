import { parentPort, workerData } from 'node:worker_threads';
import type { RebuiltRun } from '../report/rebuilt-run.js';
import type { Verdict } from '../types.js';
import { loadScoring } from './scoring.js';
import { ShardScorer } from './shard-scorer.js';
import type { FromShard, ShardSetup, ToShard } from './trace-shards.js';
import { verdictLine } from './verdict-output.js';

/**
 * A worker of `toolwatch score --jobs`: judges its share of the traces from the records the
 * main thread hands it (`ShardScorer`) and sends back its verdicts (as JSON lines for JSON
 * Lines output), problems and counts, one reply per message.
 */
const setup = workerData as ShardSetup;
const port = parentPort!;
const scoring = await loadScoring(setup.sources);
let lines = '';
let verdicts: Array<[Verdict, string, RebuiltRun?]> = [];
let problems: Array<[string, string, string]> = [];
const shard = new ShardScorer({
  scoring,
  ...(setup.window !== undefined ? { window: setup.window } : {}),
  ...(setup.maxOpenSpans !== undefined ? { maxOpenSpans: setup.maxOpenSpans } : {}),
  log: {
    report: (kind, where, message) => {
      problems.push([kind, where, message]);
    },
  },
  ...(setup.rebuild ? { rebuild: true } : {}),
  onVerdict: (v, file, rebuilt) => {
    if (setup.lines) lines += verdictLine(v);
    else verdicts.push(rebuilt ? [v, file, rebuilt] : [v, file]);
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
    const judged = shard.finish();
    if (judged) await judged;
    port.postMessage({ kind: 'end', ...take(), summary: shard.summarizer.summary } satisfies FromShard);
    port.close();
    return;
  }
  const bytes = message.bytes
    ? Buffer.from(message.bytes.buffer, message.bytes.byteOffset, message.bytes.byteLength)
    : undefined;
  for (const item of message.items) {
    const judged = shard.record(item, bytes);
    if (judged) await judged;
  }
  const judged = shard.advance(message.upTo);
  if (judged) await judged;
  port.postMessage({ kind: 'progress', ...take() } satisfies FromShard);
}

/** What was written and counted since the last message, and the counts so far. */
function take() {
  const sent = { lines, verdicts, problems, stats: shard.counts() };
  lines = '';
  verdicts = [];
  problems = [];
  return sent;
}
