import { readFile, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { evaluateTraces } from '../../evaluation/evaluate-traces.js';
import { loadPolicy } from '../../policy/load-policy.js';
import { PolicyError } from '../../policy/policy-error.js';
import type { Problem } from '../../types.js';

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

export const SCORE_USAGE = `usage: toolwatch score FILE... --policy P [--format json] [--out PATH]

  FILE        OTLP/JSON: one ExportTraceServiceRequest per file, or JSON Lines
              (one request per line, as the Collector's file exporter writes)
  --policy    the policy file (YAML or JSON)
  --format    json (default): one verdict object per line
  --out       write verdicts to PATH instead of stdout`;

const LATER_FORMATS = new Set(['table', 'junit', 'markdown', 'html']);

/** `toolwatch score`: exit 0 scored, 2 bad usage or unreadable policy. */
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
  const format = values.format ?? 'json';
  if (format !== 'json') {
    return usage(
      io,
      LATER_FORMATS.has(format)
        ? `--format ${format} is not available yet; use json`
        : `unknown format ${format}`,
    );
  }

  let policy: Awaited<ReturnType<typeof loadPolicy>>;
  try {
    policy = await loadPolicy(values.policy);
  } catch (err) {
    io.stderr(`toolwatch score: ${err instanceof PolicyError ? err.message : (err as Error).message}\n`);
    return 2;
  }

  const requests: unknown[] = [];
  for (const file of positionals) {
    if (/\.(bin)?pb$/i.test(file))
      return usage(io, `${file}: OTLP/protobuf input is not available yet; use OTLP/JSON`);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      io.stderr(`toolwatch score: cannot read ${file}: ${(err as Error).message}\n`);
      return 2;
    }
    for (const request of readRequests(text, file, io)) requests.push(request);
  }

  const problems: Problem[] = [];
  const verdicts = await evaluateTraces(requests, policy, { problems });
  for (const p of problems) io.stderr(`toolwatch score: ${p.code}: ${p.message}\n`);
  const out = verdicts.map((v) => `${JSON.stringify(v)}\n`).join('');
  if (values.out) await writeFile(values.out, out);
  else io.stdout(out);
  return 0;
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
