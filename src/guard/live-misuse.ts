import { createHash } from 'node:crypto';
import { cappedName } from '../emission/capped-name.js';
import { matchRules, type RunIdentity } from '../evaluation/match-rules.js';
import { canonicalArgs } from '../reconstruction/canonical-args.js';
import type { CompiledField } from '../scorers/arg-rules.js';
import { trajectoryLimits } from '../scorers/trajectory.js';
import type { MisuseEvent, MisuseKind, Policy, Rule } from '../types.js';

/** The limits of one rule's trajectory scorers, merged: what can be checked while a run is live. */
export interface LiveLimits {
  rule: string;
  forbidden: ReadonlySet<string>;
  /** Empty when the rule expects no particular tools: nothing is then "unexpected". */
  expected: ReadonlySet<string>;
  maxCalls?: number;
  maxRepeats?: number;
  /** `arg_constraints` by tool (the guard checks them on every call; the live checks do not). */
  argRules: ReadonlyMap<string, readonly CompiledField[]>;
  /** The same names as arrays, built once for the events' detail. */
  forbiddenList: readonly string[];
  expectedList: readonly string[];
}

/** Live counts of one open agent span that some rule's limits apply to. */
export interface LiveAgent {
  agent: string;
  spanId: string;
  traceId: string;
  limits: LiveLimits[];
  calls: number;
  /**
   * Identical calls so far, by tool and canonical arguments (made on the first call a rule
   * limits repeats of); long arguments by digest. At most `MAX_REPEAT_KEYS` calls:
   * a session that never ends would otherwise keep every call's arguments.
   */
  repeats: Map<string, number> | undefined;
  /**
   * Tool spans started and not yet ended, by span id, when some rule limits calls: parallel
   * calls count against `max_calls` before they end. At most `MAX_IN_FLIGHT`.
   */
  inFlight: Set<string> | undefined;
}

/**
 * Distinct calls one live agent remembers for `max_repeats`. A loop repeats a call long before
 * this many others; past it, calls seen before still count, new ones are not remembered (the
 * verdict at the run's end counts every repeat of the rebuilt run).
 */
const MAX_REPEAT_KEYS = 10_000;
/** Open tool spans one live agent remembers; past it, calls count when they end. */
const MAX_IN_FLIGHT = 1000;
/** Keys longer than this are remembered by digest (a key weighs what the arguments weigh). */
const MAX_KEY_LENGTH = 256;

/**
 * Reports tool misuse while the run is still going: forbidden and unexpected tools when the
 * tool span starts (the name is known then), call budgets and repeated identical calls when
 * the offending span ends (its arguments are final then). The verdict at the end of the run
 * remains the reference; this is the early warning.
 */
export class LiveMisuseMonitor {
  /** False when no rule of the policy has a trajectory scorer: the processor then skips all live work. */
  readonly enabled: boolean;
  private readonly _limitsByRule = new Map<string, LiveLimits>();

  constructor(
    private readonly _policy: Policy,
    private readonly _report: (event: MisuseEvent) => void,
  ) {
    for (const rule of _policy.rules) {
      const merged = liveLimitsOf(rule);
      if (merged) this._limitsByRule.set(rule.name, merged);
    }
    this.enabled = this._limitsByRule.size > 0;
  }

  /** Live state for an agent span, or undefined when no rule with limits matches its identity. */
  watch(identity: RunIdentity, traceId: string, spanId: string): LiveAgent | undefined {
    if (!this.enabled) return undefined;
    const limits: LiveLimits[] = [];
    for (const rule of matchRules(identity, this._policy)) {
      const ruleLimits = this._limitsByRule.get(rule.name);
      if (ruleLimits) limits.push(ruleLimits);
    }
    if (limits.length === 0) return undefined;
    return {
      agent: identity.agent,
      spanId,
      traceId,
      limits,
      calls: 0,
      repeats: undefined,
      inFlight: limits.some((l) => l.maxCalls !== undefined) ? new Set() : undefined,
    };
  }

  /** A tool span started under `agent` (its own run, or a member of it). */
  toolStarted(agent: LiveAgent, tool: string, toolSpanId: string): void {
    if (agent.inFlight !== undefined && agent.inFlight.size < MAX_IN_FLIGHT) agent.inFlight.add(toolSpanId);
    for (const limits of agent.limits) {
      if (limits.forbidden.has(tool)) {
        this._emit('forbidden', agent, limits, tool, toolSpanId, { forbidden_tools: limits.forbiddenList });
      } else if (limits.expected.size > 0 && !limits.expected.has(tool)) {
        this._emit('unexpected', agent, limits, tool, toolSpanId, { expected_tools: limits.expectedList });
      }
    }
  }

  /** A tool span ended; `args` is whatever the span carried (JSON text or a value). */
  toolEnded(agent: LiveAgent, tool: string, args: unknown, toolSpanId: string): void {
    agent.calls++;
    agent.inFlight?.delete(toolSpanId);
    let repeatKey: string | undefined;
    let repeats = 0;
    for (const limits of agent.limits) {
      if (limits.maxCalls !== undefined && agent.calls > limits.maxCalls) {
        this._emit('call_budget', agent, limits, tool, toolSpanId, {
          calls: agent.calls,
          max_calls: limits.maxCalls,
        });
      }
      if (limits.maxRepeats !== undefined) {
        if (repeatKey === undefined) {
          repeatKey = callKeyOf(tool, args);
          repeats = rememberCall(agent, repeatKey);
        }
        if (repeats > limits.maxRepeats) {
          this._emit('repeated_call', agent, limits, tool, toolSpanId, {
            count: repeats,
            max_repeats: limits.maxRepeats,
          });
        }
      }
    }
  }

  private _emit(
    kind: MisuseKind,
    agent: LiveAgent,
    limits: LiveLimits,
    tool: string,
    spanId: string,
    detail: Record<string, unknown>,
  ): void {
    this._report({
      kind,
      tool,
      agent: agent.agent,
      rule: limits.rule,
      trace_id: agent.traceId,
      span_id: spanId,
      time: Date.now(),
      detail,
    });
  }
}

/** The merged limits of a rule's trajectory scorers, or undefined when it has none. */
export function liveLimitsOf(rule: Rule): LiveLimits | undefined {
  return mergeLimits(
    rule.name,
    rule.scorers.map((scorer) => trajectoryLimits(scorer)),
  );
}

/**
 * Counts one more call of this key (`callKeyOf`) and returns how many there have been. Keys
 * past `MAX_REPEAT_KEYS` distinct ones are not remembered (their calls count as firsts).
 */
export function rememberCall(calls: { repeats: Map<string, number> | undefined }, key: string): number {
  calls.repeats ??= new Map();
  const seen = calls.repeats.get(key);
  const repeats = (seen ?? 0) + 1;
  if (seen !== undefined || calls.repeats.size < MAX_REPEAT_KEYS) calls.repeats.set(key, repeats);
  return repeats;
}

/** Calls with the same tool and the same arguments made so far by a live agent (as far as it remembers). */
export function repeatsOf(
  agent: { repeats: Map<string, number> | undefined },
  tool: string,
  args: unknown,
): number {
  return agent.repeats?.get(callKeyOf(tool, args)) ?? 0;
}

/** Calls of a live agent so far: ended ones, and those still running (when it counts them). */
export function callsOf(agent: LiveAgent, exceptSpanId?: string): number {
  const inFlight = agent.inFlight;
  if (inFlight === undefined || inFlight.size === 0) return agent.calls;
  return agent.calls + inFlight.size - (exceptSpanId !== undefined && inFlight.has(exceptSpanId) ? 1 : 0);
}

function mergeLimits(rule: string, all: Array<ReturnType<typeof trajectoryLimits>>): LiveLimits | undefined {
  let merged: LiveLimits | undefined;
  for (const limits of all) {
    if (!limits) continue;
    const forbidden = new Set<string>(merged?.forbidden);
    const expected = new Set<string>(merged?.expected);
    for (const name of limits.forbidden) forbidden.add(name);
    for (const name of limits.expected) expected.add(name);
    const argRules = new Map<string, readonly CompiledField[]>(merged?.argRules);
    for (const [tool, fields] of limits.argRules)
      argRules.set(tool, [...(argRules.get(tool) ?? []), ...fields]);
    merged = {
      rule,
      forbidden,
      expected,
      argRules,
      forbiddenList: [...forbidden],
      expectedList: [...expected],
      maxCalls: minDefined(merged?.maxCalls, limits.maxCalls),
      maxRepeats: minDefined(merged?.maxRepeats, limits.maxRepeats),
    };
  }
  return merged;
}

function minDefined(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}

/** The key of a call among an agent's calls (arguments as the span or the caller gave them). */
export function callKeyOf(tool: string, args: unknown): string {
  return repeatKeyOf(tool, canonicalArgs(parseArgs(args)));
}

/**
 * The key of a call among an agent's calls: tool and canonical arguments, or for long
 * arguments their SHA-256 (equal arguments always match; a model cannot make different ones
 * collide and raise a false alarm).
 */
function repeatKeyOf(tool: string, args: string): string {
  if (tool.length + args.length <= MAX_KEY_LENGTH) return tool + '\u0000' + args;
  return `${cappedName(tool)}\u0000#${createHash('sha256').update(args).digest('base64')}`;
}

/** Arguments usually arrive as JSON text; compare them as values so key order does not matter. */
export function parseArgs(args: unknown): unknown {
  if (typeof args !== 'string') return args;
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}
