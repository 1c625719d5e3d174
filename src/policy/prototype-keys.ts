import { formatPath, type PolicyProblem } from './policy-error.js';

/**
 * A problem for every `__proto__` key in a parsed policy or case file. YAML and `JSON.parse`
 * make it an own key, but any copy by assignment turns it into the copy's prototype: its
 * contents would then read as options or argument constraints that no check saw, and a
 * scalar value would vanish. No policy or case key can be `__proto__`, so it is refused.
 */
export function prototypeKeyProblems(
  value: unknown,
  prefix: ReadonlyArray<string | number> = [],
): PolicyProblem[] {
  const problems: PolicyProblem[] = [];
  // An explicit stack: the value came from a file, and its depth is the file's.
  const pending: Array<[unknown, ReadonlyArray<string | number>]> = [[value, prefix]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [node, path] = next;
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) pending.push([node[i], [...path, i]]);
      continue;
    }
    const keys = Object.keys(node);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      if (key === '__proto__') {
        problems.push({ path: formatPath([...path, key]), message: '`__proto__` cannot be a key' });
      } else pending.push([(node as Record<string, unknown>)[key], [...path, key]]);
    }
  }
  return problems;
}
