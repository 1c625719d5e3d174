import { z } from 'zod';
import type { AgentRun, ScoreContext, Scorer, ScorerResult } from '../types.js';
import { sha256Hex } from '../util/digest.js';
import { clonePythonValue, compareCodePoints, pythonJsonDumps } from '../util/python-json.js';
import { pythonRepr } from '../util/python-repr.js';
import {
  type AgnoEvidence,
  agnoEvidence,
  argsAsDict,
  membersCarryTools,
  specMatches,
} from './agno-evidence.js';
import { type ArgumentSpec, argumentSpecSchema, scorerSamplingSchema } from './reliability.js';
import { scoreSafely } from './scorer-result.js';

export interface ToolCallsOptions {
  /** Result name. Default `'tool_calls'`. */
  name?: string;
  /**
   * Tool names that must each have a clean execution; duplicates are dropped (first
   * appearance kept). Default `[]` (then `arguments` must hold at least one spec).
   */
  expectedTools?: readonly string[];
  /**
   * Per tool, one spec or a list of specs; each spec is one check, satisfied by any clean
   * execution of that tool whose arguments hold its keys (Python `==`). Default `null`.
   */
  arguments?: Record<string, ArgumentSpec | readonly ArgumentSpec[]> | null;
  /** When false, clean executions of tools named nowhere fail the result. Default `true`. */
  allowAdditional?: boolean;
  /** Per-scorer sampling. Default: the policy's ratio (deterministic scorers run at 1.0). */
  sampling?: { ratio: number };
}

/** agno's note when nested runs carry executions this scorer does not read. */
export const MEMBERS_NOT_INSPECTED_NOTE =
  'member tool executions were not inspected (member matching is out of scope for 2.8.0)';

/** The reason a configuration is refused: agno's constructor messages, by option path. */
export interface ToolCallsConfigProblem {
  path: Array<string | number>;
  /** `TypeError` or `ValueError`, as agno raises it. */
  type: 'TypeError' | 'ValueError';
  message: string;
}

/**
 * agno `ToolCallScorer.__init__` validation, in agno's order: a bare string, then empty
 * spec lists (first in dict order), then "no check at all". Returns the first problem, as
 * the Python constructor raises the first.
 */
export function toolCallsConfigProblem(
  expectedTools: unknown,
  args: Record<string, unknown> | null | undefined,
): ToolCallsConfigProblem | undefined {
  if (typeof expectedTools === 'string') {
    return {
      path: ['expected_tools'],
      type: 'TypeError',
      message: `expected_tools must be a sequence of tool names, not the bare string ${pythonRepr(expectedTools)}`,
    };
  }
  let specCount = 0;
  for (const [tool, spec] of Object.entries(args ?? {})) {
    const specs = Array.isArray(spec) ? spec : [spec];
    if (specs.length === 0) {
      return {
        path: ['arguments', tool],
        type: 'ValueError',
        message: `argument specs for ${pythonRepr(tool)} are empty; an empty list checks nothing`,
      };
    }
    specCount += specs.length;
  }
  const tools = Array.isArray(expectedTools) ? expectedTools : [];
  if (tools.length === 0 && specCount === 0) {
    return {
      path: ['expected_tools'],
      type: 'ValueError',
      message: 'ToolCallScorer needs expected_tools and/or arguments; with neither there is no check',
    };
  }
  return undefined;
}

/** agno `digest()` payload and hash, byte-identical to the Python fingerprint. */
export function toolCallsDigest(
  expectedTools: readonly string[],
  args: Record<string, unknown> | null,
  allowAdditional: boolean,
): string {
  const payload = {
    expected_tools: [...new Set(expectedTools)].sort(compareCodePoints),
    arguments: args,
    allow_additional: allowAdditional,
  };
  let text: string;
  try {
    text = pythonJsonDumps(payload);
  } catch (error) {
    const e = new Error(
      `ToolCallScorer expectations are not JSON-serializable: ${error instanceof Error ? error.message : String(error)}`,
    );
    e.name = 'FingerprintError';
    throw e;
  }
  return sha256Hex(text);
}

export interface ToolCallsDetail {
  value: number;
  passed: boolean;
  reason: string | null;
  checks: number;
  satisfied: number;
  /** Clean executions of tools named nowhere in the config, sorted (reported in either mode). */
  additional: string[];
}

interface ToolCallsRules {
  expectedTools: readonly string[];
  specs: ReadonlyArray<readonly [string, readonly ArgumentSpec[]]>;
  allowAdditional: boolean;
}

/**
 * agno `ToolCallScorer.score` on agno-shaped evidence of the run itself.
 * `membersHaveTools` is agno's `_members_carry_tools`. With `redactValues` (the policy's
 * `redact.values`), argument notes show each spec's keys with `...` for every value; the
 * text is otherwise agno's.
 */
export function evaluateToolCalls(
  evidence: AgnoEvidence,
  rules: ToolCallsRules,
  membersHaveTools: boolean,
  redactValues = false,
): ToolCallsDetail {
  const { executions } = evidence;
  const clean = executions.filter((e) => !e.error && !e.paused);
  const cleanNames = new Set(clean.filter((e) => e.name).map((e) => e.name));

  const notes: string[] = [];
  let checks = 0;
  let satisfied = 0;
  for (const tool of rules.expectedTools) {
    checks++;
    if (cleanNames.has(tool)) satisfied++;
    else notes.push(`expected tool ${pythonRepr(tool)} has no clean execution`);
  }
  for (const [tool, specs] of rules.specs) {
    const candidates = clean.filter((e) => e.name === tool).map((e) => argsAsDict(e.args));
    for (const spec of specs) {
      checks++;
      if (candidates.some((c) => specMatches(spec, c))) satisfied++;
      else
        notes.push(
          `no clean ${pythonRepr(tool)} execution matches arguments ${specText(spec, redactValues)}`,
        );
    }
  }

  const allowed = new Set<string>(rules.expectedTools);
  for (const [tool] of rules.specs) allowed.add(tool);
  const additional = [...cleanNames].filter((n) => !allowed.has(n)).sort(compareCodePoints);
  const strictFailure = !rules.allowAdditional && additional.length > 0;
  if (strictFailure) notes.push(`additional tool calls not allowed: ${pythonRepr(additional)}`);
  if (executions.length === 0) notes.unshift('run has no tool executions');
  if (membersHaveTools) notes.push(MEMBERS_NOT_INSPECTED_NOTE);

  const value = satisfied / checks;
  const passed = satisfied === checks && !strictFailure;
  return { value, passed, reason: notes.length > 0 ? notes.join('; ') : null, checks, satisfied, additional };
}

function specText(spec: ArgumentSpec, redactValues: boolean): string {
  if (!redactValues) return pythonRepr(spec);
  const keys = Object.keys(spec).filter((k) => spec[k] !== undefined);
  return `{${keys.map((k) => `${pythonRepr(k)}: ...`).join(', ')}}`;
}

/**
 * agno `ToolCallScorer` as a scorer over reconstructed runs (docs/semantics.md): clean
 * executions of the run itself, `score` = satisfied checks / checks. Throws agno's
 * constructor errors (`TypeError` / `ValueError` text) for configurations with no check.
 */
export function toolCalls(options: ToolCallsOptions): Scorer {
  const problem = toolCallsConfigProblem(options.expectedTools ?? [], options.arguments);
  if (problem) {
    const e = problem.type === 'TypeError' ? new TypeError(problem.message) : new Error(problem.message);
    if (problem.type === 'ValueError') e.name = 'ValueError';
    throw e;
  }
  const expectedTools = [...new Set(options.expectedTools ?? [])];
  const args = clonePythonValue(options.arguments ?? null);
  const allowAdditional = options.allowAdditional ?? true;
  const rules: ToolCallsRules = {
    expectedTools,
    specs: Object.entries(args ?? {}).map(([tool, spec]) => [
      tool,
      Array.isArray(spec) ? [...spec] : [spec as ArgumentSpec],
    ]),
    allowAdditional,
  };
  const name = options.name ?? 'tool_calls';
  const identity = {
    name,
    kind: 'tool_calls',
    digest: toolCallsDigest(expectedTools, args, allowAdditional),
  };
  const scorer: Scorer = {
    ...identity,
    async: false,
    ...(options.sampling ? { sampling: { ratio: options.sampling.ratio } } : {}),
    config: {
      kind: 'tool_calls',
      name,
      expected_tools: expectedTools,
      arguments: args,
      allow_additional: allowAdditional,
    },
    // Only the argument specs' tools.
    argumentsRead: new Set(Object.keys(args ?? {})),
    score(run: AgentRun, context?: ScoreContext): ScorerResult {
      return scoreSafely(identity, () => {
        const redact = context?.redact?.values === true;
        const detail = evaluateToolCalls(agnoEvidence(run, 'self'), rules, membersCarryTools(run), redact);
        return { passed: detail.passed, score: detail.value, reason: detail.reason, detail: { ...detail } };
      });
    },
  };
  return scorer;
}

// ---------------------------------------------------------------------------------------
// Policy-file form

export const toolCallsConfigSchema = z
  .strictObject({
    kind: z.literal('tool_calls'),
    name: z.string().min(1).optional(),
    // A bare string is accepted here so the refinement below can refuse it in agno's words.
    expected_tools: z.union([z.string(), z.array(z.string())]).default([]),
    arguments: z
      .record(z.string(), z.union([argumentSpecSchema, z.array(argumentSpecSchema)]))
      .nullable()
      .optional(),
    allow_additional: z.boolean().default(true),
    sampling: scorerSamplingSchema.optional(),
  })
  .superRefine((config, ctx) => {
    const problem = toolCallsConfigProblem(config.expected_tools, config.arguments);
    if (problem) ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message });
  });

export type ToolCallsConfig = z.output<typeof toolCallsConfigSchema>;

/** Builds the scorer from a validated policy entry. */
export function toolCallsFromConfig(config: ToolCallsConfig): Scorer {
  return toolCalls({
    ...(config.name !== undefined ? { name: config.name } : {}),
    // A bare string (refused by the schema's refinement) makes toolCalls throw agno's TypeError.
    expectedTools: config.expected_tools as readonly string[],
    arguments: config.arguments ?? null,
    allowAdditional: config.allow_additional,
    ...(config.sampling ? { sampling: config.sampling } : {}),
  });
}
