import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { checkGates, type GateOutcome } from '../../evaluation/check-gates.js';
import { evaluateTraces } from '../../evaluation/evaluate-traces.js';
import { loadPolicy } from '../../policy/load-policy.js';
import { PolicyError } from '../../policy/policy-error.js';
import type { Problem, Verdict } from '../../types.js';
import { formatVerdicts, REPORT_FORMATS, type ReportFormat } from '../format-verdicts.js';
import { otlpJsonFromProtobuf } from '../../otlp/otlp-protobuf.js';

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

export const SCORE_USAGE = `usage: toolwatch score FILE... --policy P [--format json|table|junit|markdown|html] [--out PATH] [--gate] [--baseline B] [--judges MODULE]

  FILE        OTLP/JSON: one ExportTraceServiceRequest per file, or JSON Lines
              (one request per line, as the Collector's file exporter writes);
              OTLP/protobuf when the name ends in .pb or .binpb
  --policy    the policy file (YAML or JSON)
  --format    json (default): one verdict object per line; table: one line per verdict;
              junit: a test case per (run, scorer); markdown: for PR comments; html
  --out       write verdicts to PATH instead of stdout
  --gate      check the policy's gates (report on stderr); exit 1 when one fails
  --baseline  verdicts of an earlier run (JSON Lines, as --format json writes them)
              for the *_vs_baseline gates
  --judges    a module for llm_judge scorers: exports \`judges\` (by name) or a
              default judge function / AI SDK model (used as \`default\`)

exit status: 0 scored (and gates held), 1 a gate failed, 2 bad usage or invalid policy`;

/** `toolwatch score`: exit 0 scored (gates held), 1 a gate failed, 2 bad usage or unreadable policy. */
export async function scoreCommand(argv: string[], io: CliIo): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    io.stderr(`toolwatch score: ${(err as Error).message}\n${SCORE_USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout(`${SCORE_USAGE}\n`);
    return 0;
  }
  if (!values.policy) return usage(io, '--policy is required');
  if (positionals.length === 0) return usage(io, 'no trace files given');
  const format = (values.format ?? 'json') as ReportFormat;
  if (!REPORT_FORMATS.includes(format)) return usage(io, `unknown format ${format}`);

  let policy: Awaited<ReturnType<typeof loadPolicy>>;
  try {
    policy = await loadPolicy(values.policy);
  } catch (err) {
    io.stderr(`toolwatch score: ${err instanceof PolicyError ? err.message : (err as Error).message}\n`);
    return 2;
  }

  const requests: unknown[] = [];
  for (const file of positionals) {
    let bytes: Buffer;
    try {
      bytes = await readFile(file);
    } catch (err) {
      io.stderr(`toolwatch score: cannot read ${file}: ${(err as Error).message}\n`);
      return 2;
    }
    if (/\.(bin)?pb$/i.test(file)) {
      try {
        requests.push(otlpJsonFromProtobuf(bytes));
      } catch (err) {
        io.stderr(`toolwatch score: ${file}: skipped unreadable OTLP/protobuf (${(err as Error).message})\n`);
      }
      continue;
    }
    for (const request of readRequests(bytes.toString('utf8'), file, io)) requests.push(request);
  }

  let baseline: Verdict[] | undefined;
  if (values.baseline) {
    try {
      baseline = readVerdicts(await readFile(values.baseline, 'utf8'));
    } catch (err) {
      io.stderr(`toolwatch score: cannot read baseline ${values.baseline}: ${(err as Error).message}\n`);
      return 2;
    }
  }

  let judges: Record<string, unknown> | undefined;
  if (values.judges) {
    try {
      judges = await loadJudges(values.judges);
    } catch (err) {
      io.stderr(`toolwatch score: cannot load judges from ${values.judges}: ${(err as Error).message}\n`);
      return 2;
    }
  }

  const problems: Problem[] = [];
  const verdicts = await evaluateTraces(requests, policy, { problems, ...(judges ? { judges } : {}) });
  for (const p of problems) io.stderr(`toolwatch score: ${p.code}: ${p.message}\n`);
  const out = formatVerdicts(verdicts, format, policy.redact);
  if (values.out) await writeFile(values.out, out);
  else io.stdout(out);

  if (!values.gate) return 0;
  const gates = checkGates(verdicts, policy, baseline);
  for (const g of gates) io.stderr(`${gateLine(g)}\n`);
  if (gates.length === 0) io.stderr('toolwatch score: the policy has no gates\n');
  return gates.every((g) => g.held) ? 0 : 1;
}

function gateLine(g: GateOutcome): string {
  const [[op, limit]] = Object.entries(g.threshold) as [[string, number]];
  const value = g.value === null ? 'n/a' : Number(g.value.toFixed(4)).toString();
  // A missing baseline value is explained by the note.
  const base = typeof g.baseline === 'number' ? ` baseline ${Number(g.baseline.toFixed(4))}` : '';
  return `gate ${g.gate}: ${value}${base} (${op} ${limit}) ${g.held ? 'held' : 'FAILED'}${g.note ? ` — ${g.note}` : ''}`;
}

/** `judges` by name, or the default export as the `default` judge. */
async function loadJudges(path: string): Promise<Record<string, unknown>> {
  const mod = (await import(pathToFileURL(resolve(path)).href)) as { judges?: unknown; default?: unknown };
  if (mod.judges && typeof mod.judges === 'object') return mod.judges as Record<string, unknown>;
  if (mod.default !== undefined) return { default: mod.default };
  throw new Error('the module exports neither `judges` nor a default judge');
}

/** Verdict objects, one per line; anything else is an error. */
function readVerdicts(text: string): Verdict[] {
  const out: Verdict[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    const v = JSON.parse(line) as Verdict;
    if (!v || typeof v !== 'object' || !Array.isArray(v.results) || typeof v.passed !== 'boolean') {
      throw new Error(`line ${i + 1} is not a verdict`);
    }
    out.push(v);
  });
  return out;
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      policy: { type: 'string', short: 'p' },
      format: { type: 'string', short: 'f' },
      out: { type: 'string', short: 'o' },
      gate: { type: 'boolean' },
      baseline: { type: 'string' },
      judges: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

function usage(io: CliIo, message: string): number {
  io.stderr(`toolwatch score: ${message}\n${SCORE_USAGE}\n`);
  return 2;
}

/** A whole-file JSON document, or JSON Lines; unreadable lines are reported and skipped. */
function readRequests(text: string, file: string, io: CliIo): unknown[] {
  try {
    return [JSON.parse(text)];
  } catch {
    // Not one document: JSON Lines.
  }
  const out: unknown[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      out.push(JSON.parse(line));
    } catch (err) {
      io.stderr(`toolwatch score: ${file}:${i + 1}: skipped unreadable line (${(err as Error).message})\n`);
    }
  });
  return out;
}
