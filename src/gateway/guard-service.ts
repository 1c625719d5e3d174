import { decideToolCall } from '../guard/decide-tool-call.js';
import { GuardRules } from '../guard/guard-rules.js';
import { RunCalls } from '../guard/run-calls.js';
import type { Policy, ToolCallDecision } from '../types.js';
import { type GuardRequest, parseGuardRequest } from './guard-request.js';
import type { PrometheusRegistry } from './prometheus-registry.js';

export interface GuardServiceOptions {
  policy: Policy;
  /** Runs (trace id + agent) whose calls are kept; past it the least recently asked is evicted. Default 10,000. */
  maxRuns?: number;
  /** A run not asked about for this long is forgotten. Default 900,000 ms (15 min). */
  runTtlMs?: number;
  registry: PrometheusRegistry;
  /** Clock. Default `Date.now`. */
  now?: () => number;
}

/** What `POST /v1/guard` answers, before any transport. */
export type GuardAnswer =
  | { kind: 'decided'; decision: ToolCallDecision }
  | { kind: 'invalid'; message: string };

/** A run's calls so far (the core's `RunCalls`) and when it was last asked about. */
interface KeptRun {
  calls: RunCalls;
  seen: number;
}

/**
 * The gateway's tool-call guard for agents in other languages, transport-free. It keeps each
 * run's calls from the guard requests themselves (keyed by trace id and agent), so budgets and
 * repeats hold across calls; the gateway never waits for the run's spans, which arrive after
 * the fact. Bounded in runs and calls per run, runs expire after a quiet TTL; every eviction
 * is counted by reason.
 */
export class GuardService {
  private readonly _runs = new Map<string, KeptRun>();
  private readonly _maxRuns: number;
  private readonly _ttl: number;
  private readonly _now: () => number;
  private readonly _rules: GuardRules;
  private readonly _evicted: (labels?: Record<string, string>, value?: number) => void;
  private readonly _answered: (labels?: Record<string, string>, value?: number) => void;

  constructor(_o: GuardServiceOptions) {
    this._maxRuns = _o.maxRuns ?? 10_000;
    this._ttl = _o.runTtlMs ?? 900_000;
    this._now = _o.now ?? Date.now;
    this._rules = new GuardRules(_o.policy);
    const r = _o.registry;
    this._evicted = r.counter(
      'toolwatch_gateway_guard_runs_evicted_total',
      'Guarded runs forgotten before their calls stopped, by reason (expired, capacity).',
    );
    this._answered = r.counter(
      'toolwatch_gateway_guard_requests_total',
      'Guard requests, by outcome (allow, deny, would_deny, invalid).',
    );
    r.gauge('toolwatch_gateway_guard_runs', 'Runs whose guarded calls are kept.', () => this._runs.size);
  }

  /** Runs kept now. */
  get runs(): number {
    return this._runs.size;
  }

  /** One request body (UTF-8 JSON). Never throws. */
  answer(body: string): GuardAnswer {
    const request = parseGuardRequest(body);
    if ('invalid' in request) {
      this._answered({ outcome: 'invalid' });
      return { kind: 'invalid', message: request.invalid };
    }
    try {
      return { kind: 'decided', decision: this._decide(request) };
    } catch (err) {
      // The decision is pure and total; if it ever fails, the client learns why instead of a 500.
      this._answered({ outcome: 'invalid' });
      return {
        kind: 'invalid',
        message: `cannot decide: ${err instanceof Error ? err.message : String(err)}`,
      };
    }
  }

  private _decide(request: GuardRequest): ToolCallDecision {
    const now = this._now();
    this._expire(now);
    const key = `${request.traceId}\u0000${request.agent}`;
    let run = this._runs.get(key);
    if (run === undefined) {
      run = { calls: new RunCalls(), seen: now };
      if (this._runs.size >= this._maxRuns) this._evictOldest();
    } else this._runs.delete(key);
    // Re-inserted: the map's order is least recently asked first.
    run.seen = now;
    this._runs.set(key, run);
    const call = { tool: request.tool, arguments: request.arguments };
    // Guard requests carry no span attributes; each (trace, agent) is judged as an outermost run.
    const rules = this._rules.rulesFor({ agent: request.agent, attributes: {}, nested: false });
    const decision = decideToolCall(rules, run.calls, call, this._rules.redact);
    // Refused calls are kept too: the verdict on the run's trace counts them in `max_calls` and
    // `max_repeats`, and the guard must not let through what the verdict then fails.
    run.calls.record(call.tool, call.arguments);
    this._answered({
      outcome: decision.decision === 'allow' ? 'allow' : decision.enforced ? 'deny' : 'would_deny',
    });
    return decision;
  }

  /** Oldest first: stop at the first run still fresh. */
  private _expire(now: number): void {
    for (const [key, run] of this._runs) {
      if (now - run.seen < this._ttl) return;
      this._runs.delete(key);
      this._evicted({ reason: 'expired' });
    }
  }

  private _evictOldest(): void {
    const oldest = this._runs.keys().next();
    if (oldest.done) return;
    this._runs.delete(oldest.value);
    this._evicted({ reason: 'capacity' });
  }
}

/** The decision as `POST /v1/guard` answers it: snake_case keys, absent fields left out. */
export function guardAnswerJson(decision: ToolCallDecision): string {
  return JSON.stringify({
    allowed: decision.allowed,
    decision: decision.decision,
    enforced: decision.enforced,
    reasons: decision.reasons,
    ...(decision.rule !== undefined ? { rule: decision.rule } : {}),
    ...(decision.kind !== undefined ? { kind: decision.kind } : {}),
  });
}
