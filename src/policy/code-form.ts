import { isPlainObject } from './parse-policy.js';
import { formatPath, PolicyError } from './policy-error.js';

/**
 * A policy defined in code is the policy file with camelCase keys (`rootOnly` for
 * `root_only`): one schema checks both. `fileFormOf` renames the keys of a definition to the
 * file's, and `codePath`/`codeKey` name what the schema reports in the code's words. Values
 * whose keys are data, not options, keep their keys as written: scorer entries (built or in
 * the file form), a rule's `match.attributes`, and `gates` (gate names are the file's).
 */

/** Marks a key written in snake_case in code: no file key starts with it, so the schema refuses it. */
const UNKNOWN = '\u0000';

/** Whether the keys of the object at `path` (in the file form) are data, kept as written. */
function keptAsWritten(path: ReadonlyArray<PropertyKey>): boolean {
  if (path[0] === 'gates') return true;
  return path[0] === 'rules' && (path[2] === 'scorers' || (path[2] === 'match' && path[3] === 'attributes'));
}

const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const camel = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/**
 * The definition in the file form. A key that is not the camelCase of a file key (`root_only`,
 * `Root_Only`) is kept under a name the schema does not know, so it is reported as unknown,
 * as `root_only: false` in a file is. `redact.prompt`, a function, is not part of the file
 * form: `definePolicy` attaches it after checking.
 */
export function fileFormOf(value: unknown, path: PropertyKey[] = [], onPath = new Set<object>()): unknown {
  if (!Array.isArray(value) && (!isPlainObject(value) || keptAsWritten(path))) return value;
  if (onPath.has(value))
    throw new PolicyError([{ path: formatPath(codePath(path)), message: 'contains itself (a cycle)' }]);
  onPath.add(value);
  let out: unknown;
  if (Array.isArray(value)) out = value.map((item, i) => fileFormOf(item, [...path, i], onPath));
  else {
    const copy: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      if (path.length === 1 && path[0] === 'redact' && key === 'prompt') continue;
      const fileKey = camel(snake(key)) === key ? snake(key) : `${UNKNOWN}${key}`;
      copy[fileKey] = fileFormOf(v, [...path, fileKey], onPath);
    }
    out = copy;
  }
  onPath.delete(value);
  return out;
}

/** A path in the file form, as the code wrote it. */
export function codePath(path: ReadonlyArray<PropertyKey>): PropertyKey[] {
  return path.map((segment, i) =>
    typeof segment === 'string' ? codeKey(path.slice(0, i), segment) : segment,
  );
}

/** A key of the object at `path` (in the file form), as the code writes it. */
export function codeKey(path: ReadonlyArray<PropertyKey>, key: string): string {
  if (key.startsWith(UNKNOWN)) return key.slice(UNKNOWN.length);
  return keptAsWritten(path) ? key : camel(key);
}
