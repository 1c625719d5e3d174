import { basename, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { caseTags } from '../../cases/cases-policy.js';
import { loadCases } from '../../cases/load-cases.js';
import { checkGates, emptySummary, gatesApplied } from '../../evaluation/check-gates.js';
import { terminalText } from '../../input/printable.js';
import { PolicyError } from '../../policy/policy-error.js';
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

/** `toolwatch rollouts`. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export async function rolloutsCommand(argv: string[], io: CliIo): Promise<number> {
  let values: ReturnType<typeof parse>['values'];
  try {
    ({ values } = parse(argv));
  } catch (err) {
    return usageError(io, 'rollouts', (err as Error).message);
  }
  if (values.help) {
    io.stdout(`${ROLLOUTS_USAGE}\n`);
    return 0;
  }
  if (!values.cases) return usageError(io, 'rollouts', '--cases is required');
  if (!values.agent) return usageError(io, 'rollouts', '--agent is required');
  const format = (values.format ?? 'table') as ReportFormat;
  if (!REPORT_FORMATS.includes(format)) return usageError(io, 'rollouts', `unknown format ${format}`);
  const ints: Record<string, number> = {};
  for (const [name, raw, fallback] of [
    ['k', values.k, 6],
    ['concurrency', values.concurrency, 6],
    ['timeout-ms', values['timeout-ms'], 60_000],
  ] as const) {
    const n = raw === undefined ? fallback : Number(raw);
    if (!Number.isInteger(n) || n < 1)
      return usageError(io, 'rollouts', `${name === 'k' ? '-k' : `--${name}`} must be a positive integer`);
    // Beyond 2^31 - 1 ms Node fires a timer after 1 ms: every rollout would time out at once.
    if (name === 'timeout-ms' && n > MAX_TIMER_MS)
      return usageError(io, 'rollouts', `--timeout-ms must be at most ${MAX_TIMER_MS} (24.8 days)`);
    ints[name] = n;
  }

  const limits = policyLimitsOf(values);
  if (typeof limits === 'string') return usageError(io, 'rollouts', limits);

  if (values.out !== undefined) {
    const clash = await sameFile(values.out, [values.cases, values.agent, values.policy, values.judges]);
    if (clash !== undefined) {
      io.stderr(`toolwatch rollouts: --out ${values.out} is the input ${clash}: it would be overwritten\n`);
      return 2;
    }
  }

  let cases: Awaited<ReturnType<typeof loadCases>>;
  let settings: Record<string, unknown> | undefined;
  try {
    cases = await loadCases(values.cases);
    if (values.policy) settings = await loadSettings(values.policy, limits);
  } catch (err) {
    io.stderr(`toolwatch rollouts: ${(err as Error).message}\n`);
    return 2;
  }
  // Guarded from the agent's import on (a module that calls process.exit at its top level is a
  // load error) to the process's end: errors the agent raises outside any rollout (its timers,
  // promises it never awaited) are each said once, all counted, and fail --gate — also those
  // its leftover timers raise after the report, through the exit status. (So the guard stays
  // installed once rollouts ran: this command owns its process.)
  const outside = new Set<string>();
  let outsideCount = 0;
  let reported = false;
  const guard = guardAgentProcess((message) => {
    outsideCount++;
    if (reported && values.gate) process.exitCode = 1;
    if (outside.size >= 20 || outside.has(message)) return;
    outside.add(message);
    io.stderr(
      `toolwatch rollouts: the agent raised an error ${reported ? 'after its rollouts ended' : 'outside its rollouts'}: ${terminalText(message)}\n`,
    );
  });
  let agent: RolloutAgent;
  try {
    agent = await loadAgent(values.agent);
  } catch (err) {
    guard.release();
    io.stderr(
      `toolwatch rollouts: cannot load the agent from ${values.agent}: ${terminalText((err as Error).message)}\n`,
    );
    return 2;
  }
  let judges: Record<string, unknown> | undefined;
  if (values.judges) {
    try {
      judges = await loadJudges(values.judges);
    } catch (err) {
      guard.release();
      io.stderr(`toolwatch rollouts: cannot load judges from ${values.judges}: ${(err as Error).message}\n`);
      return 2;
    }
  }

  let result: RunRolloutsResult;
  let done = 0;
  const total = cases.length * ints.k!;
  try {
    result = await runRollouts({
      cases,
      agent,
      agentName: agentName(agent, values.agent),
      k: ints.k!,
      concurrency: ints.concurrency!,
      timeoutMs: ints['timeout-ms']!,
      ...(settings ? { policy: settings } : {}),
      ...(judges ? { judges } : {}),
      registerGlobal: true,
      onRollout: () => {
        done++;
        if (io.stderrIsTTY) io.stderr(`\r\x1b[K${done}/${total} rollouts`);
      },
    });
  } catch (err) {
    guard.release();
    if (err instanceof PolicyError) {
      io.stderr(`toolwatch rollouts: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  // Timers the agent set that are already due fire now, counted in this report: one that a
  // throwing timer before it deferred could otherwise come after the grid's last await.
  for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setTimeout(resolve, 1));
  if (io.stderrIsTTY) io.stderr('\r\x1b[K');

  // A policy without gates: --gate requires every scored rollout to pass (errors fail).
  const implicit = values.gate === true && result.gates.length === 0;
  if (implicit) {
    const rows = result.grid.rows;
    const summary = {
      ...emptySummary(),
      runs: rows.reduce((a, r) => a + r.scored, 0),
      passed: rows.reduce((a, r) => a + r.passed, 0),
    };
    result = { ...result, gates: checkGates(summary, gatesApplied(result.policy).policy) };
  }
  const text = render(result, format, caseTags(cases));
  if (values.out) {
    try {
      await writeFileAtomic(values.out, text);
    } catch (err) {
      io.stderr(`toolwatch rollouts: cannot write ${values.out}: ${(err as Error).message}\n`);
      return 2;
    }
  } else await io.stdout(text);

  const scored = result.grid.rows.reduce((a, r) => a + r.scored, 0);
  const passed = result.grid.rows.reduce((a, r) => a + r.passed, 0);
  const errors = result.grid.rows.reduce((a, r) => a + r.errors, 0);
  io.stderr(
    `toolwatch rollouts: ${total} rollouts, ${scored} scored, ${passed} passed, ${errors} errors; ${result.grid.rows
      .map((r) => `${r.case} ${r.passed}/${r.scored} ${r.class}`)
      .join(', ')}\n`,
  );
  const untraced = result.rollouts.filter((r) => r.agentSpans === 0 && r.error === undefined).length;
  if (untraced > 0)
    io.stderr(
      `toolwatch rollouts: ${untraced} of ${total} rollouts captured no spans from the agent, so their runs have no tool calls: trace the agent with context.tracer (AI SDK: experimental_telemetry: { isEnabled: true, tracer: context.tracer }) or the global tracer provider\n`,
    );
  // Rollouts judged by no scorer (every result skipped): unscored in the grid; say why.
  const unjudged = new UnjudgedTally();
  for (const r of result.rollouts)
    if (r.error === undefined && r.verdict !== undefined) unjudged.add(r.verdict);
  if (unjudged.total > 0) {
    io.stderr(
      `toolwatch rollouts: ${unjudged.total} of ${total} rollouts were judged by no scorer (${unjudged.reasons()}), so they are not scored${unjudged.has('sampled_out') ? ': the policy samples runs (sampling.ratio); rollouts need every run, so remove it from the policy given to rollouts' : ''}\n`,
    );
  }
  if (outsideCount > 0)
    io.stderr(`toolwatch rollouts: the agent raised ${outsideCount} errors outside its rollouts\n`);
  reported = true;
  if (!values.gate) return 0;
  if (implicit)
    io.stderr(
      'toolwatch rollouts: the policy has no gates: --gate applies pass_rate: { min: 1 } (every scored rollout must pass)\n',
    );
  for (const g of result.gates) io.stderr(`${gateLine(g)}\n`);
  if (scored === 0) {
    io.stderr('toolwatch rollouts: gate FAILED — nothing was scored\n');
    return 1;
  }
  if (outsideCount > 0) {
    io.stderr('toolwatch rollouts: gate FAILED — the agent raised errors outside its rollouts\n');
    return 1;
  }
  return result.gates.some((g) => g.status === 'failed') ? 1 : 0;
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
