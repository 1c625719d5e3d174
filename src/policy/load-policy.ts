import { readFile } from 'node:fs/promises';
import type { Policy } from '../types.js';
import { isPolicy } from './define-policy.js';
import { parsePolicy } from './parse-policy.js';
import { PolicyError } from './policy-error.js';
import { readPolicyText } from './read-policy-text.js';

/**
 * Loads a policy from a file path, from YAML/JSON text, or from an object in the file form
 * (an already-built `Policy` is returned as is). Throws `PolicyError` with every problem.
 */
export async function loadPolicy(source: string | object): Promise<Policy> {
  if (typeof source !== 'string') return isPolicy(source) ? source : parsePolicy(source);
  if (looksLikeText(source)) return parsePolicyText(source);
  let text: string;
  try {
    text = await readFile(source, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message;
    throw new PolicyError([{ path: '', message: `cannot read policy file ${source}: ${reason}` }]);
  }
  return parsePolicyText(text, source);
}

/** Parses YAML or JSON policy text. */
export function parsePolicyText(text: string, source?: string): Policy {
  const { value, problems, locate } = readPolicyText(text);
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
