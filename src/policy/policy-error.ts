import { printable } from '../input/printable.js';

/** One thing wrong with a policy, at a path like `rules[0].scorers[2].expected_tool_order`. */
export interface PolicyProblem {
  path: string;
  message: string;
  /** 1-based line in the policy text, when the policy came from text. */
  line?: number;
  /** 1-based column in the policy text, when the policy came from text. */
  column?: number;
}

/** A policy that cannot be used; `problems` lists everything wrong with it, not just the first. */
export class PolicyError extends Error {
  readonly problems: PolicyProblem[];

  constructor(problems: PolicyProblem[], source?: string) {
    const head = `invalid toolwatch policy${source ? ` ${source}` : ''} (${problems.length} problem${problems.length === 1 ? '' : 's'})`;
    super([head, ...problems.map((p) => `  ${describeProblem(p)}`)].join('\n'));
    this.name = 'PolicyError';
    this.problems = problems;
  }
}

/**
 * `rules[0].scorers[1].forbiden_tools: unknown key … (line 9, column 9)`; `line 3, column 1: …`
 * for syntax. Control bytes are escaped: messages can quote the file (a JSON parser's error
 * shows the text it stopped at), and the message is printed on a terminal.
 */
function describeProblem(p: PolicyProblem): string {
  const where = p.line !== undefined ? `line ${p.line}, column ${p.column ?? 1}` : '';
  const message = printable(p.message, 500);
  if (p.path) return `${printable(p.path, 500)}: ${message}${where ? ` (${where})` : ''}`;
  return where ? `${where}: ${message}` : message;
}

/** `rules[0].match.attributes["deployment.environment"]` from a zod-style path. */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(key))
      out += out === '' ? key : `.${key}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out;
}
