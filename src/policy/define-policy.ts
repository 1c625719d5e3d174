import type { Gate, GuardCheck, GuardMode, Policy, RuleMatch, Scorer } from '../types.js';
import { codeKey, codePath, fileFormOf } from './code-form.js';
import { guardProblems } from './guard-problems.js';
import {
  assemble,
  buildScorer,
  duplicateScorerNames,
  isPlainObject,
  issuesToProblems,
  sortProblems,
} from './parse-policy.js';
import { formatPath, PolicyError, type PolicyProblem } from './policy-error.js';
import { policySchema } from './policy-schema.js';

export interface RuleDefinition {
  name: string;
  /** Default: any agent, outermost runs only. */
  match?: Partial<RuleMatch>;
  /**
   * Built with `reliability`, `toolCalls`, `toolOrder`, `trajectory`, `llmJudge` or custom
   * `Scorer`s; entries in the policy-file form (`{ kind: 'tool_order', expected_tool: … }`)
   * are accepted too.
   */
  scorers: Array<Scorer | ({ kind: string } & Record<string, unknown>)>;
  /**
   * Decide tool calls before they run (`checkToolCall`) from this rule's `trajectory` scorers.
   * `mode` defaults to `enforce` (`observe` records "would deny" and lets the call run);
   * `checks` to all five. Default none: the rule's decisions never block.
   */
  guard?: { mode?: GuardMode; checks?: GuardCheck[] };
}

export interface PolicyDefinition {
  version?: 1;
  /** Default `{ ratio: 1 }`. */
  sampling?: { ratio: number };
  /** Defaults: 30 calls per minute, 2 at a time, no escalation. */
  judge?: { maxPerMinute?: number; maxConcurrent?: number; escalateOn?: Array<'failure' | 'error_span'> };
  /** Default `{ values: true }`; `prompt` is a last pass over every text sent to a judge. */
  redact?: { values?: boolean; prompt?: (text: string) => string };
  rules: RuleDefinition[];
  /** Default none. */
  gates?: Record<string, Gate>;
}

/**
 * A policy defined in code, with scorer factories instead of YAML entries. Checked like a
 * policy file (same problems, same digest); throws `PolicyError`.
 */
export function definePolicy(definition: PolicyDefinition): Policy {
  if (!isPlainObject(definition)) {
    throw new PolicyError([{ path: '', message: 'expected a policy definition object' }]);
  }
  const file = fileFormOf({ ...definition, version: definition.version ?? 1 });
  const problems: PolicyProblem[] = [];
  const parsed = policySchema.safeParse(file);
  if (!parsed.success)
    problems.push(...issuesToProblems(parsed.error.issues, [], policySchema, [], { codePath, codeKey }));
  const prompt = definition.redact?.prompt;
  if (prompt !== undefined && typeof prompt !== 'function')
    problems.push({ path: 'redact.prompt', message: `expected a function, got ${typeof prompt}` });
  const names = new Map<string, number>();
  const built: Scorer[][] = [];
  (Array.isArray(definition.rules) ? definition.rules : []).forEach((rule, i) => {
    if (!isPlainObject(rule)) {
      built.push([]);
      return;
    }
    const first = names.get(rule.name);
    if (first !== undefined) {
      problems.push({
        path: formatPath(['rules', i, 'name']),
        message: `duplicate rule name ${JSON.stringify(rule.name)} (also rules[${first}])`,
      });
    } else names.set(rule.name, i);
    const entries: unknown[] = Array.isArray(rule.scorers) ? rule.scorers : [];
    const placed: Array<[Scorer, number]> = [];
    entries.forEach((entry, j) => {
      if (isScorer(entry)) placed.push([entry, j]);
      else if (isPlainObject(entry) && 'kind' in entry) {
        // A scorer written in its policy-file form.
        const scorer = buildScorer(entry, ['rules', i, 'scorers', j], problems);
        if (scorer) placed.push([scorer, j]);
      } else {
        problems.push({
          path: formatPath(['rules', i, 'scorers', j]),
          message:
            'expected a Scorer (name, kind, digest, async, config, score()) or a scorer entry with a kind',
        });
      }
    });
    built.push(placed.map(([s]) => s));
    problems.push(...duplicateScorerNames(placed, i));
    const guard = parsed.success ? parsed.data.rules[i]?.guard : undefined;
    if (guard !== undefined && placed.length === entries.length)
      problems.push(...guardProblems(guard.checks, built[i]!, i));
  });
  if (problems.length > 0 || !parsed.success) throw new PolicyError(sortProblems(problems));
  const policy = assemble(parsed.data, built);
  // A function cannot be part of the file form (nor of the digest): attached after checking.
  if (prompt) policy.redact = { ...policy.redact, prompt };
  return policy;
}

export function isScorer(value: unknown): value is Scorer {
  if (value === null || typeof value !== 'object') return false;
  const s = value as Partial<Scorer>;
  return (
    typeof s.name === 'string' &&
    typeof s.kind === 'string' &&
    typeof s.digest === 'string' &&
    typeof s.async === 'boolean' &&
    typeof s.score === 'function' &&
    s.config !== null &&
    typeof s.config === 'object'
  );
}

/** A built `Policy` (from `definePolicy`, `parsePolicy` or `loadPolicy`) rather than a file form. */
export function isPolicy(value: unknown): value is Policy {
  if (value === null || typeof value !== 'object') return false;
  const p = value as Partial<Policy>;
  return (
    typeof p.digest === 'string' &&
    Array.isArray(p.rules) &&
    p.rules.every((r) => Array.isArray(r?.scorers) && r.scorers.every(isScorer))
  );
}
