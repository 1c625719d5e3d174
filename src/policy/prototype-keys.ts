import { formatPath, type PolicyProblem } from './policy-error.js';

/**
 * A problem for every `__proto__` key in a parsed policy or case file, and for every value
 * that contains itself. YAML and `JSON.parse` make `__proto__` an own key, but any copy by
 * assignment turns it into the copy's prototype: its contents would then read as options or
 * argument constraints that no check saw, and a scalar value would vanish. No policy or case
 * key can be `__proto__`, so it is refused. A value that contains itself (an object built in
 * code; YAML aliases are checked where the text is read) would send every later walk of the
 * policy — validation, digests, copies — round forever, so it is refused too.
 */
export function prototypeKeyProblems(
  value: unknown,
  prefix: ReadonlyArray<string | number> = [],
): PolicyProblem[] {
  const problems: PolicyProblem[] = [];
  // Objects on the path from the root to the node being walked: meeting one again is a cycle.
  const onPath = new Set<object>();
  // Objects walked to the end: a value shared by several keys is walked once.
  const done = new WeakSet<object>();
  // An explicit stack: the value came from a file (or code), and its depth is the caller's.
  // `leave` entries take their object off the path once its children are walked.
  const pending: Array<{ node: unknown; path: ReadonlyArray<string | number>; leave?: boolean }> = [
    { node: value, path: prefix },
  ];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { node, path } = next;
    if (node === null || typeof node !== 'object') continue;
    if (next.leave) {
      onPath.delete(node);
      done.add(node);
      continue;
    }
    if (onPath.has(node)) {
      problems.push({ path: formatPath(path), message: 'contains itself (a cycle)' });
      continue;
    }
    if (done.has(node)) continue;
    onPath.add(node);
    pending.push({ node, path, leave: true });
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) pending.push({ node: node[i], path: [...path, i] });
      continue;
    }
    const keys = Object.keys(node);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      if (key === '__proto__') {
        problems.push({ path: formatPath([...path, key]), message: '`__proto__` cannot be a key' });
      } else pending.push({ node: (node as Record<string, unknown>)[key], path: [...path, key] });
    }
  }
  return problems;
}
