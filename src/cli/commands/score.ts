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
import type { ShardWorkers } from '../score-parallel.js';
import { type ScoreStats, scoreStream } from '../score-stream.js';
import { loadJudges, loadScoring, type Scoring, type ScoringSources } from '../scoring.js';
import { MAX_JOBS } from '../trace-shards.js';
import { usageError } from '../usage-error.js';
import { openOutput, REPORT_FORMATS, type ReportFormat, type VerdictOutput } from '../verdict-output.js';

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

/** The flags of one score run, checked against each other. */
interface ScoreFlags {
  files: string[];
  format: ReportFormat;
  out?: string;
  gate: boolean;
  allowUnreadable: boolean;
  baseline?: string;
  judges?: string;
  window?: number;
  jobs: number;
  sources: ScoringSources;
}

/** What a score run judges with, loaded, and where its verdicts go. */
interface ScoreInputs {
  scoring: Scoring;
  baseline?: VerdictSummary;
  judges?: Record<string, unknown>;
  workers?: ShardWorkers;
  output: VerdictOutput;
}

/** What judging found: the counts, and the gates when --gate checked them. */
interface Judged {
  stats: ScoreStats;
  gates?: { outcomes: GateOutcome[]; implicit: boolean };
}

/**
 * `toolwatch score`: read the flags → check the paths → load the policy, baseline, judges and
 * output → judge → say what was found and whether the gates held. Each phase returns its
 * outcome; a phase that ends the run returns the line to print instead.
 */
export async function scoreCommand(argv: string[], io: CliIo, name = 'score'): Promise<number> {
  const prefix = `toolwatch ${name}`;
  const flags = readScoreFlags(argv);
  if ('help' in flags) {
    io.stdout(`${SCORE_USAGE}\n`);
    return 0;
  }
  if ('usage' in flags) return usageError(io, name, flags.usage);
  const unusable = (await unreadableInput(flags)) ?? (await outputOverInput(flags));
  const inputs = unusable === undefined ? await loadInputs(flags, io) : { failed: unusable };
  if ('failed' in inputs) {
    io.stderr(`${prefix}: ${inputs.failed}\n`);
    return 2;
  }
  const judged = await judge(flags, inputs, io, new ProblemLog(io.stderr, prefix));
  const { status, lines } = exitStatus(flags, judged, prefix, name);
  for (const line of [...findings(judged.stats, inputs.scoring, prefix), ...lines]) io.stderr(`${line}\n`);
  return status;
}

/** The flags, or why they cannot be used together (a usage error), or a request for help. */
function readScoreFlags(argv: string[]): ScoreFlags | { help: true } | { usage: string } {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    return { usage: (err as Error).message };
  }
  const { values, positionals } = parsed;
  if (values.help) return { help: true };
  if (!values.policy && !values.cases) return { usage: '--policy (or --cases) is required' };
  if (values['match-input'] && !values.cases) return { usage: '--match-input only applies with --cases' };
  if (positionals.length === 0) return { usage: 'no trace files given' };
  const format = (values.format ?? 'json') as ReportFormat;
  if (!REPORT_FORMATS.includes(format)) return { usage: `unknown format ${format}` };
  if (values.baseline && !values.gate) return { usage: '--baseline is only used by --gate; add --gate' };
  if (values['allow-unreadable'] && !values.gate)
    return { usage: '--allow-unreadable only applies with --gate' };
  const window = values.window === undefined ? undefined : Number(values.window);
  if (window !== undefined && (!Number.isInteger(window) || window < 1))
    return { usage: '--window must be a positive integer' };
  const jobs = values.jobs === undefined ? 1 : Number(values.jobs);
  if (!Number.isInteger(jobs) || jobs < 1 || jobs > MAX_JOBS)
    return { usage: `--jobs must be an integer from 1 to ${MAX_JOBS}` };
  // One judge budget (max_per_minute, max_concurrent) cannot be split among threads.
  if (jobs > 1 && values.judges) return { usage: '--jobs cannot be combined with --judges' };
  const limits = policyLimitsOf(values);
  if (typeof limits === 'string') return { usage: limits };
  if (positionals.filter((f) => f === '-').length > 1) return { usage: '- (stdin) can be given once' };
  return {
    files: positionals,
    format,
    ...(values.out !== undefined ? { out: values.out } : {}),
    gate: values.gate === true,
    allowUnreadable: values['allow-unreadable'] === true,
    ...(values.baseline ? { baseline: values.baseline } : {}),
    ...(values.judges ? { judges: values.judges } : {}),
    ...(window !== undefined ? { window } : {}),
    jobs,
    sources: {
      ...(values.policy ? { policy: values.policy } : {}),
      ...(values.cases ? { cases: values.cases } : {}),
      matchInput: values['match-input'] === true,
      judge: values.judges !== undefined,
      limits,
    },
  };
}

/** Why an input file cannot be read, checked before anything is loaded. */
async function unreadableInput(flags: ScoreFlags): Promise<string | undefined> {
  for (const file of flags.files) {
    if (file === '-') continue;
    let directory: boolean;
    try {
      directory = (await stat(file)).isDirectory();
    } catch (err) {
      const reason =
        (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message;
      return `cannot read ${file}: ${reason}`;
    }
    // A directory is not read as a record that cannot be read (exit 0 without --gate): the
    // user meant its files (a Collector's file exporter rotates into several).
    if (directory) return `${file} is a directory: give its files (for example ${file}/*.jsonl)`;
  }
  return undefined;
}

/** --out naming one of the inputs, which opening it would empty before it is read. */
async function outputOverInput(flags: ScoreFlags): Promise<string | undefined> {
  if (flags.out === undefined) return undefined;
  const { policy, cases } = flags.sources;
  const clash = await sameFile(flags.out, [...flags.files, flags.baseline, policy, cases, flags.judges]);
  return clash === undefined
    ? undefined
    : `--out ${flags.out} is the input ${clash}: it would be emptied before it is read`;
}

/**
 * The policy (or cases), baseline, judges and output, in that order, or the first failure;
 * with --jobs, the workers load the CLI and the policy while this thread does.
 */
async function loadInputs(flags: ScoreFlags, io: CliIo): Promise<ScoreInputs | { failed: string }> {
  const workers =
    flags.jobs > 1
      ? new (await import('../score-parallel.js')).ShardWorkers({
          jobs: flags.jobs,
          sources: flags.sources,
          ...(flags.window !== undefined ? { window: flags.window } : {}),
          lines: flags.format === 'json',
          ...(flags.format === 'html' ? { rebuild: true } : {}),
        })
      : undefined;
  const loaded = await loadEach(flags, io);
  if ('failed' in loaded) {
    workers?.stop();
    return loaded;
  }
  return { ...loaded, ...(workers ? { workers } : {}) };
}

async function loadEach(flags: ScoreFlags, io: CliIo): Promise<ScoreInputs | { failed: string }> {
  let scoring: Scoring;
  try {
    scoring = await loadScoring(flags.sources);
  } catch (err) {
    return { failed: err instanceof PolicyError ? err.message : (err as Error).message };
  }
  let baseline: VerdictSummary | undefined;
  if (flags.baseline) {
    try {
      baseline = await readBaseline(flags.baseline, scoring.policy);
    } catch (err) {
      return { failed: (err as Error).message };
    }
  }
  let judges: Record<string, unknown> | undefined;
  if (flags.judges) {
    try {
      judges = await loadJudges(flags.judges);
    } catch (err) {
      return { failed: `cannot load judges from ${flags.judges}: ${(err as Error).message}` };
    }
  }
  try {
    const output = await openOutput(flags.format, flags.out, io, {
      policy: scoring.policy,
      ...(scoring.ruleTags ? { ruleTags: scoring.ruleTags } : {}),
    });
    return { scoring, output, ...(baseline ? { baseline } : {}), ...(judges ? { judges } : {}) };
  } catch (err) {
    return { failed: (err as Error).message };
  }
}

/** Judges every trace (here, or in --jobs threads), then checks the gates and finishes the output. */
async function judge(flags: ScoreFlags, inputs: ScoreInputs, io: CliIo, log: ProblemLog): Promise<Judged> {
  const { output, scoring } = inputs;
  try {
    const { stats, summary } =
      flags.jobs > 1 ? await judgeInThreads(flags, inputs, io, log) : await judgeHere(flags, inputs, io, log);
    log.finish();
    let gates: Judged['gates'];
    if (flags.gate) {
      const applied = gatesApplied(scoring.policy);
      gates = { outcomes: checkGates(summary, applied.policy, inputs.baseline), implicit: applied.implicit };
    }
    await output.finish({
      ...(gates ? { gates: gates.outcomes } : {}),
      input: { files: stats.files, records: stats.records, unreadable: stats.unreadable },
    });
    return { stats, ...(gates ? { gates } : {}) };
  } catch (err) {
    // A run that fails leaves no partial output file.
    await output.abort();
    throw err;
  }
}

async function judgeHere(
  flags: ScoreFlags,
  { scoring, judges, output }: ScoreInputs,
  io: CliIo,
  log: ProblemLog,
): Promise<{ stats: ScoreStats; summary: VerdictSummary }> {
  const summarizer = new VerdictSummarizer(scoring.policy);
  const stats = await scoreStream({
    files: flags.files,
    policy: scoring.policy,
    ...(scoring.select ? { select: scoring.select } : {}),
    ...(judges ? { judges } : {}),
    ...(flags.window !== undefined ? { window: flags.window } : {}),
    io,
    log,
    ...(flags.format === 'html' ? { rebuild: true } : {}),
    onVerdict: (v, file, rebuilt) => {
      summarizer.add(v);
      return output.add(v, file, rebuilt);
    },
  });
  return { stats, summary: summarizer.summary };
}

async function judgeInThreads(
  flags: ScoreFlags,
  { scoring, workers, output }: ScoreInputs,
  io: CliIo,
  log: ProblemLog,
): Promise<{ stats: ScoreStats; summary: VerdictSummary }> {
  const { scoreParallel } = await import('../score-parallel.js');
  return scoreParallel({
    files: flags.files,
    jobs: flags.jobs,
    scoring,
    sources: flags.sources,
    ...(workers ? { workers } : {}),
    ...(flags.window !== undefined ? { window: flags.window } : {}),
    lines: flags.format === 'json',
    ...(flags.format === 'html' ? { rebuild: true } : {}),
    onLines: (lines) => output.addLines!(lines),
    onVerdict: (v, file, rebuilt) => output.add(v, file, rebuilt),
    io,
    log,
  });
}

/** The summary lines on stderr: what was scored, what was read, what no rule or scorer took. */
function findings(stats: ScoreStats, { policy, cases }: Scoring, prefix: string): string[] {
  const lines = [
    `${prefix}: ${stats.runs} runs scored, ${stats.verdicts} verdicts, ${stats.passed} passed, ${stats.files} files, ${stats.unreadable} unreadable records${
      stats.split > 0 ? `, ${stats.split} traces split by the window` : ''
    }${cases ? `, ${stats.unmatched} traces tied to no case` : ''}${stats.unjudged.total > 0 ? `, ${stats.unjudged.total} verdicts judged by no scorer (${stats.unjudged.reasons()})` : ''}`,
    ...scoreNotes(stats, policy, prefix),
  ];
  // An empty, garbage or cut-off file is never green, --gate or not.
  if (stats.spans === 0)
    lines.push(
      `${prefix}: nothing readable was found: ${stats.records === 0 && stats.unreadable === 0 ? 'the input holds no trace records' : 'no span could be read'}`,
    );
  return lines;
}

/**
 * The exit status — 0 when scored (and the gates held); 1 when nothing was read, scored or
 * saved, or a gate failed — and the lines that say why.
 */
function exitStatus(
  flags: ScoreFlags,
  { stats, gates }: Judged,
  prefix: string,
  name: string,
): { status: 0 | 1; lines: string[] } {
  if (name === 'baseline save' && stats.runs === 0)
    return { status: 1, lines: [`${prefix}: nothing was scored, so the baseline holds no verdicts`] };
  if (gates === undefined) return { status: stats.spans === 0 ? 1 : 0, lines: [] };
  const lines = gates.implicit
    ? [
        `${prefix}: the policy has no gates: --gate applies pass_rate: { min: 1 } (every scored run must pass)`,
      ]
    : [];
  for (const g of gates.outcomes) lines.push(gateLine(g));
  if (stats.runs === 0)
    return { status: 1, lines: [...lines, `${prefix}: gate FAILED — nothing was scored`] };
  if (stats.unreadable > 0 && !flags.allowUnreadable) {
    lines.push(
      `${prefix}: gate FAILED — ${stats.unreadable} unreadable records (pass --allow-unreadable to judge what could be read)`,
    );
    return { status: 1, lines };
  }
  return { status: gates.outcomes.some((g) => g.status === 'failed') ? 1 : 0, lines };
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
