import { describe, expect, it } from 'vitest';
import { GuardService } from '../../src/gateway/guard-service.js';
import { PrometheusRegistry } from '../../src/gateway/prometheus-registry.js';
import { parsePolicyText } from '../../src/policy/load-policy.js';

/** At most one call per run: every run's second call is over budget while the run is remembered. */
const POLICY = parsePolicyText(`version: 1
rules:
  - name: one_call
    match: { agent: '*' }
    guard: { mode: enforce, checks: [call_budget] }
    scorers:
      - kind: trajectory
        max_calls: 1
`);

const trace = (i: number) => i.toString(16).padStart(32, 'a');

function body(i: number, tool = 'lookup'): string {
  return JSON.stringify({ trace_id: trace(i), agent: 'agent', tool, arguments: { i } });
}

function setup(options: { maxRuns?: number; runTtlMs?: number } = {}) {
  const clock = { now: 0 };
  const registry = new PrometheusRegistry();
  const service = new GuardService({ policy: POLICY, registry, now: () => clock.now, ...options });
  const allowed = (i: number, tool?: string) => {
    const answer = service.answer(body(i, tool));
    if (answer.kind !== 'decided') throw new Error(answer.message);
    return answer.decision.allowed;
  };
  const evicted = (reason: string) =>
    registry
      .text()
      .split('\n')
      .find((l) => l.startsWith(`toolwatch_gateway_guard_runs_evicted_total{reason="${reason}"}`))
      ?.split(' ')[1];
  return { clock, service, allowed, evicted };
}

describe('GuardService', () => {
  it('remembers at most maxRuns runs, evicting the least recently asked, and counts it', () => {
    const { service, allowed, evicted } = setup({ maxRuns: 2 });
    expect(allowed(1)).toBe(true);
    expect(allowed(2)).toBe(true);
    expect(allowed(1, 'again')).toBe(false); // run 1 is remembered, and now the most recent
    expect(allowed(3)).toBe(true); // evicts run 2
    expect(service.runs).toBe(2);
    expect(evicted('capacity')).toBe('1');
    expect(allowed(1, 'third')).toBe(false); // run 1 survived
    expect(allowed(2, 'again')).toBe(true); // run 2 was forgotten: its budget starts over
    expect(evicted('capacity')).toBe('2');
  });

  it('forgets a run not asked about for runTtlMs, and counts it', () => {
    const { clock, service, allowed, evicted } = setup({ runTtlMs: 1000 });
    expect(allowed(1)).toBe(true);
    clock.now = 600;
    expect(allowed(2)).toBe(true);
    clock.now = 999;
    expect(allowed(1, 'again')).toBe(false); // asked within the TTL: kept, and refreshed
    clock.now = 1700;
    expect(allowed(3)).toBe(true); // run 2 (last asked at 600) expired
    expect(service.runs).toBe(2);
    expect(evicted('expired')).toBe('1');
    expect(allowed(2, 'again')).toBe(true);
  });

  it('never throws: bad bodies come back as invalid with a reason', () => {
    const { service } = setup();
    for (const bad of ['', 'null', '{"trace_id":1}', '\u0000']) {
      const answer = service.answer(bad);
      expect(answer.kind).toBe('invalid');
    }
  });
});
