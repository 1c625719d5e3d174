import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { loadJudges } from '../../src/cli/scoring.js';
import { spansFromOtlpJson } from '../../src/conventions/from-otlp-json.js';
import {
  evaluateTraceSpans,
  evaluateTraces,
  type TraceJudgement,
} from '../../src/evaluation/evaluate-traces.js';
import { loadPolicy } from '../../src/policy/load-policy.js';
import type { Problem, SpanLike, Verdict } from '../../src/types.js';
import { otlpFixtures } from '../helpers/recorded-fixtures.js';
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

/** Every agent, nested runs too, with deterministic scorers of each family. */
const POLICY = `version: 1
rules:
  - name: all
    match: { agent: "*", root_only: false }
    scorers:
      - kind: reliability
        expected_tool_calls: [get_order_detail]
      - kind: tool_order
        expected_tool_order: [get_order_detail, check_refund_policy]
      - kind: trajectory
        expected_tools: [get_order_detail]
        forbidden_tools: [submit_refund]
        max_calls: 3
  - name: second
    match: { agent: "*" }
    scorers:
      - kind: tool_calls
        expected_tools: [get_order_detail]
`;

/** The spans of each trace, in input order, as the CLI's window hands them over. */
function byTrace(spans: SpanLike[]): Map<string, SpanLike[]> {
  const groups = new Map<string, SpanLike[]>();
  for (const span of spans) {
    const group = groups.get(span.traceId);
    if (group) group.push(span);
    else groups.set(span.traceId, [span]);
  }
  return groups;
}

describe('evaluateTraceSpans (the CLI window’s judge): the same verdicts as evaluateTraces', () => {
  it('for every recorded fixture, trace by trace, synchronously when no judge runs', async () => {
    const policy = await loadPolicy(POLICY);
    const files = otlpFixtures();
    expect(files.length).toBeGreaterThan(50);
    let verdictCount = 0;
    for (const file of files) {
      const payload = JSON.parse(readFileSync(file, 'utf8'));
      const expectedProblems: Problem[] = [];
      const expected = await evaluateTraces(payload, policy, { problems: expectedProblems });
      const actual: Verdict[] = [];
      const actualProblems: Problem[] = [];
      const groups = [...byTrace(spansFromOtlpJson(payload))].sort(([a], [b]) =>
        a < b ? -1 : a > b ? 1 : 0,
      );
      for (const [, spans] of groups) {
        const result = evaluateTraceSpans(spans, policy, { problems: actualProblems });
        expect(result, file).not.toBeInstanceOf(Promise);
        actual.push(...(result as TraceJudgement).verdicts);
      }
      expect(actual, file).toEqual(expected);
      expect(actualProblems, file).toEqual(expectedProblems);
      verdictCount += actual.length;
    }
    expect(verdictCount).toBeGreaterThan(files.length);
  });

  it('runs judges through the same path (a promise, the same verdicts)', async () => {
    const policy = await loadPolicy(
      fileURLToPath(new URL('../fixtures/policies/cli-judged.yaml', import.meta.url)),
    );
    const judges = await loadJudges(
      fileURLToPath(new URL('../fixtures/policies/judges.mjs', import.meta.url)),
    );
    const t = new TraceBuilder({ traceId: '0123456789abcdef0123456789abcdef' });
    t.agent('refund-agent').tool('get_order_detail', { args: { order_id: 'A1' } });
    const payload = t.toOtlp();
    const result = evaluateTraceSpans(spansFromOtlpJson(payload), policy, { judges });
    expect(result).toBeInstanceOf(Promise);
    const { verdicts } = await result;
    expect(verdicts.map((v) => v.results.map((r) => [r.kind, r.label]))).toEqual([[['llm_judge', 'pass']]]);
    expect(verdicts).toEqual(await evaluateTraces(payload, policy, { judges }));
  });

  it('records a trace that breaks reconstruction as a problem, and no verdict', async () => {
    const policy = await loadPolicy(POLICY);
    const t = new TraceBuilder({ traceId: POISON });
    t.agent('refund-agent').tool('get_order_detail', { args: { order_id: 'A1' } });
    const problems: Problem[] = [];
    expect(evaluateTraceSpans(spansFromOtlpJson(t.toOtlp()), policy, { problems })).toEqual({
      verdicts: [],
      runs: 0,
      unmatched: [],
    });
    expect(problems).toEqual([
      {
        code: 'reconstruction_failed',
        message: `trace ${POISON} could not be reconstructed: simulated reconstruction bug`,
        traceId: POISON,
      },
    ]);
    expect(evaluateTraceSpans([], policy)).toEqual({ verdicts: [], runs: 0, unmatched: [] });
  });
});
