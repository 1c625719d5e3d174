import { parseArgs } from 'node:util';
import { CasesError, loadCases } from '../../cases/load-cases.js';
import type { CliIo } from '../cli-io.js';
import { usageError } from '../usage-error.js';

export const CASES_USAGE = `usage: toolwatch cases check FILE

Validates an eval-dataset case file and lists every problem by path. FILE is YAML (a list
of cases, or a mapping with \`cases:\`) or JSON Lines (.jsonl/.ndjson, one case per line).
A case has an id, an input, and the trajectory fields of a policy: expected_tools,
forbidden_tools, max_calls, arg_constraints, expected_order, pass_threshold, risk,
intent (also order, max_repeats, weights, scope); plus context, answer_facts, tags,
and guard: { mode: enforce|observe, checks: [forbidden, unexpected, call_budget,
repeated_call, arguments] } (default enforce and all five), which makes the case's rule
decide tool calls before they run (checkToolCall, the gateway's POST /v1/guard).

exit status: 0 valid, 2 invalid or unreadable, 3 internal error`;

/** `toolwatch cases check FILE`. */
export async function casesCommand(argv: string[], io: CliIo): Promise<number> {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: { help: { type: 'boolean', short: 'h' } },
    });
  } catch (err) {
    return usageError(io, 'cases', (err as Error).message);
  }
  if (parsed.values.help) {
    io.stdout(`${CASES_USAGE}\n`);
    return 0;
  }
  const [sub, file, ...extra] = parsed.positionals;
  if (sub !== 'check' || !file || extra.length > 0) {
    return usageError(io, 'cases', sub !== 'check' ? 'unknown subcommand' : 'give one case file');
  }
  try {
    const cases = await loadCases(file);
    const tagged = cases.filter((c) => c.answer_facts).length;
    io.stdout(
      `${file}: ${cases.length} cases ok${tagged > 0 ? ` (${tagged} with answer_facts, judged when a judge is configured)` : ''}\n`,
    );
    return 0;
  } catch (err) {
    if (err instanceof CasesError) {
      io.stderr(`toolwatch cases: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
}
