import { z } from 'zod';
import type { AgentRun, Scorer, ScorerResult } from '../types.js';
import { configDigest } from '../util/digest.js';
import { clonePythonValue, compareCodePoints, PyFloat } from '../util/python-json.js';
import { pythonRepr } from '../util/python-repr.js';
import {
  type AgnoEvidence,
  agnoEvidence,
  argsAsDict,
  type EvidenceScope,
  specMatches,
} from './agno-evidence.js';
import { appendToolLists, type ResultReader } from './result-reader.js';
import { scoreSafely } from './scorer-result.js';

/** One argument spec: top-level keys the call's arguments must hold, compared with Python `==`. */
export type ArgumentSpec = Record<string, unknown>;

export interface ReliabilityOptions {
  /** Result name. Default `'reliability'`. */
  name?: string;
  /**
   * Tool names that must each have at least one clean execution (set semantics, order not
   * checked). Default `null`: no name checks, and strict mode is off (agno's `None`).
   */
  expectedToolCalls?: readonly string[] | null;
  /**
   * When false, any attempt of a tool not in `expectedToolCalls` — clean, errored, paused or
   * only requested — fails the eval. Default `false` (strict), as in agno.
   */
  allowAdditionalToolCalls?: boolean;
  /**
   * Per tool, one spec or a list of specs; every spec must match some clean execution of
   * that tool. Default `null`.
   */
  expectedToolCallArguments?: Record<string, ArgumentSpec | readonly ArgumentSpec[]> | null;
  /**
   * `members` (default): the run and every nested run, depth-first (agno's team evidence).
   * `self`: the run's own calls only.
   */
  scope?: EvidenceScope;
  /** Per-scorer sampling. Default: the policy's ratio (deterministic scorers run at 1.0). */
  sampling?: { ratio: number };
}

/** agno's annotation for an expected tool that was attempted but never ran cleanly (U+2014 dash). */
export const REFUSED_ANNOTATION = ' (requested but refused/errored \u2014 execution matching, new in 2.8.0)';

/** agno `ReliabilityResult` fields, snake_case as the verdict JSON carries them. */
export type ReliabilityDetail = {
  eval_status: 'PASSED' | 'FAILED';
  passed_tool_calls: string[];
  failed_tool_calls: string[];
  additional_tool_calls: string[];
  missing_tool_calls: string[];
  passed_argument_checks: string[];
  failed_argument_checks: string[];
};

interface ReliabilityRules {
  expectedToolCalls: readonly string[] | null;
  allowAdditionalToolCalls: boolean;
  expectedToolCallArguments: Record<string, ArgumentSpec | readonly ArgumentSpec[]> | null;
  /** `expectedToolCalls` as a set, when the caller built it once (the scorer does). */
  expectedSet?: ReadonlySet<string> | null;
}

/** Up to this many passed names, a missing tool is looked up in the list, not a set. */
const SCAN_LIMIT = 16;

/**
 * agno `ReliabilityEval._evaluate` on agno-shaped evidence.
 * Pure; throws only where agno would (an argument spec that is not a dict).
 */
export function evaluateReliability(evidence: AgnoEvidence, rules: ReliabilityRules): ReliabilityDetail {
  const { executions, requestedNames } = evidence;
  const expected = rules.expectedToolCalls;
  const expectedSet = expected === null ? null : (rules.expectedSet ?? new Set(expected));
  const strict = !rules.allowAdditionalToolCalls;

  const passed: string[] = [];
  const failed: string[] = [];
  const additional: string[] = [];

  // One entry per execution; strict mode polices attempts, not successes.
  for (const e of executions) {
    if (!e.name) continue;
    if (expectedSet !== null && !expectedSet.has(e.name)) (strict ? failed : additional).push(e.name);
    else if (!e.error && !e.paused) passed.push(e.name);
  }

  // Names only requested (refused, unknown tool), once each, sorted, after executions.
  if (expectedSet !== null && requestedNames.size > 0) {
    const executedNames = new Set(executions.map((e) => e.name));
    const requestOnly = [...requestedNames].filter((n) => !executedNames.has(n)).sort(compareCodePoints);
    for (const name of requestOnly) {
      if (!expectedSet.has(name)) (strict ? failed : additional).push(name);
    }
  }

  // Missing: in list order, duplicates kept. With expectations,
  // `passed` holds exactly the expected names that ran cleanly.
  const missing: string[] = [];
  const argumentRules = rules.expectedToolCallArguments;
  const checkArguments = argumentRules !== null && Object.keys(argumentRules).length > 0;
  const missingNames = checkArguments ? new Set<string>() : undefined;
  if (expected !== null && expected.length > 0) {
    const cleanNames = passed.length > SCAN_LIMIT ? new Set(passed) : undefined;
    let attemptedNames: Set<string> | undefined;
    for (const tool of expected) {
      if (cleanNames ? cleanNames.has(tool) : passed.includes(tool)) continue;
      missingNames?.add(tool);
      attemptedNames ??= attempted(evidence);
      missing.push(attemptedNames.has(tool) ? tool + REFUSED_ANNOTATION : tool);
    }
  }

  // Argument checks: once per tool, skipping tools already reported missing.
  const passedArgs: string[] = [];
  const failedArgs: string[] = [];
  if (checkArguments) {
    for (const [tool, spec] of Object.entries(argumentRules!)) {
      if (missingNames!.has(tool)) continue;
      const specs: readonly unknown[] = Array.isArray(spec) ? spec : [spec];
      const candidates = executions
        .filter((e) => e.name === tool && !e.error && !e.paused)
        .map((e) => argsAsDict(e.args));
      if (candidates.length === 0) {
        failedArgs.push(tool);
        continue;
      }
      const allMatch = specs.every((s) => {
        const dict = requireDict(s);
        return candidates.some((c) => specMatches(dict, c));
      });
      (allMatch ? passedArgs : failedArgs).push(tool);
    }
  }

  // The verdict.
  const ok = failed.length === 0 && missing.length === 0 && failedArgs.length === 0;
  return {
    eval_status: ok ? 'PASSED' : 'FAILED',
    passed_tool_calls: passed,
    failed_tool_calls: failed,
    additional_tool_calls: additional,
    missing_tool_calls: missing,
    passed_argument_checks: passedArgs,
    failed_argument_checks: failedArgs,
  };
}

/** Attempted names: requested, or executed in any state. */
function attempted(evidence: AgnoEvidence): Set<string> {
  const names = new Set<string>(evidence.requestedNames);
  for (const e of evidence.executions) if (e.name) names.add(e.name);
  return names;
}

function requireDict(spec: unknown): ArgumentSpec {
  if (spec !== null && typeof spec === 'object' && !Array.isArray(spec) && !(spec instanceof PyFloat)) {
    return spec as ArgumentSpec;
  }
  // What Python raises when agno calls `spec.items()` on a non-dict.
  throw new TypeError(`'${pythonTypeName(spec)}' object has no attribute 'items'`);
}

function pythonTypeName(v: unknown): string {
  if (v === null || v === undefined) return 'NoneType';
  if (typeof v === 'string') return 'str';
  if (typeof v === 'boolean') return 'bool';
  if (v instanceof PyFloat) return 'float';
  if (typeof v === 'number') return Number.isSafeInteger(v) ? 'int' : 'float';
  if (Array.isArray(v)) return 'list';
  return typeof v;
}

/** The failing lists, named as agno names them; null when the eval passed. */
function reliabilityReason(d: ReliabilityDetail): string | null {
  if (d.eval_status === 'PASSED') return null;
  const parts: string[] = [];
  if (d.missing_tool_calls.length > 0) parts.push(`missing_tool_calls=${pythonRepr(d.missing_tool_calls)}`);
  if (d.failed_tool_calls.length > 0) parts.push(`failed_tool_calls=${pythonRepr(d.failed_tool_calls)}`);
  if (d.failed_argument_checks.length > 0) {
    parts.push(`failed_argument_checks=${pythonRepr(d.failed_argument_checks)}`);
  }
  return parts.join('; ');
}

/**
 * agno `ReliabilityEval` as a scorer over reconstructed runs (docs/semantics.md). Score 1 when
 * PASSED, else 0. The constructor validates nothing, as agno's does: with no expectations
 * the eval passes vacuously.
 */
export function reliability(options: ReliabilityOptions = {}): Scorer {
  const expectedToolCalls = options.expectedToolCalls == null ? null : [...options.expectedToolCalls];
  const rules: ReliabilityRules = {
    expectedToolCalls,
    allowAdditionalToolCalls: options.allowAdditionalToolCalls ?? false,
    expectedToolCallArguments: clonePythonValue(options.expectedToolCallArguments ?? null),
    expectedSet: expectedToolCalls === null ? null : new Set(expectedToolCalls),
  };
  const scope: EvidenceScope = options.scope ?? 'members';
  const name = options.name ?? 'reliability';
  const canonical = {
    kind: 'reliability',
    expected_tool_calls: rules.expectedToolCalls,
    allow_additional_tool_calls: rules.allowAdditionalToolCalls,
    expected_tool_call_arguments: rules.expectedToolCallArguments,
    scope,
  };
  const identity = { name, kind: 'reliability', digest: configDigest(canonical) };
  const scorer: Scorer = {
    ...identity,
    async: false,
    ...(options.sampling ? { sampling: { ratio: options.sampling.ratio } } : {}),
    config: { ...canonical, name },
    // Only the argument rules' tools (R8).
    argumentsRead: new Set(Object.keys(rules.expectedToolCallArguments ?? {})),
    score(run: AgentRun): ScorerResult {
      return scoreSafely(identity, () => {
        const detail = evaluateReliability(agnoEvidence(run, scope), rules);
        const passed = detail.eval_status === 'PASSED';
        // `detail` is built afresh for each run: no copy needed.
        return { passed, score: passed ? 1 : 0, reason: reliabilityReason(detail), detail };
      });
    },
  };
  return scorer;
}

// ---------------------------------------------------------------------------------------
// Policy-file form

/** A number, or a `PyFloat` the policy loader made of a number written as a float. */
const pyNumber = z.union([z.number(), z.instanceof(PyFloat).transform((v) => v.value)]);

/** `sampling: { ratio }` in a scorer entry. */
export const scorerSamplingSchema = z.strictObject({ ratio: pyNumber.pipe(z.number().min(0).max(1)) });

/** One argument spec in a policy file: a mapping of argument name to expected value. */
export const argumentSpecSchema = z.record(z.string(), z.unknown());

export const reliabilityConfigSchema = z.strictObject({
  kind: z.literal('reliability'),
  name: z.string().min(1).optional(),
  expected_tool_calls: z.array(z.string()).nullable().optional(),
  allow_additional_tool_calls: z.boolean().default(false),
  expected_tool_call_arguments: z
    .record(z.string(), z.union([argumentSpecSchema, z.array(argumentSpecSchema)]))
    .nullable()
    .optional(),
  scope: z.enum(['members', 'self']).default('members'),
  sampling: scorerSamplingSchema.optional(),
});

export type ReliabilityConfig = z.output<typeof reliabilityConfigSchema>;

/** Builds the scorer from a validated policy entry. */
export function reliabilityFromConfig(config: ReliabilityConfig): Scorer {
  return reliability({
    ...(config.name !== undefined ? { name: config.name } : {}),
    expectedToolCalls: config.expected_tool_calls ?? null,
    allowAdditionalToolCalls: config.allow_additional_tool_calls,
    expectedToolCallArguments: config.expected_tool_call_arguments ?? null,
    scope: config.scope,
    ...(config.sampling ? { sampling: config.sampling } : {}),
  });
}

/** How a reliability result explains itself without values: the tools missing, and those not allowed. */
export const reliabilityResults: ResultReader = {
  explainRedacted: (result: ScorerResult) => appendToolLists(result.label, result.detail),
};
