import { canonicalArgs } from '../reconstruction/canonical-args.js';
import { pythonEquals } from '../util/python-equals.js';
import { compileSafeRegex, type SafeRegex } from './safe-regex.js';

/**
 * The operators of `arg_constraints`: one rule on one argument field, compiled once and
 * checked per call. Trajectory scorers check a run's first call of each constrained tool;
 * the guard checks every call before it runs. Both use these functions, so the policy means
 * the same thing in both places.
 */

/** One field's rule; every key present must hold. */
export interface ArgRule {
  /** Python `==` (so `true == 1`, `1 == 1.0`). A missing field is `None`. */
  equals?: unknown;
  not_equals?: unknown;
  /** Substring of a string, member of an array, key of an object; a missing field counts as `""`. */
  contains?: unknown;
  in?: unknown[];
  not_in?: unknown[];
  /** true: present and not null; false: missing or null. */
  not_null?: boolean;
  /** true: the field is present (even as null); false: absent. */
  exists?: boolean;
  /**
   * Regular expression searched in the value (strings; numbers as their JSON text). The
   * common subset of JavaScript and RE2 syntax; matched in linear time.
   */
  matches?: string;
  gt?: number;
  gte?: number;
  lt?: number;
  lte?: number;
}

export const RULE_KEYS = [
  'equals',
  'not_equals',
  'contains',
  'in',
  'not_in',
  'not_null',
  'exists',
  'matches',
  'gt',
  'gte',
  'lt',
  'lte',
] as const;
export type RuleKey = (typeof RULE_KEYS)[number];

/** One field's rule, compiled: its path split once, its pattern compiled once. */
export interface CompiledField {
  path: string;
  rule: ArgRule;
  /** The rule's keys in check order, found once rather than per call. */
  keys: RuleKey[];
  /** `path` split at dots, and which segments could index an array. */
  segments: string[];
  numeric: boolean[];
  regex?: SafeRegex;
}

/** Compiles `{ "dotted.path": rule }` entries once, for checks on every call. */
export function compileField(path: string, rule: ArgRule): CompiledField {
  const segments = path.split('.');
  return {
    path,
    rule,
    keys: RULE_KEYS.filter((k) => Object.hasOwn(rule, k)),
    segments,
    numeric: segments.map((segment) => /^\d+$/.test(segment)),
    ...(typeof rule.matches === 'string' ? { regex: compileSafeRegex(rule.matches) } : {}),
  };
}

/** What `lookup` returns for a field that is not there (JSON arguments never hold a symbol). */
const MISSING: unique symbol = Symbol('missing');

/** A dotted path into the arguments; numeric segments index arrays; a literal dotted key wins. */
function lookup(args: unknown, field: CompiledField): unknown {
  if (!isRecord(args)) return MISSING;
  if (Object.hasOwn(args, field.path)) return args[field.path];
  const { segments, numeric } = field;
  let current: unknown = args;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    if (Array.isArray(current) && numeric[i]) {
      const index = Number(segment);
      if (index >= current.length) return MISSING;
      current = current[index];
    } else if (isRecord(current) && Object.hasOwn(current, segment)) {
      current = current[segment];
    } else {
      return MISSING;
    }
  }
  return current;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Why the field fails its rule (text after `tool.path`), or undefined when it holds. */
export function checkField(args: unknown, field: CompiledField, redact: boolean): string | undefined {
  const looked = lookup(args, field);
  const found = looked !== MISSING;
  const value = found ? looked : undefined;
  const rule = field.rule;
  for (const key of field.keys) {
    const expected = rule[key];
    let ok: boolean;
    switch (key) {
      case 'equals':
        ok = pythonEquals(value ?? null, expected ?? null);
        break;
      case 'not_equals':
        ok = !pythonEquals(value ?? null, expected ?? null);
        break;
      case 'contains':
        ok = contains(found ? value : '', expected);
        break;
      case 'in':
        ok = (expected as unknown[]).some((item) => pythonEquals(value ?? null, item ?? null));
        break;
      case 'not_in':
        ok = !(expected as unknown[]).some((item) => pythonEquals(value ?? null, item ?? null));
        break;
      case 'not_null':
        ok = (value !== undefined && value !== null) === expected;
        break;
      case 'exists':
        ok = found === expected;
        break;
      case 'matches': {
        const text =
          typeof value === 'string' ? value : typeof value === 'number' ? JSON.stringify(value) : undefined;
        ok = text !== undefined && field.regex!.test(text);
        break;
      }
      default: {
        const bound = expected as number;
        ok =
          typeof value === 'number' &&
          (key === 'gt'
            ? value > bound
            : key === 'gte'
              ? value >= bound
              : key === 'lt'
                ? value < bound
                : value <= bound);
      }
    }
    if (!ok) {
      const got = redact ? '' : found ? `, got ${preview(value)}` : ', field missing';
      if (key === 'exists') return `${expected ? 'must exist' : 'must not exist'}${got}`;
      if (key === 'not_null') return `${expected ? 'must not be null' : 'must be null'}${got}`;
      if (key === 'matches') return `must match ${redact ? 'its pattern' : JSON.stringify(expected)}${got}`;
      return `failed ${key}${redact ? '' : ` ${preview(expected)}`}${got}`;
    }
  }
  return undefined;
}

function contains(container: unknown, item: unknown): boolean {
  if (typeof container === 'string') return typeof item === 'string' && container.includes(item);
  if (Array.isArray(container)) return container.some((el) => pythonEquals(el, item));
  if (isRecord(container)) return typeof item === 'string' && Object.hasOwn(container, item);
  return false;
}

const PREVIEW_CHARS = 80;

/** Short JSON-ish text of a value, bounded however large or deep the value is. */
function preview(value: unknown): string {
  const text =
    typeof value === 'string' ? JSON.stringify(value.slice(0, PREVIEW_CHARS + 1)) : canonicalArgs(value);
  return text.length > PREVIEW_CHARS ? text.slice(0, PREVIEW_CHARS) + '…' : text;
}
