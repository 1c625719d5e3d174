import { describe, expect, it, vi } from 'vitest';
import { evaluateTraces } from '../../src/evaluation/evaluate-traces.js';
import { loadPolicy } from '../../src/policy/load-policy.js';
import type { Problem } from '../../src/types.js';
import { TraceBuilder } from '../helpers/trace-builder.js';

const POISON = 'dead0000000000000000000000000bad';

// Reconstruction must never throw; if it ever does, only that trace is lost.
vi.mock('../../src/reconstruction/reconstruct-trace.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/reconstruction/reconstruct-trace.js')>();
  return {
    ...real,
    reconstructTrace: (spans: Parameters<typeof real.reconstructTrace>[0]) => {
      if (spans[0]?.traceId === POISON) throw new Error('simulated reconstruction bug');
      return real.reconstructTrace(spans);
    },
  };
});

function trace(traceId: string) {
  const t = new TraceBuilder({ traceId });
  t.agent('refund-agent').tool('get_order_detail', { args: { order_id: 'A1' } });
  return t.toOtlp();
}

describe('evaluateTraces isolation', () => {
  it('records a trace that breaks reconstruction as a problem and scores the others', async () => {
    const policy = await loadPolicy(
      '{"version":1,"rules":[{"name":"r","scorers":[{"kind":"tool_order","expected_tool":"get_order_detail"}]}]}',
    );
    const problems: Problem[] = [];
    const verdicts = await evaluateTraces(
      [trace(POISON), trace('0123456789abcdef0123456789abcdef')],
      policy,
      {
        problems,
      },
    );
    // Scored: its tool_order result a judged pass, not a skipped record.
    expect(verdicts.map((v) => [v.trace_id, v.passed, v.results.map((r) => r.label)])).toEqual([
      ['0123456789abcdef0123456789abcdef', true, ['pass']],
    ]);
    expect(problems).toContainEqual({
      code: 'reconstruction_failed',
      message: `trace ${POISON} could not be reconstructed: simulated reconstruction bug`,
      traceId: POISON,
    });
  });
});
