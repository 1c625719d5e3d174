import type { ArgsFacts, MessageCall } from './span-facts.js';

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
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET && first !== QUOTE) {
    // Numbers, booleans and null are JSON too, but a tool that returned the text "42" is rarer than one returning 42.
    const parsed = value === 'true' || value === 'false' || value === 'null' || NUMBER.test(value);
    return parsed ? JSON.parse(value) : value;
  }
  // Parsed in place rather than through `parseJson`: this runs for every tool span.
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

const OPEN_BRACE = 123;
const OPEN_BRACKET = 91;
const QUOTE = 34;

const NUMBER = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;

/** Parses JSON text that should hold a structure (messages, tool-call lists); undefined otherwise. */
export function readJsonStructure(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const first = firstNonSpace(value);
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) return undefined;
  // Parsed in place (no result object): messages of every model span come through here.
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}

/** The code of the first character that is not JSON whitespace, or -1. */
function firstNonSpace(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 10 && c !== 9 && c !== 13) return c;
  }
  return -1;
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
    if (first === OPEN_BRACE || first === OPEN_BRACKET || first === QUOTE) {
      let args: unknown;
      try {
        args = JSON.parse(value);
      } catch (err) {
        const error = err instanceof Error ? err.message : String(err);
        return { argsRaw: value, argsError: `unparseable arguments: ${error}`, usable: false };
      }
      // Text that opens with a brace and parses is an object.
      return { args, usable: first === OPEN_BRACE || isRecord(args) };
    }
    return { args: value, usable: false };
  }
  if (typeof value === 'object') return { args: value, usable: isRecord(value) };
  return { args: value, usable: false };
}

/**
 * `{ name, ...readArgs(value) }` (the same reading, the same keys in the same order) without
 * the temporary object and the spread: runs for every tool call of every message.
 */
export function callWithArgs(name: string, value: unknown): MessageCall {
  if (value === undefined || value === null || value === '') return { name, usable: false };
  if (typeof value === 'string') {
    if (value === REDACTED) return { name, usable: false };
    const first = firstNonSpace(value);
    if (first === OPEN_BRACE || first === OPEN_BRACKET || first === QUOTE) {
      let args: unknown;
      try {
        args = JSON.parse(value);
      } catch (err) {
        const error = err instanceof Error ? err.message : String(err);
        return { name, argsRaw: value, argsError: `unparseable arguments: ${error}`, usable: false };
      }
      return { name, args, usable: first === OPEN_BRACE || isRecord(args) };
    }
    return { name, args: value, usable: false };
  }
  if (typeof value === 'object') return { name, args: value, usable: isRecord(value) };
  return { name, args: value, usable: false };
}

/** An array from a JSON string or an array value; undefined otherwise. */
export function readArray(value: unknown): unknown[] | undefined {
  const v = readJsonStructure(value);
  return Array.isArray(v) ? v : undefined;
}
