import type { Policy } from '../types.js';
import { isPolicy } from './define-policy.js';
import { parsePolicy } from './parse-policy.js';
import { PolicyError } from './policy-error.js';
import type { PolicyLimits } from './policy-limits.js';
import { readPolicyFile } from './read-policy-file.js';
import { readPolicyText } from './read-policy-text.js';

/**
 * Loads a policy from a file path, from YAML/JSON text, or from an object in the file form
 * (an already-built `Policy` is returned as is). Throws `PolicyError` with every problem.
 * `limits` bound the file's size (default 1 MiB) and what its aliases expand to (default
 * 100,000 nodes).
 */
export async function loadPolicy(source: string | object, limits: PolicyLimits = {}): Promise<Policy> {
  if (typeof source !== 'string') return isPolicy(source) ? source : parsePolicy(source);
  if (looksLikeText(source)) return parsePolicyText(source, undefined, limits);
  return parsePolicyText(await readPolicyFile(source, limits.maxBytes), source, limits);
}

/** Parses YAML or JSON policy text. */
export function parsePolicyText(text: string, source?: string, limits: PolicyLimits = {}): Policy {
  const { value, problems, locate } = readPolicyText(
    text,
    limits.maxAliasNodes !== undefined ? { maxAliasNodes: limits.maxAliasNodes } : {},
  );
  if (problems.length > 0) throw new PolicyError(problems, source);
  try {
    return parsePolicy(value);
  } catch (err) {
    if (!(err instanceof PolicyError)) throw err;
    throw new PolicyError(
      err.problems.map((p) => ({ ...p, ...(p.path ? locate(p.path) : undefined) })),
      source,
    );
  }
}

/** Inline policy text has a line break or starts like JSON; anything else is a path. */
function looksLikeText(source: string): boolean {
  return source.includes('\n') || /^\s*[{[]/.test(source);
}
