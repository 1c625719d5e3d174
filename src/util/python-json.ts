/**
 * Python `json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":"))`,
 * byte for byte, so digests of configs match the ones agno computes (`ToolCallScorer.digest`).
 */

/**
 * A number that Python would hold as a `float`. JavaScript has one number type, so a config
 * read from YAML/JSON wraps numbers written with a decimal point or an exponent in `PyFloat`:
 * `pythonJsonDumps` prints it as a float (`1.0`, `1e-07`), `pythonEquals` compares it as its
 * number. Plain numbers that are integers print as Python ints (`1`).
 */
export class PyFloat {
  constructor(readonly value: number) {}

  valueOf(): number {
    return this.value;
  }

  toJSON(): number {
    return this.value;
  }

  toString(): string {
    return pythonFloatRepr(this.value);
  }
}

/**
 * Serialise like Python's `json.dumps(..., sort_keys=True, ensure_ascii=True,
 * separators=(",", ":"))`. Plain objects are dicts (keys sorted by code point), arrays are
 * lists, safe integers (|n| ≤ 2**53 − 1) and bigints are ints, other numbers and `PyFloat` are
 * floats (`NaN`, `Infinity` as bare tokens, as Python does by default). `undefined` object
 * members are left out (Python has no such value); `undefined` elsewhere is `null`.
 *
 * Throws `TypeError('Object of type X is not JSON serializable')` for values Python's json
 * would also refuse (sets, maps, functions, class instances) and
 * `ValueError`-like `Error('Circular reference detected')` for cycles.
 */
export function pythonJsonDumps(value: unknown, options: PythonJsonOptions = {}): string {
  const out: string[] = [];
  write(value, out, new Set(), options.sortKeys ?? true);
  return out.join('');
}

export interface PythonJsonOptions {
  /** `sort_keys`. Default `true`; `false` keeps insertion order (to hand data to Python as-is). */
  sortKeys?: boolean;
}

function write(value: unknown, out: string[], seen: Set<object>, sortKeys: boolean): void {
  if (value === null || value === undefined) {
    out.push('null');
    return;
  }
  switch (typeof value) {
    case 'string':
      out.push(encodeString(value));
      return;
    case 'boolean':
      out.push(value ? 'true' : 'false');
      return;
    case 'bigint':
      out.push(value.toString());
      return;
    case 'number':
      // A bare -0 is the int 0 (Python ints have no sign of zero); -0.0 needs PyFloat.
      // Integral numbers past 2**53 have lost their exact digits already, so they are taken
      // as the float they came from (`1e300`); exact big ints come in as bigint.
      out.push(Number.isSafeInteger(value) ? String(value) : floatToken(value));
      return;
    case 'object':
      break;
    default:
      throw new TypeError(`Object of type ${typeof value} is not JSON serializable`);
  }
  if (value instanceof PyFloat) {
    out.push(floatToken(value.value));
    return;
  }
  const obj = value as object;
  if (seen.has(obj)) throw new Error('Circular reference detected');
  seen.add(obj);
  if (Array.isArray(obj)) {
    out.push('[');
    for (let i = 0; i < obj.length; i++) {
      if (i > 0) out.push(',');
      write(obj[i], out, seen, sortKeys);
    }
    out.push(']');
  } else {
    const proto = Object.getPrototypeOf(obj);
    if (proto !== Object.prototype && proto !== null) {
      throw new TypeError(`Object of type ${proto?.constructor?.name ?? 'object'} is not JSON serializable`);
    }
    const record = obj as Record<string, unknown>;
    const keys = Object.keys(record).filter((k) => record[k] !== undefined);
    if (sortKeys) keys.sort(compareCodePoints);
    out.push('{');
    for (let i = 0; i < keys.length; i++) {
      if (i > 0) out.push(',');
      out.push(encodeString(keys[i]!), ':');
      write(record[keys[i]!], out, seen, sortKeys);
    }
    out.push('}');
  }
  seen.delete(obj);
}

/** json's float encoder: repr, except that non-finite values become JS-style tokens. */
function floatToken(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Number.POSITIVE_INFINITY) return 'Infinity';
  if (x === Number.NEGATIVE_INFINITY) return '-Infinity';
  return pythonFloatRepr(x);
}

/**
 * Python `repr(float)`: the shortest round-tripping digits (the same digits JavaScript
 * picks), written in fixed notation when the decimal exponent is in [-4, 16), else as
 * `d.ddde±XX`; integral values keep a trailing `.0`.
 */
export function pythonFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (x === Number.POSITIVE_INFINITY) return 'inf';
  if (x === Number.NEGATIVE_INFINITY) return '-inf';
  const sign = x < 0 || Object.is(x, -0) ? '-' : '';
  if (x === 0) return `${sign}0.0`;
  // toExponential() with no argument yields the shortest unique digits.
  const [mantissa, exp] = Math.abs(x).toExponential().split('e') as [string, string];
  const digits = mantissa.replace('.', '');
  const decpt = Number(exp) + 1;
  if (decpt <= -4 || decpt > 16) {
    const e = decpt - 1;
    const body = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const eAbs = Math.abs(e);
    return `${sign}${body}e${e < 0 ? '-' : '+'}${eAbs < 10 ? '0' : ''}${eAbs}`;
  }
  if (decpt <= 0) return `${sign}0.${'0'.repeat(-decpt)}${digits}`;
  if (decpt >= digits.length) return `${sign}${digits}${'0'.repeat(decpt - digits.length)}.0`;
  return `${sign}${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
}

const SHORT_ESCAPES: Record<number, string> = {
  34: '\\"',
  92: '\\\\',
  10: '\\n',
  13: '\\r',
  9: '\\t',
  8: '\\b',
  12: '\\f',
};

/**
 * ensure_ascii string encoding: printable ASCII (space..~) as-is, short escapes for the
 * usual controls, `\uXXXX` (lowercase hex) for everything else. Working on UTF-16 code
 * units gives astral characters as surrogate pairs, as Python writes them.
 */
function encodeString(s: string): string {
  let out = '"';
  let runStart = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c <= 0x7e && c !== 0x22 && c !== 0x5c) continue;
    out += s.slice(runStart, i);
    out += SHORT_ESCAPES[c] ?? `\\u${c.toString(16).padStart(4, '0')}`;
    runStart = i + 1;
  }
  return out + s.slice(runStart) + '"';
}

/**
 * Python's `str` order (by code point). JavaScript's default sort compares UTF-16 code units,
 * which puts astral characters (surrogates, 0xD800–0xDFFF) before U+E000–U+FFFF.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i === n) return a.length - b.length;
  // If the common prefix ends in a high surrogate, the differing unit may belong to a pair.
  if (i > 0 && isHigh(a.charCodeAt(i - 1)) && (isLow(a.charCodeAt(i)) || isLow(b.charCodeAt(i)))) i--;
  return codePointAt(a, i) - codePointAt(b, i);
}

function isHigh(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLow(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

function codePointAt(s: string, i: number): number {
  return s.codePointAt(i)!;
}

/**
 * A deep copy of a JSON-like value (plain objects, arrays, scalars; `PyFloat` kept as is),
 * so a scorer's config cannot drift from its digest when the caller mutates its options.
 * Values of other kinds are shared, not copied.
 */
export function clonePythonValue<T>(value: T): T {
  if (Array.isArray(value)) return value.map(clonePythonValue) as T;
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = clonePythonValue(v);
    return out as T;
  }
  return value;
}
