import { basename, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { caseTags } from '../../cases/cases-policy.js';
import type { EvalCase } from '../../cases/eval-case.js';
import { loadCases } from '../../cases/load-cases.js';
import { checkGates, emptySummary, gatesApplied } from '../../evaluation/check-gates.js';
import { terminalText } from '../../input/printable.js';
import { PolicyError } from '../../policy/policy-error.js';
import type { PolicyLimits } from '../../policy/policy-limits.js';
import { gateLine } from '../../report/gate-line.js';
import { rolloutsJunit } from '../../report/junit.js';
import { renderHtml } from '../../report/render-html.js';
import { renderMarkdown } from '../../report/render-markdown.js';
import { renderText } from '../../report/render-text.js';
import { ReportBuilder } from '../../report/report-builder.js';
import {
  agentNameOf,
  type RolloutAgent,
  type RunRolloutsResult,
  runRollouts,
} from '../../rollouts/run-rollouts.js';
import { guardAgentProcess } from '../agent-guard.js';
import { writeFileAtomic } from '../atomic-file.js';
import type { CliIo } from '../cli-io.js';
import { loadSettings } from '../load-settings.js';
import { OutsideErrors } from '../outside-errors.js';
import { POLICY_LIMIT_OPTIONS, policyLimitsOf, policyLimitUsage } from '../policy-limit-flags.js';
import { sameFile } from '../same-file.js';
import { loadJudges } from '../scoring.js';
import { UnjudgedTally } from '../unjudged-tally.js';
import { usageError } from '../usage-error.js';
import { REPORT_FORMATS, type ReportFormat } from '../verdict-output.js';

export const ROLLOUTS_USAGE = `usage: toolwatch rollouts --cases C --agent MODULE [-k 6] [-c 6] [options]

Runs the agent k times per case (at most c at once), each rollout inside a span carrying
toolwatch.case.id, judges every rollout in process against its case, and prints the
calibration grid \`case: n_passed/n_scored\` with each row classed saturated-pass (every
scored rollout passed), saturated-fail (none passed) or learning-zone (in between).

  --cases C       the eval-dataset case file (see \`toolwatch cases --help\`)
  --agent MODULE  a module exporting \`async (input, context) => answer\` (default export
                  or \`agent\`); context: { caseId, case, rollout, seed, context, tracer,
                  signal }. Instrument the agent with context.tracer (AI SDK:
                  experimental_telemetry: { isEnabled: true, tracer }) or the global API
  -k N            rollouts per case (default 6)
  -c N, --concurrency N
                  rollouts in flight (default 6)
  --timeout-ms N  per rollout; a rollout over it fails (default 60000)
  --policy P      sampling, judge budget, redaction and gates (a policy file; rules optional
                  and not used)
  --judges M      judges for cases with answer_facts (as for \`toolwatch score\`)
  --format F      table (default), markdown, html, junit (a test per rollout), json
  --out PATH      write the report to PATH instead of stdout
  --gate          check the gates (on stderr); exit 1 when one fails or nothing was scored;
                  a policy without gates gets pass_rate: { min: 1 } (every scored
                  rollout passes)
${policyLimitUsage(18)}
  -h, --help      this text

exit status: 0 done (and gates held), 1 a gate failed, 2 bad usage / invalid cases or
policy / agent module not loadable, 3 internal error`;

/** The longest delay `setTimeout` holds. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const PREFIX = 'toolwatch rollouts';

/** The flags of one rollouts run, checked. */
interface RolloutsFlags {
  cases: string;
  agent: string;
  k: number;
  concurrency: number;
  timeoutMs: number;
  policy?: string;
  judges?: string;
  format: ReportFormat;
  out?: string;
  gate: boolean;
  limits: PolicyLimits;
}

/** The case file, the policy's settings, the agent and its judges, loaded. */
interface RolloutsInputs {
  cases: EvalCase[];
  settings?: Record<string, unknown>;
  agent: RolloutAgent;
  judges?: Record<string, unknown>;
}

/**
 * `toolwatch rollouts`: read the flags → load the cases and the policy → guard the process →
 * load the agent and judges → run the rollouts → write the report → say what was found and
 * whether the gates held. Each phase returns its outcome; a phase that ends the run returns the
 * line to print instead.
 */
export async function rolloutsCommand(argv: string[], io: CliIo): Promise<number> {
  const flags = readRolloutsFlags(argv);
  if ('help' in flags) {
    io.stdout(`${ROLLOUTS_USAGE}\n`);
    return 0;
  }
  if ('usage' in flags) return usageError(io, 'rollouts', flags.usage);
  const clash = await outputOverInput(flags);
  const data = clash === undefined ? await loadData(flags) : { failed: clash };
  if ('failed' in data) return failed(io, data.failed);
  // Guarded from the agent's import on (a module that calls process.exit at its top level is a
  // load error) to the process's end: errors the agent raises outside any rollout are said and
  // counted, and fail --gate, also after the report. (So the guard stays installed once
  // rollouts ran: this command owns its process.)
  const outside = new OutsideErrors(io.stderr, flags.gate);
  const guard = guardAgentProcess((message) => outside.add(message));
  const inputs = await loadAgentAndJudges(flags, data.cases, data.settings);
  const ran =
    'failed' in inputs
      ? inputs
      : await roll(flags, inputs, io).catch((err: unknown) => {
          guard.release();
          throw err;
        });
  if ('failed' in ran) {
    guard.release();
    return failed(io, ran.failed);
  }
  // Timers the agent set that are already due fire now, counted in this report: one that a
  // throwing timer before it deferred could otherwise come after the grid's last await.
  for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setTimeout(resolve, 1));
  if (io.stderrIsTTY) io.stderr('\r\x1b[K');
  const { result, implicit } = withGates(ran, flags.gate);
  const written = await writeReport(render(result, flags.format, caseTags(data.cases)), flags.out, io);
  if (written !== undefined) return failed(io, written);
  const { status, lines } = exitStatus(flags, result, implicit, outside.count);
  for (const line of [...findings(result, flags.k * data.cases.length, outside.count), ...lines])
    io.stderr(`${line}\n`);
  outside.reportOut();
  return status;
}

function failed(io: CliIo, message: string): 2 {
  io.stderr(`${PREFIX}: ${message}\n`);
  return 2;
}

/** The flags, or why they cannot be used (a usage error), or a request for help. */
function readRolloutsFlags(argv: string[]): RolloutsFlags | { help: true } | { usage: string } {
  let values: ReturnType<typeof parse>['values'];
  try {
    ({ values } = parse(argv));
  } catch (err) {
    return { usage: (err as Error).message };
  }
  if (values.help) return { help: true };
  if (!values.cases) return { usage: '--cases is required' };
  if (!values.agent) return { usage: '--agent is required' };
  const format = (values.format ?? 'table') as ReportFormat;
  if (!REPORT_FORMATS.includes(format)) return { usage: `unknown format ${format}` };
  const k = positiveInteger(values.k, 6, '-k');
  if (typeof k === 'string') return { usage: k };
  const concurrency = positiveInteger(values.concurrency, 6, '--concurrency');
  if (typeof concurrency === 'string') return { usage: concurrency };
  const timeoutMs = positiveInteger(values['timeout-ms'], 60_000, '--timeout-ms');
  if (typeof timeoutMs === 'string') return { usage: timeoutMs };
  // Beyond 2^31 - 1 ms Node fires a timer after 1 ms: every rollout would time out at once.
  if (timeoutMs > MAX_TIMER_MS) return { usage: `--timeout-ms must be at most ${MAX_TIMER_MS} (24.8 days)` };
  const limits = policyLimitsOf(values);
  if (typeof limits === 'string') return { usage: limits };
  return {
    cases: values.cases,
    agent: values.agent,
    k,
    concurrency,
    timeoutMs,
    ...(values.policy ? { policy: values.policy } : {}),
    ...(values.judges ? { judges: values.judges } : {}),
    format,
    ...(values.out !== undefined ? { out: values.out } : {}),
    gate: values.gate === true,
    limits,
  };
}

/** `raw` as a positive integer (`fallback` when absent), or the usage error that says it is not one. */
function positiveInteger(raw: string | undefined, fallback: number, flag: string): number | string {
  const n = raw === undefined ? fallback : Number(raw);
  return Number.isInteger(n) && n >= 1 ? n : `${flag} must be a positive integer`;
}

/** --out naming one of the inputs, which writing the report would overwrite. */
async function outputOverInput(flags: RolloutsFlags): Promise<string | undefined> {
  if (flags.out === undefined) return undefined;
  const clash = await sameFile(flags.out, [flags.cases, flags.agent, flags.policy, flags.judges]);
  return clash === undefined
    ? undefined
    : `--out ${flags.out} is the input ${clash}: it would be overwritten`;
}

async function loadData(
  flags: RolloutsFlags,
): Promise<{ cases: EvalCase[]; settings?: Record<string, unknown> } | { failed: string }> {
  try {
    const cases = await loadCases(flags.cases);
    if (!flags.policy) return { cases };
    return { cases, settings: await loadSettings(flags.policy, flags.limits) };
  } catch (err) {
    return { failed: (err as Error).message };
  }
}

async function loadAgentAndJudges(
  flags: RolloutsFlags,
  cases: EvalCase[],
  settings: Record<string, unknown> | undefined,
): Promise<RolloutsInputs | { failed: string }> {
  let agent: RolloutAgent;
  try {
    agent = await loadAgent(flags.agent);
  } catch (err) {
    return { failed: `cannot load the agent from ${flags.agent}: ${terminalText((err as Error).message)}` };
  }
  let judges: Record<string, unknown> | undefined;
  if (flags.judges) {
    try {
      judges = await loadJudges(flags.judges);
    } catch (err) {
      return { failed: `cannot load judges from ${flags.judges}: ${(err as Error).message}` };
    }
  }
  return { cases, agent, ...(settings ? { settings } : {}), ...(judges ? { judges } : {}) };
}

/** Runs every rollout, with a progress line on a terminal; an invalid policy is a failure, anything else a bug. */
async function roll(
  flags: RolloutsFlags,
  { cases, agent, settings, judges }: RolloutsInputs,
  io: CliIo,
): Promise<RunRolloutsResult | { failed: string }> {
  const total = cases.length * flags.k;
  let done = 0;
  try {
    return await runRollouts({
      cases,
      agent,
      agentName: agentName(agent, flags.agent),
      k: flags.k,
      concurrency: flags.concurrency,
      timeoutMs: flags.timeoutMs,
      ...(settings ? { policy: settings } : {}),
      ...(judges ? { judges } : {}),
      registerGlobal: true,
      onRollout: () => {
        done++;
        if (io.stderrIsTTY) io.stderr(`\r\x1b[K${done}/${total} rollouts`);
      },
    });
  } catch (err) {
    if (err instanceof PolicyError) return { failed: err.message };
    throw err;
  }
}

/** With --gate and a policy without gates, every scored rollout must pass (errors fail). */
function withGates(
  result: RunRolloutsResult,
  gate: boolean,
): { result: RunRolloutsResult; implicit: boolean } {
  if (!gate || result.gates.length > 0) return { result, implicit: false };
  const summary = { ...emptySummary(), runs: scoredOf(result), passed: passedOf(result) };
  return {
    result: { ...result, gates: checkGates(summary, gatesApplied(result.policy).policy) },
    implicit: true,
  };
}

function scoredOf(result: RunRolloutsResult): number {
  return result.grid.rows.reduce((a, r) => a + r.scored, 0);
}

function passedOf(result: RunRolloutsResult): number {
  return result.grid.rows.reduce((a, r) => a + r.passed, 0);
}

/** The report to --out (atomically) or stdout; the failure to say when --out cannot be written. */
async function writeReport(text: string, out: string | undefined, io: CliIo): Promise<string | undefined> {
  if (out === undefined) {
    await io.stdout(text);
    return undefined;
  }
  try {
    await writeFileAtomic(out, text);
    return undefined;
  } catch (err) {
    return `cannot write ${out}: ${(err as Error).message}`;
  }
}

/** The summary on stderr: the grid in a line, rollouts without spans, rollouts no scorer judged, errors outside. */
function findings(result: RunRolloutsResult, total: number, outside: number): string[] {
  const errors = result.grid.rows.reduce((a, r) => a + r.errors, 0);
  const lines = [
    `${PREFIX}: ${total} rollouts, ${scoredOf(result)} scored, ${passedOf(result)} passed, ${errors} errors; ${result.grid.rows
      .map((r) => `${r.case} ${r.passed}/${r.scored} ${r.class}`)
      .join(', ')}`,
  ];
  const untraced = result.rollouts.filter((r) => r.agentSpans === 0 && r.error === undefined).length;
  if (untraced > 0)
    lines.push(
      `${PREFIX}: ${untraced} of ${total} rollouts captured no spans from the agent, so their runs have no tool calls: trace the agent with context.tracer (AI SDK: experimental_telemetry: { isEnabled: true, tracer: context.tracer }) or the global tracer provider`,
    );
  // Rollouts judged by no scorer (every result skipped): unscored in the grid; say why.
  const unjudged = new UnjudgedTally();
  for (const r of result.rollouts)
    if (r.error === undefined && r.verdict !== undefined) unjudged.add(r.verdict);
  if (unjudged.total > 0)
    lines.push(
      `${PREFIX}: ${unjudged.total} of ${total} rollouts were judged by no scorer (${unjudged.reasons()}), so they are not scored${unjudged.has('sampled_out') ? ': the policy samples runs (sampling.ratio); rollouts need every run, so remove it from the policy given to rollouts' : ''}`,
    );
  if (outside > 0) lines.push(`${PREFIX}: the agent raised ${outside} errors outside its rollouts`);
  return lines;
}

/**
 * The exit status — 0 done (and the gates held); 1 with --gate when a gate failed, nothing was
 * scored or the agent raised errors outside its rollouts — and the lines that say why.
 */
function exitStatus(
  flags: RolloutsFlags,
  result: RunRolloutsResult,
  implicit: boolean,
  outside: number,
): { status: 0 | 1; lines: string[] } {
  if (!flags.gate) return { status: 0, lines: [] };
  const lines = implicit
    ? [
        `${PREFIX}: the policy has no gates: --gate applies pass_rate: { min: 1 } (every scored rollout must pass)`,
      ]
    : [];
  for (const g of result.gates) lines.push(gateLine(g));
  if (scoredOf(result) === 0)
    return { status: 1, lines: [...lines, `${PREFIX}: gate FAILED — nothing was scored`] };
  if (outside > 0)
    return {
      status: 1,
      lines: [...lines, `${PREFIX}: gate FAILED — the agent raised errors outside its rollouts`],
    };
  return { status: result.gates.some((g) => g.status === 'failed') ? 1 : 0, lines };
}

function render(
  result: RunRolloutsResult,
  format: ReportFormat,
  ruleTags: ReadonlyMap<string, readonly string[]>,
): string {
  if (format === 'json') {
    return `${JSON.stringify({
      grid: result.grid,
      gates: result.gates,
      policy_digest: result.policy.digest,
      rollouts: result.rollouts.map((r) => ({
        case: r.case,
        rollout: r.rollout,
        seed: r.seed,
        trace_id: r.traceId,
        passed: r.passed,
        agent_spans: r.agentSpans,
        ...(r.error !== undefined ? { error: r.error } : {}),
        duration_ms: Math.round(r.durationMs),
        ...(r.verdict ? { verdict: r.verdict } : {}),
      })),
    })}\n`;
  }
  if (format === 'junit') return rolloutsJunit(result.rollouts, result.policy.redact);
  const builder = new ReportBuilder({ policy: result.policy, title: 'toolwatch rollouts', ruleTags });
  for (const r of result.rollouts) {
    const where = `${r.case} #${r.rollout}`;
    if (r.verdict) builder.add(r.verdict, where);
    if (r.error !== undefined) {
      builder.addFailing({
        trace_id: r.traceId,
        span_id: r.verdict?.span_id ?? '',
        agent: result.agent,
        rule: r.case,
        file: where,
        reasons: [`rollout error: ${r.error}`],
      });
    }
  }
  builder.setGrid(result.grid);
  builder.setGates(result.gates);
  const report = builder.build();
  // An agent's error messages and answers reach a terminal or a PR comment: control bytes escaped.
  return format === 'table'
    ? terminalText(renderText(report))
    : format === 'markdown'
      ? terminalText(renderMarkdown(report))
      : renderHtml(report);
}

/**
 * The agent function's own name, else (an anonymous default export, or the `agent` export the
 * module is asked for) its module's file name: `agents/weather.mjs` runs as `weather`.
 */
function agentName(agent: RolloutAgent, path: string): string {
  const own = agentNameOf(agent);
  return own === 'agent' ? basename(path).replace(/\.[cm]?[jt]sx?$/, '') || own : own;
}

async function loadAgent(path: string): Promise<RolloutAgent> {
  const mod = (await import(pathToFileURL(resolve(path)).href)) as { default?: unknown; agent?: unknown };
  const fn = typeof mod.default === 'function' ? mod.default : mod.agent;
  if (typeof fn !== 'function') throw new Error('the module exports no function (default export or `agent`)');
  return fn as RolloutAgent;
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      cases: { type: 'string' },
      agent: { type: 'string' },
      k: { type: 'string', short: 'k' },
      concurrency: { type: 'string', short: 'c' },
      'timeout-ms': { type: 'string' },
      policy: { type: 'string', short: 'p' },
      judges: { type: 'string' },
      format: { type: 'string', short: 'f' },
      out: { type: 'string', short: 'o' },
      gate: { type: 'boolean' },
      ...POLICY_LIMIT_OPTIONS,
      help: { type: 'boolean', short: 'h' },
    },
  });
}
