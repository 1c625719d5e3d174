import type { z } from 'zod';
import type { Gate, GuardCheck, Policy, Rule, Scorer } from '../types.js';
import { PyFloat } from '../util/python-json.js';
import { didYouMean, knownKeysAt } from './did-you-mean.js';
import { guardProblems } from './guard-problems.js';
import { policyDigest } from './policy-digest.js';
import { formatPath, PolicyError, type PolicyProblem } from './policy-error.js';
import { GATE_NAMES, GUARD_CHECKS, type PolicyFile, policySchema } from './policy-schema.js';
import { prototypeKeyProblems } from './prototype-keys.js';
import { SCORER_KINDS } from './scorer-kinds.js';

/**
 * Validates a policy in its file form (the parsed YAML/JSON, snake_case) and builds the
 * scorers. Throws `PolicyError` listing every problem by path; never stops at the first.
 */
export function parsePolicy(value: unknown): Policy {
  const problems: PolicyProblem[] = [];
  if (!isPlainObject(value)) {
    throw new PolicyError([
      { path: '', message: `expected a mapping at the top level, got ${describe(value)}` },
    ]);
  }
  const hostile = prototypeKeyProblems(value);
  if (hostile.length > 0) throw new PolicyError(hostile);
  const top = policySchema.safeParse(unwrapFloats(value));
  if (!top.success) problems.push(...issuesToProblems(top.error.issues, [], policySchema));

  const built: Scorer[][] = [];
  const rawRules = value.rules;
  if (Array.isArray(rawRules)) {
    const ruleNames = new Map<string, number>();
    rawRules.forEach((rawRule, i) => {
      const scorers: Scorer[] = [];
      built.push(scorers);
      if (!isPlainObject(rawRule)) return;
      if (typeof rawRule.name === 'string' && rawRule.name !== '') {
        const first = ruleNames.get(rawRule.name);
        if (first !== undefined) {
          problems.push({
            path: formatPath(['rules', i, 'name']),
            message: `duplicate rule name ${JSON.stringify(rawRule.name)} (also rules[${first}])`,
          });
        } else ruleNames.set(rawRule.name, i);
      }
      if (!Array.isArray(rawRule.scorers)) return;
      const placed: Array<[Scorer, number]> = [];
      rawRule.scorers.forEach((entry, j) => {
        const scorer = buildScorer(entry, ['rules', i, 'scorers', j], problems);
        if (scorer) {
          scorers.push(scorer);
          placed.push([scorer, j]);
        }
      });
      problems.push(...duplicateScorerNames(placed, i));
      const guard = top.success ? top.data.rules[i]?.guard : undefined;
      if (guard !== undefined && scorers.length === rawRule.scorers.length)
        problems.push(...guardProblems(guard.checks, scorers, i));
    });
  }
  if (problems.length > 0 || !top.success) throw new PolicyError(sortProblems(problems));
  return assemble(top.data, built);
}

/** Builds the `Policy` from a validated file form and its scorers. */
export function assemble(file: PolicyFile, scorers: Scorer[][]): Policy {
  const rules: Rule[] = file.rules.map((rule, i) => ({
    name: rule.name,
    match: {
      ...(rule.match.agent !== undefined ? { agent: rule.match.agent } : {}),
      rootOnly: rule.match.root_only,
      ...(rule.match.attributes !== undefined ? { attributes: rule.match.attributes } : {}),
    },
    scorers: scorers[i] ?? [],
    ...(rule.guard !== undefined
      ? {
          guard: {
            mode: rule.guard.mode,
            // Canonical: each check once, in the guard's order (the digest does not see how they were listed).
            checks: GUARD_CHECKS.filter((check: GuardCheck) => rule.guard!.checks.includes(check)),
          },
        }
      : {}),
  }));
  const gates: Record<string, Gate> = {};
  for (const [name, gate] of Object.entries(file.gates)) if (gate !== undefined) gates[name] = gate as Gate;
  const policy: Omit<Policy, 'digest'> = {
    version: 1,
    sampling: { ratio: file.sampling.ratio },
    judge: {
      maxPerMinute: file.judge.max_per_minute,
      maxConcurrent: file.judge.max_concurrent,
      escalateOn: [...new Set(file.judge.escalate_on)],
    },
    redact: { values: file.redact.values },
    rules,
    gates,
  };
  return { ...policy, digest: policyDigest(policy) };
}

/** Scorers of one rule must have distinct result names (`name` defaults to the kind). */
export function duplicateScorerNames(scorers: Array<[Scorer, number]>, ruleIndex: number): PolicyProblem[] {
  const out: PolicyProblem[] = [];
  const seen = new Map<string, number>();
  for (const [scorer, j] of scorers) {
    const first = seen.get(scorer.name);
    if (first !== undefined) {
      out.push({
        path: formatPath(['rules', ruleIndex, 'scorers', j, 'name']),
        message: `duplicate scorer name ${JSON.stringify(scorer.name)} in this rule (also scorers[${first}]); give one a name`,
      });
    } else seen.set(scorer.name, j);
  }
  return out;
}

/** Argument values keep `PyFloat` (agno digests tell `1` from `1.0`); every other number is plain. */
const FLOAT_KEEPING_KEYS = new Set(['arguments', 'expected_tool_call_arguments']);

/** Validates one policy-file scorer entry and builds it; problems are recorded by path. */
export function buildScorer(
  entry: unknown,
  path: Array<string | number>,
  problems: PolicyProblem[],
): Scorer | undefined {
  const kinds = Object.keys(SCORER_KINDS).join(', ');
  if (!isPlainObject(entry)) {
    problems.push({
      path: formatPath(path),
      message: `expected a scorer mapping with a kind, got ${describe(entry)}`,
    });
    return undefined;
  }
  const kindName = entry.kind;
  if (kindName === undefined) {
    problems.push({ path: formatPath([...path, 'kind']), message: `required (one of ${kinds})` });
    return undefined;
  }
  const kind =
    typeof kindName === 'string' && Object.hasOwn(SCORER_KINDS, kindName)
      ? SCORER_KINDS[kindName]
      : undefined;
  if (!kind) {
    const meant = typeof kindName === 'string' ? didYouMean(kindName, Object.keys(SCORER_KINDS)) : undefined;
    problems.push({
      path: formatPath([...path, 'kind']),
      message: meant
        ? `unknown scorer kind ${JSON.stringify(kindName)} (did you mean ${JSON.stringify(meant)}?)`
        : `unknown scorer kind ${JSON.stringify(kindName)} (expected one of ${kinds})`,
    });
    return undefined;
  }
  const view: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(entry)) view[key] = FLOAT_KEEPING_KEYS.has(key) ? v : unwrapFloats(v);
  const parsed = kind.schema.safeParse(view);
  if (!parsed.success) {
    problems.push(...issuesToProblems(parsed.error.issues, path, kind.schema));
    return undefined;
  }
  try {
    return kind.build(parsed.data);
  } catch (err) {
    problems.push({ path: formatPath(path), message: err instanceof Error ? err.message : String(err) });
    return undefined;
  }
}

/**
 * How problems name paths and keys: as the file writes them (the default), or as a policy
 * defined in code does (camelCase; see code-form.ts).
 */
export interface KeyNames {
  codePath(path: ReadonlyArray<PropertyKey>): PropertyKey[];
  codeKey(path: ReadonlyArray<PropertyKey>, key: string): string;
}

const FILE_NAMES: KeyNames = { codePath: (path) => [...path], codeKey: (_, key) => key };

/**
 * zod issues as policy problems: one per unknown key (with the key it most likely meant, when
 * `schema` is given), messages without zod's "Invalid input:" preamble. `schemaPath` is
 * where `issues` sit inside `schema` (for issues of a union branch).
 */
export function issuesToProblems(
  issues: readonly z.core.$ZodIssue[],
  prefix: ReadonlyArray<PropertyKey>,
  schema?: z.ZodType,
  schemaPath: ReadonlyArray<PropertyKey> = [],
  names: KeyNames = FILE_NAMES,
): PolicyProblem[] {
  const out: PolicyProblem[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...issue.path];
    if (issue.code === 'unrecognized_keys') {
      // Gates are few and named nowhere else: an unknown one lists them all.
      const gates = path.length === 1 && path[0] === 'gates';
      const known = gates
        ? GATE_NAMES
        : schema
          ? knownKeysAt(schema, [...schemaPath, ...issue.path]).map((k) => names.codeKey(path, k))
          : [];
      for (const key of issue.keys) {
        const meant = didYouMean(gates ? key : names.codeKey(path, key), known);
        const hint = meant ? `did you mean ${JSON.stringify(meant)}?` : undefined;
        out.push({
          path: formatPath(names.codePath([...path, key])),
          message: gates
            ? `unknown gate (${hint ? `${hint} ` : ''}valid gates: ${GATE_NAMES.join(', ')})`
            : hint
              ? `unknown key (${hint})`
              : 'unknown key',
        });
      }
      continue;
    }
    if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      // A branch whose type fits the input (no type mismatch at its root) is what the author
      // meant; report its issues rather than "no branch matched".
      const fitting = issue.errors.filter(
        (branch) =>
          branch.length > 0 &&
          !branch.some(
            (x) => x.path.length === 0 && (x.code === 'invalid_type' || x.code === 'invalid_value'),
          ),
      );
      if (fitting.length === 1) {
        out.push(...issuesToProblems(fitting[0]!, path, schema, [...schemaPath, ...issue.path], names));
        continue;
      }
      if (issue.message === 'Invalid input') {
        out.push({
          path: formatPath(names.codePath(path)),
          message: `expected ${unionExpectations(issue.errors)}`,
        });
        continue;
      }
    }
    let message = issue.message.replace(/^Invalid (input|option): /, '');
    if (issue.code === 'invalid_type' && message.endsWith(', received undefined')) {
      message = `required (${message.slice(0, -', received undefined'.length)})`;
    }
    out.push({ path: formatPath(names.codePath(path)), message });
  }
  return out;
}

/** `string or array` from the root issues of each union branch. */
function unionExpectations(branches: readonly (readonly z.core.$ZodIssue[])[]): string {
  const wanted: string[] = [];
  for (const branch of branches) {
    for (const x of branch) {
      if (x.path.length > 0) continue;
      if (x.code === 'invalid_type') wanted.push(String(x.expected));
      else if (x.code === 'invalid_value') wanted.push(x.values.map((v) => JSON.stringify(v)).join(' or '));
    }
  }
  return [...new Set(wanted)].join(' or ') || 'a different value';
}

/** Problems without repeats, in path order. */
export function sortProblems(problems: PolicyProblem[]): PolicyProblem[] {
  const seen = new Set<string>();
  return problems
    .filter((p) => {
      const key = `${p.path}\u0000${p.message}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .sort((a, b) => a.path.localeCompare(b.path, 'en', { numeric: true }));
}

/** A deep copy with every `PyFloat` replaced by its number. */
export function unwrapFloats(value: unknown): unknown {
  if (value instanceof PyFloat) return value.value;
  if (Array.isArray(value)) return value.map(unwrapFloats);
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = unwrapFloats(v);
    return out;
  }
  return value;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'string' ? `the string ${JSON.stringify(value)}` : typeof value;
}
