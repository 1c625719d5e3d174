import type { GuardOutcome, ToolwatchMetrics } from '../emission/metrics.js';
import { GuardedRuns } from '../guard/guarded-runs.js';
import type { Policy, ToolCallDecision } from '../types.js';
import { parseGuardRequest } from './guard-request.js';
import type { PrometheusRegistry } from './prometheus-registry.js';

export interface GuardServiceOptions {
  policy: Policy;
  /** Runs (trace id + agent) whose calls are kept; past it the least recently asked is evicted. Default 10,000. */
  maxRuns?: number;
  /** A run not asked about for this long is forgotten. Default 900,000 ms (15 min). */
  runTtlMs?: number;
  registry: PrometheusRegistry;
  /**
   * toolwatch's instruments: each decision is counted in `toolwatch.tool.guard.decisions` (by
   * decision, kind, tool, agent and rule), as the processor counts its own. Default none.
   */
  metrics?: ToolwatchMetrics;
  /** Clock. Default `Date.now`. */
  now?: () => number;
}

/** What `POST /v1/guard` answers, before any transport. */
export type GuardAnswer =
  | { kind: 'decided'; decision: ToolCallDecision }
  | { kind: 'invalid'; message: string };

/**
 * The gateway's tool-call guard for agents in other languages, transport-free: a request body
 * in, the decision (or why the body is not a guard request) out. Each run's calls come from the
 * guard requests themselves (`GuardedRuns`); the gateway never waits for the run's spans, which
 * arrive after the fact. Requests are counted by outcome, forgotten runs by reason.
 */
export class GuardService {
  private readonly _runs: GuardedRuns;
  private readonly _answered: (labels?: Record<string, string>, value?: number) => void;
  private readonly _metrics: ToolwatchMetrics | undefined;

  constructor(options: GuardServiceOptions) {
    this._metrics = options.metrics;
    const r = options.registry;
    const evicted = r.counter(
      'toolwatch_gateway_guard_runs_evicted_total',
      'Guarded runs forgotten, by reason (expired, capacity).',
    );
    this._answered = r.counter(
      'toolwatch_gateway_guard_requests_total',
      'Guard requests, by outcome (allow, deny, would_deny, invalid).',
    );
    this._runs = new GuardedRuns(options.policy, {
      ...(options.maxRuns !== undefined ? { maxRuns: options.maxRuns } : {}),
      ...(options.runTtlMs !== undefined ? { runTtlMs: options.runTtlMs } : {}),
      ...(options.now !== undefined ? { now: options.now } : {}),
      onEvicted: (reason) => evicted({ reason }),
    });
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
    let decision: ToolCallDecision;
    try {
      decision = this._runs.decide(request.traceId, request.agent, {
        tool: request.tool,
        arguments: request.arguments,
      });
    } catch (err) {
      // The decision is pure and total; if it ever fails, the client learns why instead of a 500.
      this._answered({ outcome: 'invalid' });
      return {
        kind: 'invalid',
        message: `cannot decide: ${err instanceof Error ? err.message : String(err)}`,
      };
    }
    const outcome: GuardOutcome =
      decision.decision === 'allow' ? 'allow' : decision.enforced ? 'deny' : 'would_deny';
    this._answered({ outcome });
    this._metrics?.recordGuardDecision(
      outcome,
      decision.kind ?? '',
      request.tool,
      request.agent,
      decision.rule ?? '',
    );
    return { kind: 'decided', decision };
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
