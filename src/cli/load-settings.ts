import { isPlainObject } from '../policy/parse-policy.js';
import { PolicyError } from '../policy/policy-error.js';
import type { PolicyLimits } from '../policy/policy-limits.js';
import { prototypeKeyProblems } from '../policy/prototype-keys.js';
import { readPolicyFile } from '../policy/read-policy-file.js';
import { readPolicyText } from '../policy/read-policy-text.js';

/**
 * A policy file read as settings for an eval dataset (sampling, judge, redact, gates): in
 * the file form, `rules` optional, checked when the cases policy is built. Bounded as
 * `loadPolicy` bounds a policy.
 */
export async function loadSettings(
  path: string,
  limits: PolicyLimits = {},
): Promise<Record<string, unknown>> {
  const text = await readPolicyFile(path, limits.maxBytes);
  const { value, problems } = readPolicyText(
    text,
    limits.maxAliasNodes !== undefined ? { maxAliasNodes: limits.maxAliasNodes } : {},
  );
  if (problems.length > 0) throw new PolicyError(problems, path);
  if (!isPlainObject(value))
    throw new PolicyError([{ path: '', message: 'expected a mapping at the top level' }], path);
  // Checked here: copying the settings into the cases policy would make the key a prototype.
  const hostile = prototypeKeyProblems(value);
  if (hostile.length > 0) throw new PolicyError(hostile, path);
  return value;
}
