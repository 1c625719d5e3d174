import type { ArgsFacts } from './span-facts.js';

/** OpenInference's placeholder for hidden inputs and outputs. */
export const REDACTED = '__REDACTED__';

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A non-empty string attribute, or undefined (numbers and booleans are stringified). */
export function readString(value: unknown): string | undefined {
  if (typeof value === 'string') return value.length > 0 ? value : undefined;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  return undefined;
}

/** `true`, `'true'` (any case) or `1`. */
export function readTrue(value: unknown): boolean {
  if (value === true || value === 1) return true;
  return typeof value === 'string' && value.toLowerCase() === 'true';
}

/** `false`, `'false'` (any case) or `0`. */
export function readFalse(value: unknown): boolean {
  if (value === false || value === 0) return true;
  return typeof value === 'string' && value.toLowerCase() === 'false';
}

export type JsonParse = { ok: true; value: unknown } | { ok: false; error: string };

export function parseJson(text: string): JsonParse {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * A value that may be JSON text: parsed when it is JSON, kept as given otherwise (tool
 * results are often plain text or Python reprs).
 */
export function readMaybeJson(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const first = firstNonSpace(value);
  if (first !== '{' && first !== '[' && first !== '"') {
    // Numbers, booleans and null are JSON too, but a tool that returned the text "42" is rarer than one returning 42.
    const parsed = value === 'true' || value === 'false' || value === 'null' || NUMBER.test(value);
    return parsed ? JSON.parse(value) : value;
  }
  const parsed = parseJson(value);
  return parsed.ok ? parsed.value : value;
}

const NUMBER = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;

/** Parses JSON text that should hold a structure (messages, tool-call lists); undefined otherwise. */
export function readJsonStructure(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const first = firstNonSpace(value);
  if (first !== '{' && first !== '[') return undefined;
  const parsed = parseJson(value);
  return parsed.ok ? parsed.value : undefined;
}

function firstNonSpace(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c !== ' ' && c !== '\n' && c !== '\t' && c !== '\r') return c;
  }
  return '';
}

/**
 * Tool arguments from a span attribute or message part: JSON text or a structured value.
 * Unparseable JSON keeps the raw text and the parser's message; plain text (OpenInference's
 * unwrapped single-string argument) is kept as the value but marked unusable.
 */
export function readArgs(value: unknown): ArgsFacts {
  if (value === undefined || value === null || value === '') return { usable: false };
  if (typeof value === 'string') {
    if (value === REDACTED) return { usable: false };
    const first = firstNonSpace(value);
    if (first === '{' || first === '[' || first === '"') {
      const parsed = parseJson(value);
      if (parsed.ok) return { args: parsed.value, usable: isRecord(parsed.value) };
      return { argsRaw: value, argsError: `unparseable arguments: ${parsed.error}`, usable: false };
    }
    return { args: value, usable: false };
  }
  if (typeof value === 'object') return { args: value, usable: isRecord(value) };
  return { args: value, usable: false };
}

/** An array from a JSON string or an array value; undefined otherwise. */
export function readArray(value: unknown): unknown[] | undefined {
  const v = readJsonStructure(value);
  return Array.isArray(v) ? v : undefined;
}
