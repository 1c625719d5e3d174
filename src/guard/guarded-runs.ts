import type { Policy, ToolCallDecision } from '../types.js';
import { decideToolCall } from './decide-tool-call.js';
import { GuardRules } from './guard-rules.js';
import { RunCalls } from './run-calls.js';

export interface GuardedRunsOptions {
  /** Runs whose calls are kept; past it the least recently asked is forgotten. Default 10,000. */
  maxRuns?: number;
  /** A run not asked about for this long is forgotten. Default 900,000 ms (15 min). */
  runTtlMs?: number;
  /** Clock. Default `Date.now`. */
  now?: () => number;
  /** Told each time a run is forgotten (to count it). Default none. */
  onEvicted?: (reason: 'expired' | 'capacity') => void;
}

/** A run's calls so far and when it was last asked about. */
interface KeptRun {
  calls: RunCalls;
  seen: number;
}

/**
 * Tool-call decisions for runs that no span shows while they go on (agents reaching the
 * gateway over HTTP; Mastra, whose spans reach processors after the run): each run's calls
 * are kept from the decisions asked for, keyed by trace id and agent, so budgets and repeats
 * hold across calls. Rules are matched on the agent name, as an outermost run. Bounded in
 * runs, and a run expires a TTL after it was last asked about.
 */
export class GuardedRuns {
  private readonly _rules: GuardRules;
  private readonly _runs = new Map<string, KeptRun>();
  private readonly _maxRuns: number;
  private readonly _ttl: number;
  private readonly _now: () => number;
  private readonly _onEvicted: GuardedRunsOptions['onEvicted'];

  constructor(policy: Policy, options: GuardedRunsOptions = {}) {
    this._rules = new GuardRules(policy);
    this._maxRuns = options.maxRuns ?? 10_000;
    this._ttl = options.runTtlMs ?? 900_000;
    this._now = options.now ?? Date.now;
    this._onEvicted = options.onEvicted;
  }

  /** Runs kept now. */
  get size(): number {
    return this._runs.size;
  }

  /** The decision for `call` in the run (`traceId`, `agent`), which then counts the call. */
  decide(traceId: string, agent: string, call: { tool: string; arguments?: unknown }): ToolCallDecision {
    const now = this._now();
    this._expire(now);
    const key = `${traceId}\u0000${agent}`;
    let run = this._runs.get(key);
    if (run === undefined) {
      run = { calls: new RunCalls(), seen: now };
      if (this._runs.size >= this._maxRuns) this._evictOldest();
    } else this._runs.delete(key);
    // Re-inserted: the map's order is least recently asked first.
    run.seen = now;
    this._runs.set(key, run);
    const rules = this._rules.rulesFor({ agent, attributes: {}, nested: false });
    const decision = decideToolCall(rules, run.calls, call, this._rules.redact);
    // Refused calls are kept too: the verdict on the run's trace counts them in `max_calls` and
    // `max_repeats`, and the guard must not let through what the verdict then fails.
    run.calls.record(call.tool, call.arguments);
    return decision;
  }

  /** Oldest first: stop at the first run still fresh. */
  private _expire(now: number): void {
    for (const [key, run] of this._runs) {
      if (now - run.seen < this._ttl) return;
      this._runs.delete(key);
      this._onEvicted?.('expired');
    }
  }

  private _evictOldest(): void {
    const oldest = this._runs.keys().next();
    if (oldest.done) return;
    this._runs.delete(oldest.value);
    this._onEvicted?.('capacity');
  }
}
