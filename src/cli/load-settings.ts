import { readFile } from 'node:fs/promises';
import { isPlainObject } from '../policy/parse-policy.js';
import { PolicyError } from '../policy/policy-error.js';
import { prototypeKeyProblems } from '../policy/prototype-keys.js';
import { readPolicyText } from '../policy/read-policy-text.js';

/**
 * A policy file read as settings for an eval dataset (sampling, judge, redact, gates): in
 * the file form, `rules` optional, checked when the cases policy is built.
 */
export async function loadSettings(path: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message;
    throw new PolicyError([{ path: '', message: `cannot read policy file ${path}: ${reason}` }]);
  }
  const { value, problems } = readPolicyText(text);
  if (problems.length > 0) throw new PolicyError(problems, path);
  if (!isPlainObject(value))
    throw new PolicyError([{ path: '', message: 'expected a mapping at the top level' }], path);
  // Checked here: copying the settings into the cases policy would make the key a prototype.
  const hostile = prototypeKeyProblems(value);
  if (hostile.length > 0) throw new PolicyError(hostile, path);
  return value;
}
