/**
 * Sorted-key JSON of a value, so `{a:1,b:2}` and `{b:2,a:1}` compare equal. Used to join
 * requests to executions by (name, arguments) and to detect repeated calls.
 *
 * Numbers print as JSON does (`1` and `1.0` are the same number in JS), non-finite numbers
 * as `NaN`/`Infinity`/`-Infinity`, `undefined` as `null` inside arrays and omitted in
 * objects, bigints as their digits. Never throws: values nested deeper than
 * {@link MAX_DEPTH} print as `"…"` past that depth, and cyclic references as `"[cycle]"`.
 */
export function canonicalArgs(value: unknown): string {
  const seen = new Set<object>();
  return write(value, 0, seen);
}

/** Deep enough for any real argument object, shallow enough for the default V8 stack. */
const MAX_DEPTH = 500;

function write(value: unknown, depth: number, seen: Set<object>): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return value.toString();
    case 'undefined':
    case 'function':
    case 'symbol':
      return 'null';
  }
  if (value === null) return 'null';
  if (depth >= MAX_DEPTH) return '"…"';
  const obj = value as object;
  if (seen.has(obj)) return '"[cycle]"';
  seen.add(obj);
  let out: string;
  if (Array.isArray(obj)) {
    const parts: string[] = [];
    for (const item of obj) parts.push(write(item, depth + 1, seen));
    out = '[' + parts.join(',') + ']';
  } else {
    const record = obj as Record<string, unknown>;
    const keys = Object.keys(record).sort();
    const parts: string[] = [];
    for (const key of keys) {
      const v = record[key];
      if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
      parts.push(JSON.stringify(key) + ':' + write(v, depth + 1, seen));
    }
    out = '{' + parts.join(',') + '}';
  }
  seen.delete(obj);
  return out;
}
