import { z } from 'zod';

/**
 * The policy file's keys other than scorer entries (docs/policy.md). Scorer
 * entries are validated one by one against their kind's schema, so that one bad entry does
 * not hide the problems of the others. Every object is strict: unknown keys are errors.
 * Numbers arrive as plain numbers (the parser unwraps `PyFloat` outside argument values).
 */

const ratio = z.number().min(0).max(1);

const matchSchema = z.strictObject({
  /** Glob on the agent name; omitted = any agent. */
  agent: z.string().min(1).optional(),
  /** Default true: only outermost agent runs. */
  root_only: z.boolean().default(true),
  attributes: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
});

/** Every check, in the order a guard runs them (and lists them, once each). */
export const GUARD_CHECKS = ['forbidden', 'unexpected', 'call_budget', 'repeated_call', 'arguments'] as const;

export const guardSchema = z.strictObject({
  /** Default `enforce`: the rule refuses what it denies. */
  mode: z.enum(['enforce', 'observe']).default('enforce'),
  /** Default all of them. */
  checks: z
    .array(z.enum(GUARD_CHECKS))
    .min(1, 'checks must not be empty (leave the guard out instead)')
    .default([...GUARD_CHECKS]),
});

const ruleSchema = z.strictObject({
  name: z.string().min(1),
  match: matchSchema.default({ root_only: true }),
  scorers: z.array(z.unknown()).min(1, 'a rule needs at least one scorer'),
  /** Default none: the rule's decisions never block. */
  guard: guardSchema.optional(),
});

const unit = z.number().min(0).max(1);

const gatesSchema = z.strictObject({
  /** Judged runs that passed, over judged runs; `rules`: a minimum per rule too. */
  pass_rate: z.strictObject({ min: unit, rules: z.record(z.string(), unit).optional() }).optional(),
  tool_selection_accuracy: z.strictObject({ min: unit }).optional(),
  argument_accuracy: z.strictObject({ min: unit }).optional(),
  forbidden_tool_calls: z.strictObject({ max: z.number().int().min(0) }).optional(),
  high_risk_pass_rate: z.strictObject({ min: unit }).optional(),
  avg_calls_vs_baseline: z.strictObject({ max_ratio: z.number().positive() }).optional(),
  regression_vs_baseline: z.strictObject({ max_drop: unit }).optional(),
});

/** The gate names a policy's `gates` takes, in the schema's order. */
export const GATE_NAMES: readonly string[] = Object.keys(gatesSchema.shape);

export const DEFAULT_JUDGE_BUDGET = {
  max_per_minute: 30,
  max_concurrent: 2,
  escalate_on: [] as Array<'failure' | 'error_span'>,
};

export const policySchema = z.strictObject({
  version: z.literal(1),
  /** Default ratio 1.0: every matching run is evaluated. */
  sampling: z.strictObject({ ratio }).default({ ratio: 1 }),
  /** Defaults: 30 judge calls per minute, 2 at a time, no escalation. */
  judge: z
    .strictObject({
      max_per_minute: z.number().int().min(0).default(DEFAULT_JUDGE_BUDGET.max_per_minute),
      max_concurrent: z.number().int().min(1).default(DEFAULT_JUDGE_BUDGET.max_concurrent),
      escalate_on: z.array(z.enum(['failure', 'error_span'])).default([]),
    })
    .default({ ...DEFAULT_JUDGE_BUDGET, escalate_on: [] }),
  /** Default true (privacy first): explanations, reports and judge prompts carry tool names and argument keys, not values. */
  redact: z.strictObject({ values: z.boolean().default(true) }).default({ values: true }),
  rules: z.array(ruleSchema).min(1, 'a policy needs at least one rule'),
  gates: gatesSchema.default({}),
});

export type PolicyFile = z.output<typeof policySchema>;
