import { canonicalArgs } from '../reconstruction/canonical-args.js';
import type { AgentRun, ToolExecution } from '../types.js';
import { listPreview } from '../util/list-preview.js';
import { roundHalfEven } from '../util/round-half-even.js';
import { type CompiledField, checkField, compileField } from './arg-rules.js';
import type { ResolvedTrajectory, Scope, TrajectoryOrder } from './trajectory-config.js';

/**
 * The checks of a `trajectory` scorer, one function each, over a run's calls tallied once per
 * tool (`tallyCalls`). Each check adds its errors and returns its component of the score;
 * `scoreTrajectory` runs them in order and weighs the components.
 */

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

/**
 * What the checks need of a scorer's options, compiled once: every tool a check names gets a
 * slot, so a run is tallied in one pass over its calls and only those tools' calls are kept.
 */
export interface TrajectoryPlan {
  options: ResolvedTrajectory;
  slotOf: Map<string, number>;
  constrained: CompiledTool[];
  expected: Array<{
    tool: string;
    missing: string;
    slot: number;
    fields: CompiledField[];
    constrainedAt: number;
  }>;
  forbidden: Array<{ tool: string; slot: number }>;
  expectedCounts: Array<{ slot: number; n: number }>;
  orderPairs: Array<{ after: string; violation: string; b: number; a: number }>;
  /** The tail of the message for calls out of `order` (after the calls' names). */
  orderMismatch: string;
}

export function planTrajectory(options: ResolvedTrajectory): TrajectoryPlan {
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
  for (const [tool, fields] of Object.entries(options.argConstraints)) {
    const list = Object.entries(fields).map(([path, rule]) => compileField(path, rule));
    compiled.set(tool, list);
    constrained.push({ tool, slot: slot(tool), fields: list });
  }
  const expectedTools = options.expectedTools;
  return {
    options,
    slotOf,
    constrained,
    expected: [...new Set(expectedTools)].map((tool) => ({
      tool,
      missing: `expected tool ${tool} was not called`,
      slot: slot(tool),
      fields: compiled.get(tool) ?? NO_FIELDS,
      constrainedAt: constrained.findIndex((c) => c.tool === tool),
    })),
    forbidden: [...new Set(options.forbiddenTools)].map((tool) => ({ tool, slot: slot(tool) })),
    expectedCounts: [...countNames(expectedTools)].map(([tool, n]) => ({ slot: slot(tool), n })),
    orderPairs: options.expectedOrder.map(([before, after]) => ({
      after,
      violation: `${after} was first called before ${before}`,
      b: slot(before),
      a: slot(after),
    })),
    orderMismatch:
      options.order === undefined
        ? ''
        : `] do not match expected_tools [${listPreview(expectedTools)}] ${{ exact: 'exactly', in_order: 'in order', any_order: 'all present' }[options.order]}`,
  };
}

/** A run's calls, and per slot the tool's calls in order and the index of its first call. */
export interface CallTally {
  calls: readonly ToolExecution[];
  byTool: Array<ToolExecution[] | undefined>;
  firstIndex: number[];
}

export function tallyCalls(plan: TrajectoryPlan, run: AgentRun): CallTally {
  const calls = collectCalls(run, plan.options.scope);
  const slots = plan.slotOf.size;
  const byTool: Array<ToolExecution[] | undefined> = new Array(slots);
  const firstIndex: number[] = new Array(slots);
  let i = 0;
  for (const call of calls) {
    const at = plan.slotOf.get(call.name);
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
  return { calls, byTool, firstIndex };
}

/** Expected tools that were not called. Returns whether none is missing. */
export function checkMissingTools(
  plan: TrajectoryPlan,
  tally: CallTally,
  errors: TrajectoryError[],
): boolean {
  let none = true;
  for (const { tool, slot, missing } of plan.expected) {
    if (tally.byTool[slot] === undefined) {
      none = false;
      errors.push({ code: 'missing_tool', tool, message: missing });
    }
  }
  return none;
}

/** Forbidden tools, executed in any status or only requested. Returns whether none was called. */
export function checkForbiddenTools(
  plan: TrajectoryPlan,
  tally: CallTally,
  errors: TrajectoryError[],
): boolean {
  let none = true;
  for (const { tool, slot } of plan.forbidden) {
    const list = tally.byTool[slot];
    if (!list) continue;
    none = false;
    let executed = 0;
    for (const c of list) if (!c.requestOnly) executed++;
    const message =
      executed > 0
        ? `forbidden tool ${tool} was executed (${plural(executed, 'call')})`
        : `forbidden tool ${tool} was requested but not executed (${plural(list.length, 'request')})`;
    errors.push({ code: 'forbidden_tool', tool, message });
  }
  return none;
}

/** At most `max_calls` calls. Returns whether the budget held. */
export function checkCallBudget(plan: TrajectoryPlan, tally: CallTally, errors: TrajectoryError[]): boolean {
  const max = plan.options.maxCalls;
  if (max === undefined || tally.calls.length <= max) return true;
  errors.push({
    code: 'call_budget_exceeded',
    message: `${plural(tally.calls.length, 'call')}, more than max_calls ${max}`,
  });
  return false;
}

/** Loop detection: identical name and arguments more than `max_repeats` times. Returns whether none repeated. */
export function checkRepeatedCalls(
  plan: TrajectoryPlan,
  tally: CallTally,
  errors: TrajectoryError[],
): boolean {
  const max = plan.options.maxRepeats;
  if (max === undefined) return true;
  const { calls } = tally;
  const perName = new Map<string, number>();
  for (const call of calls) perName.set(call.name, (perName.get(call.name) ?? 0) + 1);
  const counts = new Map<string, { tool: string; n: number }>();
  for (const call of calls) {
    // A tool called at most max_repeats times cannot repeat too often: skip its arguments.
    if (perName.get(call.name)! <= max) continue;
    const key = call.name + '\u0000' + argsKey(call);
    const entry = counts.get(key);
    if (entry) entry.n++;
    else counts.set(key, { tool: call.name, n: 1 });
  }
  let none = true;
  for (const { tool, n } of counts.values()) {
    if (n > max) {
      none = false;
      errors.push({
        code: 'repeated_call',
        tool,
        message: `${tool} was called ${n} times with identical arguments (max_repeats ${max})`,
      });
    }
  }
  return none;
}

/** The argument rules' outcome: the share of field checks that held, and per constrained tool whether all held. */
export interface ArgumentOutcome {
  accuracy: number;
  /** By index in `plan.constrained`; undefined for a tool not called. */
  firstArgsHold: boolean[];
}

/**
 * Argument rules on each constrained tool's first call. Whether all held is kept for
 * `perToolReport` (the checks are pure, so the first call need not be checked again).
 */
export function checkArguments(
  plan: TrajectoryPlan,
  tally: CallTally,
  redact: boolean,
  errors: TrajectoryError[],
): ArgumentOutcome {
  let checks = 0;
  let passed = 0;
  const firstArgsHold: boolean[] = new Array(plan.constrained.length);
  for (let t = 0; t < plan.constrained.length; t++) {
    const { tool, slot, fields } = plan.constrained[t]!;
    const first = tally.byTool[slot]?.[0];
    if (!first) continue;
    let hold = true;
    for (const field of fields) {
      checks++;
      const failure = checkField(first.args, field, redact);
      if (failure === undefined) passed++;
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
  return { accuracy: checks === 0 ? 1 : passed / checks, firstArgsHold };
}

/** `[before, after]` pairs on first calls, then the `order` of `expected_tools`. Returns whether both held. */
export function checkOrder(plan: TrajectoryPlan, tally: CallTally, errors: TrajectoryError[]): boolean {
  let holds = true;
  const { byTool, firstIndex } = tally;
  for (const { after, violation, b, a } of plan.orderPairs) {
    if (byTool[a] !== undefined && byTool[b] !== undefined && firstIndex[a]! < firstIndex[b]!) {
      holds = false;
      errors.push({ code: 'order_violation', tool: after, message: violation });
    }
  }
  const order = plan.options.order;
  if (order !== undefined) {
    const names = namesOf(tally.calls);
    if (!orderHolds(order, names, plan.options.expectedTools)) {
      holds = false;
      errors.push({ code: 'order_violation', message: `calls [${listPreview(names)}${plan.orderMismatch}` });
    }
  }
  return holds;
}

/** Precision and recall of the calls against `expected_tools` (duplicates count), or null without it. */
export function precisionRecall(
  plan: TrajectoryPlan,
  tally: CallTally,
): { precision: number | null; recall: number | null } {
  // `expected_tools` is never an empty list: without it, there is nothing to measure.
  if (plan.options.expectedTools.length === 0) return { precision: null, recall: null };
  let overlap = 0;
  for (const { slot, n } of plan.expectedCounts) overlap += Math.min(n, tally.byTool[slot]?.length ?? 0);
  const calls = tally.calls.length;
  return {
    precision: calls === 0 ? 0 : roundHalfEven(overlap / calls, 4),
    recall: roundHalfEven(overlap / plan.options.expectedTools.length, 4),
  };
}

/** Per expected tool: calls, clean calls, whether the first was correct, whether one succeeded, retries. */
export function perToolReport(
  plan: TrajectoryPlan,
  tally: CallTally,
  args: ArgumentOutcome,
): Record<string, unknown> {
  const perTool: Record<string, unknown> = {};
  for (const { tool, slot, fields, constrainedAt } of plan.expected) {
    const list = tally.byTool[slot] ?? NO_CALLS;
    // The first call was checked by `checkArguments` when the tool is constrained.
    const firstCorrect =
      list.length > 0 &&
      (constrainedAt >= 0
        ? list[0]!.status === 'ok' && args.firstArgsHold[constrainedAt]!
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
  return perTool;
}

const NO_CALLS: ToolExecution[] = [];
const NO_FIELDS: CompiledField[] = [];

/** Whether a call succeeded with arguments that hold every rule of `fields`. */
function isCorrect(c: ToolExecution, fields: readonly CompiledField[]): boolean {
  if (c.status !== 'ok') return false;
  for (const f of fields) if (checkField(c.args, f, true) !== undefined) return false;
  return true;
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

function namesOf(calls: readonly ToolExecution[]): string[] {
  const names: string[] = new Array(calls.length);
  for (let i = 0; i < calls.length; i++) names[i] = calls[i]!.name;
  return names;
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

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
