import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { buildScorer, isPlainObject, issuesToProblems, unwrapFloats } from '../policy/parse-policy.js';
import { formatPath, PolicyError, type PolicyProblem } from '../policy/policy-error.js';
import { guardSchema } from '../policy/policy-schema.js';
import { prototypeKeyProblems } from '../policy/prototype-keys.js';
import { readPolicyText } from '../policy/read-policy-text.js';
import { CASE_ONLY_KEYS, type EvalCase } from './eval-case.js';

const caseKeysSchema = z.object({
  id: z.string({ error: 'required (a non-empty string)' }).min(1, 'must not be empty'),
  input: z.union(
    [z.string().min(1, 'must not be empty'), z.array(z.unknown()).min(1), z.record(z.string(), z.unknown())],
    {
      error: 'required (text, a list of chat messages, or a mapping)',
    },
  ),
  context: z.unknown().optional(),
  answer_facts: z
    .array(z.string().min(1), { error: 'expected a list of facts' })
    .min(1, 'leave it out instead of an empty list')
    .optional(),
  tags: z.array(z.string().min(1), { error: 'expected a list of tags' }).optional(),
  guard: guardSchema.optional(),
});

/** `CasesError`: every problem in a case file by path (`cases[2].expected_tools: …`). */
export class CasesError extends PolicyError {
  constructor(problems: PolicyProblem[], source?: string) {
    super(problems, source);
    this.name = 'CasesError';
    this.message = this.message.replace(/^invalid toolwatch policy/, 'invalid toolwatch case file');
  }
}

/**
 * Loads eval-dataset cases from a file (YAML: a list, or a mapping with `cases:`; JSON
 * Lines when the name ends in `.jsonl`/`.ndjson`: one case per line) or from values in
 * that form. Each case is checked by the same code as a policy's `trajectory` scorer (the
 * trajectory options of a case are built into one), so a case file and a policy agree on
 * meaning; every problem is listed by path in one `CasesError`.
 */
export async function loadCases(source: string | readonly unknown[]): Promise<EvalCase[]> {
  if (typeof source !== 'string') return checkCases(source);
  let text: string;
  try {
    text = await readFile(source, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message;
    throw new CasesError([{ path: '', message: `cannot read case file ${source}: ${reason}` }]);
  }
  return parseCasesText(text, source);
}

export function parseCasesText(text: string, source?: string): EvalCase[] {
  let entries: unknown[];
  if (source && /\.(jsonl|ndjson)$/i.test(source)) {
    entries = [];
    const problems: PolicyProblem[] = [];
    (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).split('\n').forEach((line, i) => {
      if (line.trim() === '') return;
      try {
        entries.push(JSON.parse(line));
      } catch (err) {
        problems.push({ path: '', message: `not JSON: ${(err as Error).message}`, line: i + 1 });
      }
    });
    if (problems.length > 0) throw new CasesError(problems, source);
  } else {
    const { value, problems } = readPolicyText(text);
    if (problems.length > 0) throw new CasesError(problems, source);
    const list =
      isPlainObject(value) && Object.keys(value).length === 1 && 'cases' in value ? value.cases : value;
    if (!Array.isArray(list)) {
      throw new CasesError(
        [{ path: '', message: 'expected a list of cases, or a mapping with a `cases:` list' }],
        source,
      );
    }
    entries = list;
  }
  try {
    return checkCases(entries);
  } catch (err) {
    if (err instanceof CasesError && source) throw new CasesError(err.problems, source);
    throw err;
  }
}

function checkCases(entries: readonly unknown[]): EvalCase[] {
  const hostile = prototypeKeyProblems(entries, ['cases']);
  if (hostile.length > 0) throw new CasesError(hostile);
  const problems: PolicyProblem[] = [];
  const ids = new Map<string, number>();
  if (entries.length === 0) problems.push({ path: 'cases', message: 'no cases' });
  entries.forEach((entry, i) => {
    const path = ['cases', i];
    if (!isPlainObject(entry)) {
      problems.push({ path: formatPath(path), message: 'expected a case mapping with an id and an input' });
      return;
    }
    const own: Record<string, unknown> = {};
    const trajectory: Record<string, unknown> = { kind: 'trajectory' };
    for (const [key, value] of Object.entries(entry)) {
      if (CASE_ONLY_KEYS.has(key)) own[key] = value;
      else if (key === 'kind' || key === 'name' || key === 'sampling') {
        problems.push({ path: formatPath([...path, key]), message: 'unknown key (not a case field)' });
      } else trajectory[key] = value;
    }
    const parsed = caseKeysSchema.safeParse(unwrapFloats(own));
    if (!parsed.success) problems.push(...issuesToProblems(parsed.error.issues, path));
    if (typeof entry.id === 'string' && entry.id !== '') {
      const first = ids.get(entry.id);
      if (first !== undefined) {
        problems.push({
          path: formatPath([...path, 'id']),
          message: `duplicate case id ${JSON.stringify(entry.id)} (also cases[${first}])`,
        });
      } else ids.set(entry.id, i);
    }
    buildScorer(trajectory, path, problems);
  });
  if (problems.length > 0) throw new CasesError(sortByPath(problems));
  return entries as EvalCase[];
}

function sortByPath(problems: PolicyProblem[]): PolicyProblem[] {
  return [...problems].sort((a, b) => a.path.localeCompare(b.path, 'en', { numeric: true }));
}
