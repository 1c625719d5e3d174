import { PyFloat, pythonFloatRepr } from './python-json.js';

/**
 * Python `repr()` of JSON-like values, for messages that must read exactly as agno's
 * (`no clean 'search' execution matches arguments {'query': 'other'}`). Dict entries keep
 * insertion order, as Python dicts do; numbers follow the same int/float split as
 * `pythonJsonDumps` (safe integers are ints, `PyFloat` and other numbers are floats).
 */
export function pythonRepr(value: unknown): string {
  return repr(value, new Set());
}

function repr(value: unknown, seen: Set<object>): string {
  if (value === null || value === undefined) return 'None';
  switch (typeof value) {
    case 'string':
      return pythonStrRepr(value);
    case 'boolean':
      return value ? 'True' : 'False';
    case 'bigint':
      return value.toString();
    case 'number':
      return Number.isSafeInteger(value) ? String(value) : pythonFloatRepr(value);
    case 'object':
      break;
    default:
      return String(value);
  }
  if (value instanceof PyFloat) return pythonFloatRepr(value.value);
  // Python prints `[...]` / `{...}` for a container that contains itself.
  if (seen.has(value)) return Array.isArray(value) ? '[...]' : '{...}';
  seen.add(value);
  let out: string;
  if (Array.isArray(value)) {
    out = `[${value.map((v) => repr(v, seen)).join(', ')}]`;
  } else {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    out = `{${entries.map(([k, v]) => `${pythonStrRepr(k)}: ${repr(v, seen)}`).join(', ')}}`;
  }
  seen.delete(value);
  return out;
}

const PLAIN = /^[\x20-\x26\x28-\x5b\x5d-\x7e]*$/;

// Python's str.isprintable() is false for these general categories (space excepted).
const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

/**
 * CPython `unicode_repr`: single quotes unless the text has a `'` and no `"`; `\\`, `\t`,
 * `\n`, `\r` escaped; other controls and DEL as `\xNN`; non-printable characters as `\xNN`,
 * `\uNNNN` or `\UNNNNNNNN`; printable non-ASCII kept as-is.
 */
export function pythonStrRepr(s: string): string {
  // Tool names and most argument values are plain printable ASCII.
  if (PLAIN.test(s)) return `'${s}'`;
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === quote || ch === '\\') out += `\\${ch}`;
    else if (ch === '\t') out += '\\t';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${hex(cp, 2)}`;
    else if (cp < 0x7f) out += ch;
    else if (ch !== ' ' && NON_PRINTABLE.test(ch)) {
      out += cp <= 0xff ? `\\x${hex(cp, 2)}` : cp <= 0xffff ? `\\u${hex(cp, 4)}` : `\\U${hex(cp, 8)}`;
    } else out += ch;
  }
  return out + quote;
}

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}
