import { checkField } from '../scorers/arg-rules.js';
import type { GuardCheck, ToolCall, ToolCallDecision } from '../types.js';
import { listPreview } from '../util/list-preview.js';
import { CHECK_BIT, type GuardRule } from './guard-rules.js';
import { parseArgs } from './live-misuse.js';

/** What the guard knows of the run before the call: its calls so far (not counting this one). */
export interface CallsSoFar {
  /** Tool calls the run has made so far, including calls still running where they are known. */
  readonly calls: number;
  /** Of those, the calls of this tool with these arguments (compared as canonical JSON). */
  repeatsOf(tool: string, args: unknown): number;
}

/** A run that has made no call yet. */
export const NO_CALLS_YET: CallsSoFar = { calls: 0, repeatsOf: () => 0 };

/** Shared, frozen: an allow allocates nothing. */
export const ALLOW: ToolCallDecision = Object.freeze({
  allowed: true,
  decision: 'allow',
  enforced: false,
  reasons: Object.freeze([]) as readonly string[],
});

/** Reasons one decision carries at most (a call can break many argument rules). */
const MAX_REASONS = 10;

interface Denial {
  rule: GuardRule;
  kind: GuardCheck;
  reasons: string[];
  enforced: boolean;
}

/**
 * Decides one tool call before it runs, against the rules that match its run and the run's
 * calls so far. Pure: no clock, no I/O, no state of its own; the same inputs give the same
 * decision in process and in the gateway.
 *
 * Each rule runs its checks (all of them for a rule without `guard`) in the order forbidden,
 * unexpected, call_budget, repeated_call, arguments. The decision is `deny` when any rule
 * denies; it is enforced (`allowed: false`) when a denying rule's guard mode is `enforce`.
 * `rule` and `kind` name the first enforcing denial, else the first denial; `reasons` are
 * the enforcing rules' reasons when the call is refused, else every denying rule's.
 */
export function decideToolCall(
  rules: readonly GuardRule[],
  soFar: CallsSoFar,
  call: ToolCall,
  redact = true,
): ToolCallDecision {
  let denials: Denial[] | undefined;
  const args: ParsedArgs = { value: NOT_PARSED, raw: call.arguments };
  for (const rule of rules) {
    const denial = judgeRule(rule, soFar, call.tool, args, redact);
    if (denial === undefined) continue;
    if (denials === undefined) denials = [denial];
    else denials.push(denial);
  }
  if (denials === undefined) return ALLOW;
  return combine(denials);
}

/** The call's arguments, parsed once whichever rule first needs them. */
interface ParsedArgs {
  value: unknown;
  raw: unknown;
}

/** One rule's checks on one call: its denial, or undefined when every check it runs holds. */
function judgeRule(
  rule: GuardRule,
  soFar: CallsSoFar,
  tool: string,
  args: ParsedArgs,
  redact: boolean,
): Denial | undefined {
  const limits = rule.limits;
  const checks = rule.checks;
  const name = rule.name;
  let denial: Denial | undefined;
  // As the live checks: a forbidden tool is not also reported as unexpected.
  if (checks & CHECK_BIT.forbidden && limits.forbidden.has(tool)) {
    denial = add(denial, rule, 'forbidden', `tool ${tool} is forbidden (rule ${name})`);
  } else if (checks & CHECK_BIT.unexpected && limits.expected.size > 0 && !limits.expected.has(tool)) {
    const expected = listPreview(limits.expectedList);
    denial = add(
      denial,
      rule,
      'unexpected',
      `tool ${tool} is not one of the expected tools [${expected}] (rule ${name})`,
    );
  }
  if (checks & CHECK_BIT.call_budget && limits.maxCalls !== undefined && soFar.calls >= limits.maxCalls) {
    denial = add(
      denial,
      rule,
      'call_budget',
      `the run has made ${soFar.calls} tool calls, max_calls is ${limits.maxCalls} (rule ${name})`,
    );
  }
  if (checks & CHECK_BIT.repeated_call && limits.maxRepeats !== undefined) {
    const repeats = soFar.repeatsOf(tool, args.raw);
    if (repeats >= limits.maxRepeats) {
      denial = add(
        denial,
        rule,
        'repeated_call',
        `tool ${tool} was already called ${repeats} times with these arguments, max_repeats is ${limits.maxRepeats} (rule ${name})`,
      );
    }
  }
  if (checks & CHECK_BIT.arguments) {
    const fields = limits.argRules.get(tool);
    if (fields !== undefined) {
      if (args.value === NOT_PARSED) args.value = parseArgs(args.raw);
      for (const field of fields) {
        const failure = checkField(args.value, field, redact);
        if (failure !== undefined)
          denial = add(denial, rule, 'arguments', `${tool}.${field.path} ${failure} (rule ${name})`);
      }
    }
  }
  return denial;
}

function add(denial: Denial | undefined, rule: GuardRule, kind: GuardCheck, reason: string): Denial {
  if (denial === undefined)
    return { rule, kind, reasons: [reason], enforced: rule.guard?.mode === 'enforce' };
  if (denial.reasons.length < MAX_REASONS) denial.reasons.push(reason);
  return denial;
}

function combine(denials: readonly Denial[]): ToolCallDecision {
  let primary = denials[0]!;
  for (const d of denials) {
    if (d.enforced) {
      primary = d;
      break;
    }
  }
  const enforced = primary.enforced;
  const reasons: string[] = [];
  for (const d of denials) {
    if (enforced && !d.enforced) continue;
    for (const r of d.reasons) if (reasons.length < MAX_REASONS) reasons.push(r);
  }
  return {
    allowed: !enforced,
    decision: 'deny',
    enforced,
    reasons,
    rule: primary.rule.name,
    kind: primary.kind,
  };
}

const NOT_PARSED: unique symbol = Symbol('not parsed');
