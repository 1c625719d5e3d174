/** One thing wrong with a policy, at a path like `rules[0].scorers[2].expected_tool_order`. */
export interface PolicyProblem {
  path: string;
  message: string;
}

/** A policy that cannot be used; `problems` lists everything wrong with it, not just the first. */
export class PolicyError extends Error {
  readonly problems: PolicyProblem[];

  constructor(problems: PolicyProblem[], source?: string) {
    const head = `invalid toolwatch policy${source ? ` ${source}` : ''} (${problems.length} problem${problems.length === 1 ? '' : 's'})`;
    super([head, ...problems.map((p) => `  ${p.path ? `${p.path}: ` : ''}${p.message}`)].join('\n'));
    this.name = 'PolicyError';
    this.problems = problems;
  }
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
