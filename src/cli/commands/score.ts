import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import {
  checkGates,
  type GateOutcome,
  gatesApplied,
  VerdictSummarizer,
  type VerdictSummary,
} from '../../evaluation/check-gates.js';
import { printable } from '../../input/printable.js';
import { PolicyError } from '../../policy/policy-error.js';
import { gateLine } from '../../report/gate-line.js';
import type { Policy, Verdict } from '../../types.js';
import type { CliIo } from '../cli-io.js';
import { POLICY_LIMIT_OPTIONS, policyLimitsOf, policyLimitUsage } from '../policy-limit-flags.js';
import { ProblemLog } from '../problem-log.js';
import { sameFile } from '../same-file.js';
import { scoreNotes } from '../score-notes.js';
import { type ScoreStats, scoreStream } from '../score-stream.js';
import { loadJudges, loadScoring, type Scoring, type ScoringSources } from '../scoring.js';
import { MAX_JOBS } from '../trace-shards.js';
import { usageError } from '../usage-error.js';
import { openOutput, REPORT_FORMATS, type ReportFormat } from '../verdict-output.js';

export type { CliIo } from '../cli-io.js';

export const SCORE_USAGE = `usage: toolwatch score FILE... (--policy P | --cases C [--policy P]) [options]

  FILE        OTLP traces, read as a stream: JSON Lines (one ExportTraceServiceRequest
              per line, as the Collector's file exporter writes), a single OTLP/JSON
              document, OTLP/protobuf (name ends in .pb or .binpb); gzip when the data
              starts with gzip's magic bytes or the name ends in .gz; - for stdin
  --policy P  the policy file (YAML or JSON)
  --cases C   an eval-dataset case file (see \`toolwatch cases --help\`): each trace is
              judged by the case it is tied to — by the span attribute
              toolwatch.case.id, or with --match-input by its first user message;
              --policy then supplies only sampling, judge budget, redaction and gates
  --match-input
              with --cases: tie traces without the attribute by their input
  --format F  json (default): one verdict object per line, as they are judged;
              table, markdown, html: a report grouped by rule, scorer, tool, intent
              and risk, with the gates and the failing runs; junit: a test case per
              (run, scorer)
  --out PATH  write the output to PATH instead of stdout
  --gate      check the policy's gates (on stderr); a policy without gates gets
              pass_rate: { min: 1 } (every scored run passes); exit 1 when a gate
              fails, when nothing was scored, or when a record was unreadable
  --allow-unreadable
              with --gate: unreadable records do not fail the gate
  --baseline B  verdicts saved by \`toolwatch baseline save\` under the same policy,
              for the *_vs_baseline gates (requires --gate)
  --judges M  a module for llm_judge scorers: exports \`judges\` (by name) or a
              default judge function / AI SDK model (used as \`default\`)
  --window N  a trace is complete when N records have not mentioned it (default
              1000), or at the end of input
  -j, --jobs N
              judge in N threads (default 1; this one and N-1 workers), traces split
              among them by trace id: the same verdicts, written in the order they
              are judged; not with --judges
${policyLimitUsage(14)}
  -h, --help  this text

A summary goes to stderr at the end: runs scored, agent runs found and those no rule
matched (by agent name), or which span conventions toolwatch reads when it found no
agent run; a progress line too while stderr is a terminal.

exit status: 0 scored (and gates held), 1 a gate failed or nothing readable was found
(no span in the input), 2 bad usage, an invalid policy or case file, a baseline from
another policy, or output that cannot be written, 3 internal error (a bug: please
report it)`;

/** `toolwatch score`. */
export async function scoreCommand(argv: string[], io: CliIo, name = 'score'): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    return usageError(io, name, (err as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout(`${SCORE_USAGE}\n`);
    return 0;
  }
  const prefix = `toolwatch ${name}`;
  if (!values.policy && !values.cases) return usageError(io, name, '--policy (or --cases) is required');
  if (values['match-input'] && !values.cases)
    return usageError(io, name, '--match-input only applies with --cases');
  if (positionals.length === 0) return usageError(io, name, 'no trace files given');
  const format = (values.format ?? 'json') as ReportFormat;
  if (!REPORT_FORMATS.includes(format)) return usageError(io, name, `unknown format ${format}`);
  if (values.baseline && !values.gate)
    return usageError(io, name, '--baseline is only used by --gate; add --gate');
  if (values['allow-unreadable'] && !values.gate)
    return usageError(io, name, '--allow-unreadable only applies with --gate');
  let windowSize: number | undefined;
  if (values.window !== undefined) {
    windowSize = Number(values.window);
    if (!Number.isInteger(windowSize) || windowSize < 1)
      return usageError(io, name, '--window must be a positive integer');
  }
  let jobs = 1;
  if (values.jobs !== undefined) {
    jobs = Number(values.jobs);
    if (!Number.isInteger(jobs) || jobs < 1 || jobs > MAX_JOBS)
      return usageError(io, name, `--jobs must be an integer from 1 to ${MAX_JOBS}`);
    // One judge budget (max_per_minute, max_concurrent) cannot be split among threads.
    if (jobs > 1 && values.judges) return usageError(io, name, '--jobs cannot be combined with --judges');
  }
  const limits = policyLimitsOf(values);
  if (typeof limits === 'string') return usageError(io, name, limits);
  if (positionals.filter((f) => f === '-').length > 1)
    return usageError(io, name, '- (stdin) can be given once');
  for (const file of positionals) {
    if (file === '-') continue;
    let directory: boolean;
    try {
      directory = (await stat(file)).isDirectory();
    } catch (err) {
      const reason =
        (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message;
      io.stderr(`${prefix}: cannot read ${file}: ${reason}\n`);
      return 2;
    }
    // A directory is not read as a record that cannot be read (exit 0 without --gate): the
    // user meant its files (a Collector's file exporter rotates into several).
    if (directory) {
      io.stderr(`${prefix}: ${file} is a directory: give its files (for example ${file}/*.jsonl)\n`);
      return 2;
    }
  }

  if (values.out !== undefined) {
    const read = [...positionals, values.baseline, values.policy, values.cases, values.judges];
    const clash = await sameFile(values.out, read);
    if (clash !== undefined) {
      io.stderr(
        `${prefix}: --out ${values.out} is the input ${clash}: it would be emptied before it is read\n`,
      );
      return 2;
    }
  }

  const sources: ScoringSources = {
    ...(values.policy ? { policy: values.policy } : {}),
    ...(values.cases ? { cases: values.cases } : {}),
    matchInput: values['match-input'] === true,
    judge: values.judges !== undefined,
    limits,
  };
  // With --jobs, the workers load the CLI and the policy while this thread does.
  const workers =
    jobs > 1
      ? new (await import('../score-parallel.js')).ShardWorkers({
          jobs,
          sources,
          ...(windowSize !== undefined ? { window: windowSize } : {}),
          lines: format === 'json',
          ...(format === 'html' ? { rebuild: true } : {}),
        })
      : undefined;
  let scoring: Scoring;
  try {
    scoring = await loadScoring(sources);
  } catch (err) {
    workers?.stop();
    io.stderr(`${prefix}: ${err instanceof PolicyError ? err.message : (err as Error).message}\n`);
    return 2;
  }
  const { policy, cases, select } = scoring;

  let baseline: VerdictSummary | undefined;
  if (values.baseline) {
    try {
      baseline = await readBaseline(values.baseline, policy);
    } catch (err) {
      workers?.stop();
      io.stderr(`${prefix}: ${(err as Error).message}\n`);
      return 2;
    }
  }

  let judges: Record<string, unknown> | undefined;
  if (values.judges) {
    try {
      judges = await loadJudges(values.judges);
    } catch (err) {
      io.stderr(`${prefix}: cannot load judges from ${values.judges}: ${(err as Error).message}\n`);
      return 2;
    }
  }

  const log = new ProblemLog(io.stderr, prefix);
  let output: Awaited<ReturnType<typeof openOutput>>;
  try {
    output = await openOutput(format, values.out, io, {
      policy,
      ...(scoring.ruleTags ? { ruleTags: scoring.ruleTags } : {}),
    });
  } catch (err) {
    workers?.stop();
    io.stderr(`${prefix}: ${(err as Error).message}\n`);
    return 2;
  }
  let stats: ScoreStats;
  let summary: VerdictSummary;
  let gates: GateOutcome[] | undefined;
  let failed = false;
  const applied = gatesApplied(policy);
  try {
    if (jobs > 1) {
      const { scoreParallel } = await import('../score-parallel.js');
      ({ stats, summary } = await scoreParallel({
        files: positionals,
        jobs,
        scoring,
        sources,
        ...(workers ? { workers } : {}),
        ...(windowSize !== undefined ? { window: windowSize } : {}),
        lines: format === 'json',
        ...(format === 'html' ? { rebuild: true } : {}),
        onLines: (lines) => output.addLines!(lines),
        onVerdict: (v, file, rebuilt) => output.add(v, file, rebuilt),
        io,
        log,
      }));
    } else {
      const summarizer = new VerdictSummarizer(policy);
      summary = summarizer.summary;
      stats = await scoreStream({
        files: positionals,
        policy,
        ...(select ? { select } : {}),
        ...(judges ? { judges } : {}),
        ...(windowSize !== undefined ? { window: windowSize } : {}),
        io,
        log,
        ...(format === 'html' ? { rebuild: true } : {}),
        onVerdict: (v, file, rebuilt) => {
          summarizer.add(v);
          return output.add(v, file, rebuilt);
        },
      });
    }
    log.finish();

    if (values.gate) {
      gates = checkGates(summary, applied.policy, baseline);
      failed = gates.some((g) => g.status === 'failed');
    }
    await output.finish({
      ...(gates ? { gates } : {}),
      input: { files: stats.files, records: stats.records, unreadable: stats.unreadable },
    });
  } catch (err) {
    // A run that fails leaves no partial output file.
    await output.abort();
    throw err;
  }
  io.stderr(
    `${prefix}: ${stats.runs} runs scored, ${stats.verdicts} verdicts, ${stats.passed} passed, ${stats.files} files, ${stats.unreadable} unreadable records${
      stats.split > 0 ? `, ${stats.split} traces split by the window` : ''
    }${cases ? `, ${stats.unmatched} traces tied to no case` : ''}${stats.unjudged.total > 0 ? `, ${stats.unjudged.total} verdicts judged by no scorer (${stats.unjudged.reasons()})` : ''}\n`,
  );
  for (const note of scoreNotes(stats, policy, prefix)) io.stderr(`${note}\n`);
  // An empty, garbage or cut-off file is never green, --gate or not.
  const nothingRead = stats.spans === 0;
  if (nothingRead)
    io.stderr(
      `${prefix}: nothing readable was found: ${stats.records === 0 && stats.unreadable === 0 ? 'the input holds no trace records' : 'no span could be read'}\n`,
    );
  if (name === 'baseline save' && stats.runs === 0) {
    io.stderr(`${prefix}: nothing was scored, so the baseline holds no verdicts\n`);
    return 1;
  }
  if (!values.gate) return nothingRead ? 1 : 0;
  if (applied.implicit)
    io.stderr(
      `${prefix}: the policy has no gates: --gate applies pass_rate: { min: 1 } (every scored run must pass)\n`,
    );
  for (const g of gates!) io.stderr(`${gateLine(g)}\n`);
  if (stats.runs === 0) {
    io.stderr(`${prefix}: gate FAILED — nothing was scored\n`);
    return 1;
  }
  if (stats.unreadable > 0 && !values['allow-unreadable']) {
    io.stderr(
      `${prefix}: gate FAILED — ${stats.unreadable} unreadable records (pass --allow-unreadable to judge what could be read)\n`,
    );
    return 1;
  }
  return failed ? 1 : 0;
}

/**
 * A baseline's summary, read line by line. Every verdict must carry the current policy's
 * digest: numbers measured under another policy are not comparable.
 */
async function readBaseline(path: string, policy: Policy): Promise<VerdictSummary> {
  const summarizer = new VerdictSummarizer(policy);
  let lineNo = 0;
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Number.POSITIVE_INFINITY });
  try {
    for await (const line of lines) {
      lineNo++;
      if (line.trim() === '') continue;
      let v: Verdict;
      try {
        v = JSON.parse(line) as Verdict;
      } catch {
        throw new Error(
          `baseline ${path}:${lineNo}: not JSON; a baseline is what \`toolwatch baseline save\` writes`,
        );
      }
      if (
        !v ||
        typeof v !== 'object' ||
        !Array.isArray(v.results) ||
        (typeof v.passed !== 'boolean' && v.passed !== null)
      ) {
        throw new Error(`baseline ${path}:${lineNo}: not a verdict`);
      }
      if (v.policy_digest !== policy.digest) {
        throw new Error(
          `baseline ${path} was saved under policy digest ${printable(String(v.policy_digest), 80)}, the current policy's digest is ${policy.digest}; the numbers are not comparable — save a new baseline with this policy`,
        );
      }
      summarizer.add(v);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      throw new Error(`cannot read baseline ${path}: no such file`);
    throw err;
  }
  if (summarizer.summary.runs === 0) throw new Error(`baseline ${path} holds no verdicts`);
  return summarizer.summary;
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      policy: { type: 'string', short: 'p' },
      cases: { type: 'string' },
      'match-input': { type: 'boolean' },
      format: { type: 'string', short: 'f' },
      out: { type: 'string', short: 'o' },
      gate: { type: 'boolean' },
      baseline: { type: 'string' },
      'allow-unreadable': { type: 'boolean' },
      judges: { type: 'string' },
      window: { type: 'string' },
      jobs: { type: 'string', short: 'j' },
      ...POLICY_LIMIT_OPTIONS,
      help: { type: 'boolean', short: 'h' },
    },
  });
}
