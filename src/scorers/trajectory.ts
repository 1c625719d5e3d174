import { z } from 'zod';
import { canonicalArgs } from '../reconstruction/canonical-args.js';
import type { AgentRun, ScoreContext, Scorer, ScorerResult, SyncScorer, ToolExecution } from '../types.js';
import { configDigest } from '../util/digest.js';
import { PyFloat } from '../util/python-json.js';
import {
  type ArgRule,
  type CompiledField,
  checkField,
  compileField,
  isRecord,
  RULE_KEYS,
} from './arg-rules.js';
import { declareArgumentsRead } from './arguments-read.js';
import { checkRegexSafety } from './safe-regex.js';
import { errorResult } from './scorer-result.js';

/**
 * `trajectory`: the eval-dataset trajectory evaluator (docs/semantics.md, "trajectory")
 * on the calls of a reconstructed run, plus order modes, precision/recall, loop detection
 * and per-tool retry accounting.
 */

export const TRAJECTORY_KIND = 'trajectory';

export type Scope = 'self' | 'members';
export type TrajectoryOrder = 'exact' | 'in_order' | 'any_order';
export type Risk = 'low' | 'medium' | 'high' | 'critical';
export type { ArgRule } from './arg-rules.js';

export interface TrajectoryWeights {
  /** Default 0.35. */
  toolSelection?: number;
  /** Default 0.35. */
  arguments?: number;
  /** Default 0.15. */
  order?: number;
  /** Default 0.15. */
  callBudget?: number;
}

export interface TrajectoryOptions {
  /** Result name. Default `trajectory`. */
  name?: string;
  /** Tools that must be called (duplicates matter for `order` and precision/recall). */
  expectedTools?: string[];
  /** Tools that must not be called, not even as a refused request. */
  forbiddenTools?: string[];
  /** Most calls allowed in scope. Default unlimited. */
  maxCalls?: number;
  /** `{ tool: { "dotted.path": rule } }`, checked on each tool's first call. */
  argConstraints?: Record<string, Record<string, ArgRule>>;
  /** `[before, after]` pairs on first calls. */
  expectedOrder?: Array<[string, string]>;
  /** Component weights; they must sum to 1. Default 0.35 / 0.35 / 0.15 / 0.15. */
  weights?: TrajectoryWeights;
  /** Default 0.9. */
  passThreshold?: number;
  /** Default `members`: the run's own calls, then each nested run's, depth first. */
  scope?: Scope;
  risk?: Risk;
  intent?: string;
  /** Order of `expectedTools`: exact sequence / ordered subsequence / all present. Default none. */
  order?: TrajectoryOrder;
  /** Most identical calls (same name and arguments) allowed. Default unlimited. */
  maxRepeats?: number;
  /** Per-scorer sampling. Default ratio 1.0. */
  sampling?: { ratio: number };
}

const DEFAULT_WEIGHTS = { tool_selection: 0.35, arguments: 0.35, order: 0.15, call_budget: 0.15 } as const;
const DEFAULT_PASS_THRESHOLD = 0.9;

/** A message for wrong types only; other issues (unknown keys) keep zod's own text. */
const onlyType = (message: string) => (issue: { code?: string }) =>
  issue.code === 'invalid_type' ? message : undefined;

// YAML/JSON readers may hand over float-typed numbers as PyFloat.
const num = z.preprocess((v) => (v instanceof PyFloat ? v.value : v), z.number());
const toolName = z.string().min(1, 'tool names must be non-empty');
const toolList = (what: string) =>
  z
    .array(toolName, { error: 'expected array of strings' })
    .min(1, `${what} must not be empty (leave it out instead)`);
const nonEmptyList = z
  .array(z.unknown(), { error: 'expected a list' })
  .min(1, 'an empty list can never match; leave the rule out instead');

const argRuleSchema = z
  .strictObject(
    {
      equals: z.unknown().optional(),
      not_equals: z.unknown().optional(),
      contains: z.unknown().optional(),
      in: nonEmptyList.optional(),
      not_in: nonEmptyList.optional(),
      not_null: z.boolean().optional(),
      exists: z.boolean().optional(),
      matches: z
        .string()
        .superRefine((pattern, ctx) => {
          const safety = checkRegexSafety(pattern);
          if (!safety.safe)
            ctx.addIssue({ code: 'custom', message: `unsafe or invalid pattern: ${safety.reason}` });
        })
        .optional(),
      gt: num.optional(),
      gte: num.optional(),
      lt: num.optional(),
      lte: num.optional(),
    },
    { error: onlyType('expected a rule object such as { equals: value }') },
  )
  .refine((rule) => RULE_KEYS.some((k) => Object.hasOwn(rule, k)), {
    message: `a rule needs at least one of ${RULE_KEYS.join(', ')}`,
  });

/** The policy-file shape (snake_case). */
export const trajectoryConfigSchema = z
  .strictObject({
    kind: z.literal(TRAJECTORY_KIND),
    name: z.string().min(1).optional(),
    expected_tools: toolList('expected_tools').optional(),
    forbidden_tools: toolList('forbidden_tools').optional(),
    max_calls: num.pipe(z.number().int().min(0)).optional(),
    arg_constraints: z
      .record(
        toolName,
        z
          .record(z.string().min(1, 'field paths must be non-empty'), argRuleSchema, {
            error: onlyType('expected { "field.path": rule }'),
          })
          .refine((fields) => Object.keys(fields).length > 0, 'a tool needs at least one field rule'),
        { error: onlyType('expected { tool: { "field.path": rule } }') },
      )
      .refine(
        (tools) => Object.keys(tools).length > 0,
        'arg_constraints must not be empty (leave it out instead)',
      )
      .optional(),
    expected_order: z
      .array(z.tuple([toolName, toolName], { error: 'expected a [before, after] pair of tool names' }), {
        error: 'expected a list of [before, after] pairs',
      })
      .min(1, 'expected_order must not be empty (leave it out instead)')
      .refine((pairs) => pairs.every(([a, b]) => a !== b), 'a [before, after] pair needs two different tools')
      .optional(),
    weights: z
      .strictObject({
        tool_selection: num.pipe(z.number().min(0)).optional(),
        arguments: num.pipe(z.number().min(0)).optional(),
        order: num.pipe(z.number().min(0)).optional(),
        call_budget: num.pipe(z.number().min(0)).optional(),
      })
      .refine((w) => {
        const sum = Object.values({ ...DEFAULT_WEIGHTS, ...w }).reduce((a, b) => a + b, 0);
        return Math.abs(sum - 1) < 1e-9;
      }, 'weights must sum to 1 (missing weights take their defaults 0.35/0.35/0.15/0.15)')
      .optional(),
    pass_threshold: num.pipe(z.number().min(0).max(1)).optional(),
    scope: z.enum(['self', 'members']).optional(),
    risk: z.enum(['low', 'medium', 'high', 'critical']).optional(),
    intent: z.string().optional(),
    order: z.enum(['exact', 'in_order', 'any_order']).optional(),
    max_repeats: num.pipe(z.number().int().min(1)).optional(),
    sampling: z.strictObject({ ratio: num.pipe(z.number().min(0).max(1)) }).optional(),
  })
  .superRefine((config, ctx) => {
    if (config.order && !config.expected_tools) {
      ctx.addIssue({ code: 'custom', path: ['order'], message: 'order needs expected_tools' });
    }
    const forbidden = new Set(config.forbidden_tools ?? []);
    for (const [i, t] of (config.expected_tools ?? []).entries()) {
      if (forbidden.has(t)) {
        ctx.addIssue({
          code: 'custom',
          path: ['expected_tools', i],
          message: `${t} is both expected and forbidden`,
        });
      }
    }
  });

export type TrajectoryConfig = z.infer<typeof trajectoryConfigSchema>;

/** Build the scorer from a parsed policy entry. */
export function trajectoryFromConfig(config: TrajectoryConfig): SyncScorer {
  const w = config.weights;
  return trajectory({
    name: config.name,
    expectedTools: config.expected_tools,
    forbiddenTools: config.forbidden_tools,
    maxCalls: config.max_calls,
    argConstraints: config.arg_constraints as Record<string, Record<string, ArgRule>> | undefined,
    expectedOrder: config.expected_order,
    weights: w && {
      toolSelection: w.tool_selection,
      arguments: w.arguments,
      order: w.order,
      callBudget: w.call_budget,
    },
    passThreshold: config.pass_threshold,
    scope: config.scope,
    risk: config.risk,
    intent: config.intent,
    order: config.order,
    maxRepeats: config.max_repeats,
    sampling: config.sampling,
  });
}

/** What live misuse detection needs from a trajectory scorer. */
export interface TrajectoryLimits {
  forbidden: Set<string>;
  expected: Set<string>;
  maxCalls?: number;
  maxRepeats?: number;
  /** `arg_constraints`, compiled: what a call's arguments must hold, by tool. Shared, never written. */
  argRules: ReadonlyMap<string, readonly CompiledField[]>;
}

const limitsByScorer = new WeakMap<Scorer, TrajectoryLimits>();

/** The live-checkable limits of a scorer built by `trajectory`, or undefined for any other scorer. */
export function trajectoryLimits(scorer: Scorer): TrajectoryLimits | undefined {
  const limits = limitsByScorer.get(scorer);
  if (!limits) return undefined;
  return {
    forbidden: new Set(limits.forbidden),
    expected: new Set(limits.expected),
    ...(limits.maxCalls !== undefined ? { maxCalls: limits.maxCalls } : {}),
    ...(limits.maxRepeats !== undefined ? { maxRepeats: limits.maxRepeats } : {}),
    argRules: limits.argRules,
  };
}

export interface TrajectoryError {
  code:
    | 'missing_tool'
    | 'forbidden_tool'
    | 'call_budget_exceeded'
    | 'arg_mismatch'
    | 'order_violation'
    | 'repeated_call';
  tool?: string;
  field?: string;
  message: string;
}

/** A constrained tool, its fields and its slot in a run's tallies. */
interface CompiledTool {
  tool: string;
  slot: number;
  fields: CompiledField[];
}

export function trajectory(options: TrajectoryOptions): SyncScorer {
  const w = options.weights;
  const raw: Record<string, unknown> = {
    kind: TRAJECTORY_KIND,
    name: options.name,
    expected_tools: options.expectedTools,
    forbidden_tools: options.forbiddenTools,
    max_calls: options.maxCalls,
    arg_constraints: options.argConstraints,
    expected_order: options.expectedOrder,
    weights: w && {
      tool_selection: w.toolSelection,
      arguments: w.arguments,
      order: w.order,
      call_budget: w.callBudget,
    },
    pass_threshold: options.passThreshold,
    scope: options.scope,
    risk: options.risk,
    intent: options.intent,
    order: options.order,
    max_repeats: options.maxRepeats,
    sampling: options.sampling,
  };
  for (const key of Object.keys(raw)) if (raw[key] === undefined) delete raw[key];
  const weightsRaw = raw.weights as Record<string, unknown> | undefined;
  if (weightsRaw)
    for (const key of Object.keys(weightsRaw)) if (weightsRaw[key] === undefined) delete weightsRaw[key];
  // Code-defined scorers get the same checks as policy files (unsafe patterns above all).
  const parsed = trajectoryConfigSchema.safeParse(raw);
  if (!parsed.success) {
    throw new Error(
      `invalid trajectory options: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
    );
  }
  const cfg = parsed.data;

  const expectedTools = cfg.expected_tools ?? [];
  const forbiddenTools = cfg.forbidden_tools ?? [];
  const weights = { ...DEFAULT_WEIGHTS, ...cfg.weights };
  const passThreshold = cfg.pass_threshold ?? DEFAULT_PASS_THRESHOLD;
  const scope: Scope = cfg.scope ?? 'members';
  const argConstraints = unwrapFloats(cfg.arg_constraints ?? {}) as Record<string, Record<string, ArgRule>>;
  const expectedOrder = cfg.expected_order ?? [];
  const name = cfg.name ?? TRAJECTORY_KIND;

  const config: Record<string, unknown> = {
    kind: TRAJECTORY_KIND,
    expected_tools: [...expectedTools],
    forbidden_tools: [...forbiddenTools],
    ...(cfg.max_calls !== undefined ? { max_calls: cfg.max_calls } : {}),
    arg_constraints: argConstraints,
    expected_order: expectedOrder.map(([a, b]) => [a, b]),
    weights,
    pass_threshold: passThreshold,
    scope,
    ...(cfg.risk !== undefined ? { risk: cfg.risk } : {}),
    ...(cfg.intent !== undefined ? { intent: cfg.intent } : {}),
    ...(cfg.order !== undefined ? { order: cfg.order } : {}),
    ...(cfg.max_repeats !== undefined ? { max_repeats: cfg.max_repeats } : {}),
  };
  // Floats are digested as floats, so `pass_threshold: 1` and `1.0` are the same config.
  const digest = configDigest({
    ...config,
    weights: Object.fromEntries(Object.entries(weights).map(([k, v]) => [k, new PyFloat(v)])),
    pass_threshold: new PyFloat(passThreshold),
  });

  // Every tool a check names gets a slot: a run is tallied in one pass over its calls, and
  // only those tools' calls are kept.
  const slotOf = new Map<string, number>();
  const slot = (tool: string): number => {
    let at = slotOf.get(tool);
    if (at === undefined) {
      at = slotOf.size;
      slotOf.set(tool, at);
    }
    return at;
  };
  const compiled = new Map<string, CompiledField[]>();
  const constrained: CompiledTool[] = [];
  for (const [tool, fields] of Object.entries(argConstraints)) {
    const list = Object.entries(fields).map(([path, rule]) => compileField(path, rule));
    compiled.set(tool, list);
    constrained.push({ tool, slot: slot(tool), fields: list });
  }

  const uniqueExpected = [...new Set(expectedTools)].map((tool) => ({
    tool,
    missing: `expected tool ${tool} was not called`,
    slot: slot(tool),
    fields: compiled.get(tool) ?? NO_FIELDS,
    constrainedAt: constrained.findIndex((c) => c.tool === tool),
  }));
  const uniqueForbidden = [...new Set(forbiddenTools)].map((tool) => ({ tool, slot: slot(tool) }));
  const expectedCounts = [...countNames(expectedTools)].map(([tool, n]) => ({ slot: slot(tool), n }));
  const orderPairs = expectedOrder.map(([before, after]) => ({
    after,
    violation: `${after} was first called before ${before}`,
    b: slot(before),
    a: slot(after),
  }));
  const slots = slotOf.size;
  const orderMismatch =
    cfg.order === undefined
      ? ''
      : `] do not match expected_tools [${listPreview(expectedTools)}] ${{ exact: 'exactly', in_order: 'in order', any_order: 'all present' }[cfg.order]}`;

  const evaluate = (run: AgentRun, context?: ScoreContext): ScorerResult => {
    const redact = context?.redact?.values === true;
    const calls = collectCalls(run, scope);
    // Per slot: the tool's calls in order, and the index of its first call.
    const byTool: Array<ToolExecution[] | undefined> = new Array(slots);
    const firstIndex: number[] = new Array(slots);
    let i = 0;
    for (const call of calls) {
      const at = slotOf.get(call.name);
      if (at !== undefined) {
        const list = byTool[at];
        if (list) list.push(call);
        else {
          byTool[at] = [call];
          firstIndex[at] = i;
        }
      }
      i++;
    }
    const errors: TrajectoryError[] = [];

    // 1. missing expected tools
    let missingTool = false;
    for (const { tool, slot, missing } of uniqueExpected) {
      if (byTool[slot] === undefined) {
        missingTool = true;
        errors.push({ code: 'missing_tool', tool, message: missing });
      }
    }
    // 2. forbidden tools, executed in any status or only requested
    let forbiddenCalled = false;
    for (const { tool, slot } of uniqueForbidden) {
      const list = byTool[slot];
      if (!list) continue;
      forbiddenCalled = true;
      let executed = 0;
      for (const c of list) if (!c.requestOnly) executed++;
      const message =
        executed > 0
          ? `forbidden tool ${tool} was executed (${plural(executed, 'call')})`
          : `forbidden tool ${tool} was requested but not executed (${plural(list.length, 'request')})`;
      errors.push({ code: 'forbidden_tool', tool, message });
    }
    // 3. call budget
    let budgetPass = true;
    if (cfg.max_calls !== undefined && calls.length > cfg.max_calls) {
      budgetPass = false;
      errors.push({
        code: 'call_budget_exceeded',
        message: `${plural(calls.length, 'call')}, more than max_calls ${cfg.max_calls}`,
      });
    }
    // Loop detection: identical name and arguments more than max_repeats times.
    if (cfg.max_repeats !== undefined) {
      const perName = new Map<string, number>();
      for (const call of calls) perName.set(call.name, (perName.get(call.name) ?? 0) + 1);
      const counts = new Map<string, { tool: string; n: number }>();
      for (const call of calls) {
        // A tool called at most max_repeats times cannot repeat too often: skip its arguments.
        if (perName.get(call.name)! <= cfg.max_repeats) continue;
        const key = call.name + '\u0000' + argsKey(call);
        const entry = counts.get(key);
        if (entry) entry.n++;
        else counts.set(key, { tool: call.name, n: 1 });
      }
      for (const { tool, n } of counts.values()) {
        if (n > cfg.max_repeats) {
          budgetPass = false;
          errors.push({
            code: 'repeated_call',
            tool,
            message: `${tool} was called ${n} times with identical arguments (max_repeats ${cfg.max_repeats})`,
          });
        }
      }
    }
    // 4. argument rules on each constrained tool's first call; whether all held is kept for
    // per_tool (the checks are pure, so the first call need not be checked again).
    let checks = 0;
    let passedChecks = 0;
    const firstArgsHold: boolean[] = new Array(constrained.length);
    for (let t = 0; t < constrained.length; t++) {
      const { tool, slot, fields } = constrained[t]!;
      const first = byTool[slot]?.[0];
      if (!first) continue;
      let hold = true;
      for (const field of fields) {
        checks++;
        const failure = checkField(first.args, field, redact);
        if (failure === undefined) passedChecks++;
        else {
          hold = false;
          errors.push({
            code: 'arg_mismatch',
            tool,
            field: field.path,
            message: `${tool}.${field.path} ${failure}`,
          });
        }
      }
      firstArgsHold[t] = hold;
    }
    // 5. [before, after] pairs on first calls
    let orderPass = true;
    for (const { after, violation, b, a } of orderPairs) {
      if (byTool[a] !== undefined && byTool[b] !== undefined && firstIndex[a]! < firstIndex[b]!) {
        orderPass = false;
        errors.push({
          code: 'order_violation',
          tool: after,
          message: violation,
        });
      }
    }
    if (cfg.order !== undefined) {
      const names = namesOf(calls);
      if (!orderHolds(cfg.order, names, expectedTools)) {
        orderPass = false;
        errors.push({
          code: 'order_violation',
          message: `calls [${listPreview(names)}${orderMismatch}`,
        });
      }
    }

    // 6. components and score
    const toolSelectionPass = !forbiddenCalled && !missingTool;
    const argAccuracy = checks === 0 ? 1 : passedChecks / checks;
    const weighted =
      weights.tool_selection * (toolSelectionPass ? 1 : 0) +
      weights.arguments * argAccuracy +
      weights.order * (orderPass ? 1 : 0) +
      weights.call_budget * (budgetPass ? 1 : 0);
    const score = Math.min(1, Math.max(0, roundHalfEven(weighted, 4)));
    const passed = score >= passThreshold && errors.length === 0;

    let precision: number | null = null;
    let recall: number | null = null;
    if (cfg.expected_tools) {
      let overlap = 0;
      for (const { slot, n } of expectedCounts) overlap += Math.min(n, byTool[slot]?.length ?? 0);
      precision = calls.length === 0 ? 0 : roundHalfEven(overlap / calls.length, 4);
      recall = roundHalfEven(overlap / expectedTools.length, 4);
    }

    const perTool: Record<string, unknown> = {};
    for (const { tool, slot, fields, constrainedAt } of uniqueExpected) {
      const list = byTool[slot] ?? NO_CALLS;
      // The first call was checked in step 4 when the tool is constrained.
      const firstCorrect =
        list.length > 0 &&
        (constrainedAt >= 0
          ? list[0]!.status === 'ok' && firstArgsHold[constrainedAt]!
          : isCorrect(list[0]!, fields));
      let clean = 0;
      let finalSuccess = false;
      for (let i = 0; i < list.length; i++) {
        const c = list[i]!;
        if (c.status !== 'ok') continue;
        clean++;
        if (!finalSuccess && (i === 0 ? firstCorrect : isCorrect(c, fields))) finalSuccess = true;
      }
      perTool[tool] = {
        calls: list.length,
        clean,
        first_call_correct: firstCorrect,
        final_success: finalSuccess,
        retries: Math.max(0, list.length - 1),
      };
    }

    return {
      scorer: name,
      kind: TRAJECTORY_KIND,
      passed,
      score,
      label: passed ? 'pass' : 'fail',
      reason: errors.length > 0 ? reasonOf(errors) : passed ? null : `score ${score} < ${passThreshold}`,
      digest,
      detail: {
        score,
        passed,
        tool_selection_pass: toolSelectionPass,
        arg_accuracy: roundHalfEven(argAccuracy, 4),
        order_pass: orderPass,
        call_budget_pass: budgetPass,
        errors,
        calls: calls.length,
        precision,
        recall,
        per_tool: perTool,
      },
    };
  };

  const scorer: SyncScorer = {
    name,
    kind: TRAJECTORY_KIND,
    digest,
    async: false,
    ...(cfg.sampling ? { sampling: { ratio: cfg.sampling.ratio } } : {}),
    config,
    ...(cfg.risk !== undefined || cfg.intent !== undefined
      ? {
          tags: {
            ...(cfg.risk ? { risk: cfg.risk } : {}),
            ...(cfg.intent !== undefined ? { intent: cfg.intent } : {}),
          },
        }
      : {}),
    score(run: AgentRun, context?: ScoreContext): ScorerResult {
      try {
        return evaluate(run, context);
      } catch (e) {
        return errorResult({ name, kind: TRAJECTORY_KIND, digest }, e);
      }
    },
  };
  // Arguments of constrained tools' calls; every call's with max_repeats (identical calls).
  declareArgumentsRead(scorer, cfg.max_repeats !== undefined ? 'all' : new Set(Object.keys(argConstraints)));
  limitsByScorer.set(scorer, {
    forbidden: new Set(forbiddenTools),
    expected: new Set(expectedTools),
    ...(cfg.max_calls !== undefined ? { maxCalls: cfg.max_calls } : {}),
    ...(cfg.max_repeats !== undefined ? { maxRepeats: cfg.max_repeats } : {}),
    argRules: compiled,
  });
  return scorer;
}

const NO_FIELDS: CompiledField[] = [];
const NO_CALLS: ToolExecution[] = [];

function isCorrect(c: ToolExecution, fields: readonly CompiledField[]): boolean {
  if (c.status !== 'ok') return false;
  for (const f of fields) if (checkField(c.args, f, true) !== undefined) return false;
  return true;
}

function namesOf(calls: readonly ToolExecution[]): string[] {
  const names: string[] = new Array(calls.length);
  for (let i = 0; i < calls.length; i++) names[i] = calls[i]!.name;
  return names;
}

/**
 * The run's calls (`self`), or the run's then each nested run's, depth-first pre-order
 * (`members`). May be `run.calls` itself: callers only read it.
 */
export function collectCalls(run: AgentRun, scope: Scope): readonly ToolExecution[] {
  if (scope === 'self') return run.calls;
  // A run without nested runs needs no copy (a malformed one takes the loop and its errors).
  if (Array.isArray(run.calls) && run.children.length === 0) return run.calls;
  const out: ToolExecution[] = [];
  const stack: AgentRun[] = [run];
  while (stack.length > 0) {
    const r = stack.pop()!;
    for (const c of r.calls) out.push(c);
    for (let i = r.children.length - 1; i >= 0; i--) stack.push(r.children[i]!);
  }
  return out;
}

function orderHolds(order: TrajectoryOrder, names: readonly string[], expected: readonly string[]): boolean {
  if (order === 'exact') return names.length === expected.length && names.every((n, i) => n === expected[i]);
  if (order === 'in_order') {
    let j = 0;
    for (let i = 0; i < names.length && j < expected.length; i++) if (names[i] === expected[j]) j++;
    return j === expected.length;
  }
  const called = countNames(names);
  for (const [tool, n] of countNames(expected)) if ((called.get(tool) ?? 0) < n) return false;
  return true;
}

function countNames(names: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
  return counts;
}

function argsKey(call: ToolExecution): string {
  if (call.args !== undefined) return canonicalArgs(call.args);
  return call.argsRaw !== undefined ? 'raw:' + call.argsRaw : 'none';
}

const REASON_ERRORS = 10;

/** The first errors' messages; `detail.errors` keeps them all. */
function reasonOf(errors: readonly TrajectoryError[]): string {
  let reason = errors[0]!.message;
  const shown = Math.min(errors.length, REASON_ERRORS);
  for (let i = 1; i < shown; i++) reason += '; ' + errors[i]!.message;
  if (errors.length > REASON_ERRORS) reason += `; … (${errors.length - REASON_ERRORS} more errors)`;
  return reason;
}

const LIST_PREVIEW = 20;

/** Names joined for a message, bounded for runs with thousands of calls. */
export function listPreview(names: readonly string[]): string {
  if (names.length <= LIST_PREVIEW) return names.join(', ');
  return `${names.slice(0, LIST_PREVIEW).join(', ')}, … (${names.length - LIST_PREVIEW} more)`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function unwrapFloats(value: unknown): unknown {
  if (value instanceof PyFloat) return value.value;
  if (Array.isArray(value)) return value.map(unwrapFloats);
  if (isRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = unwrapFloats(v);
    return out;
  }
  return value;
}

/** 10 ** 0 … 10 ** 15, each exact. */
const POWERS_OF_TEN = Array.from({ length: 16 }, (_, i) => 10 ** i);

/**
 * Python's `round(x, digits)`: the nearest value with `digits` decimals, ties (exact in
 * binary) to even, so scores equal the seed evaluator's.
 */
export function roundHalfEven(x: number, digits: number): number {
  if (!Number.isFinite(x)) return x;
  const negative = x < 0;
  // Fast path, far from a tie: the scaled value's rounding error (< 1e-6 for these magnitudes)
  // cannot move it across a half, and k / 10**digits is the double nearest to the decimal
  // (division is correctly rounded), which is what the exact path returns.
  if (digits >= 0 && digits <= 15 && Number.isInteger(digits)) {
    // 0 and 1 are most scores and ratios; the path below returns them too (-0 as 0).
    if (x === 0 || x === 1) return x === 0 ? 0 : 1;
    const scale = POWERS_OF_TEN[digits]!;
    const scaled = Math.abs(x) * scale;
    if (scaled < 1e9) {
      const floor = Math.floor(scaled);
      const fraction = scaled - floor;
      if (Math.abs(fraction - 0.5) > 1e-6) {
        const k = fraction < 0.5 ? floor : floor + 1;
        return (negative ? -k : k) / scale;
      }
    }
  }
  // toFixed(100) is exact for every double ≥ 2**-48, far below any tie that matters here.
  const exact = Math.abs(x).toFixed(100);
  const dot = exact.indexOf('.');
  const kept = exact.slice(0, dot + 1 + digits);
  const rest = exact.slice(dot + 1 + digits);
  let up: boolean;
  if (rest[0]! > '5') up = true;
  else if (rest[0]! < '5') up = false;
  else if (/[1-9]/.test(rest.slice(1))) up = true;
  else up = Number(kept[kept.length - 1]) % 2 === 1;
  let result = Number(kept);
  if (up) result = Number((result + 10 ** -digits).toFixed(digits));
  return negative ? -result : result;
}
