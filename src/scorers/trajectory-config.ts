import { z } from 'zod';
import { configDigest } from '../util/digest.js';
import { PyFloat } from '../util/python-json.js';
import { type ArgRule, isRecord, RULE_KEYS } from './arg-rules.js';
import { checkRegexSafety } from './safe-regex.js';

/** The `trajectory` scorer's options (code) and configuration (policy files), checked and resolved. */

export const TRAJECTORY_KIND = 'trajectory';

export type Scope = 'self' | 'members';
export type TrajectoryOrder = 'exact' | 'in_order' | 'any_order';
export type Risk = 'low' | 'medium' | 'high' | 'critical';

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

/** A trajectory scorer's options, checked and with their defaults: what its checks and its identity use. */
export interface ResolvedTrajectory {
  name: string;
  expectedTools: string[];
  forbiddenTools: string[];
  maxCalls: number | undefined;
  maxRepeats: number | undefined;
  argConstraints: Record<string, Record<string, ArgRule>>;
  expectedOrder: Array<[string, string]>;
  weights: { tool_selection: number; arguments: number; order: number; call_budget: number };
  passThreshold: number;
  scope: Scope;
  order: TrajectoryOrder | undefined;
  risk: Risk | undefined;
  intent: string | undefined;
  sampling: { ratio: number } | undefined;
  /** Canonical config, snake_case as in a policy file. */
  config: Record<string, unknown>;
  digest: string;
}

/**
 * Checks code-defined options with the policy file's schema (the same errors, unsafe patterns
 * above all) and resolves their defaults. Throws on invalid options.
 */
export function resolveTrajectory(options: TrajectoryOptions): ResolvedTrajectory {
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

  return {
    name,
    expectedTools,
    forbiddenTools,
    maxCalls: cfg.max_calls,
    maxRepeats: cfg.max_repeats,
    argConstraints,
    expectedOrder,
    weights,
    passThreshold,
    scope,
    order: cfg.order,
    risk: cfg.risk,
    intent: cfg.intent,
    sampling: cfg.sampling,
    config,
    digest,
  };
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
