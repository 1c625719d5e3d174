import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { spansFromOtlpJson } from '../../src/conventions/from-otlp-json.js';
import { evaluateTraces } from '../../src/evaluation/evaluate-traces.js';
import { loadPolicy } from '../../src/policy/load-policy.js';
import type { AgentRun, Problem } from '../../src/types.js';
import { type OtlpRequest, TraceBuilder } from '../helpers/trace-builder.js';
import { traceIdAt } from './helpers.js';

const POLICY = `
version: 1
judge: { max_per_minute: 2, max_concurrent: 1, escalate_on: [failure] }
rules:
  - name: refunds
    match: { agent: "refund-*" }
    scorers:
      - kind: reliability
        expected_tool_calls: [get_order_detail, check_refund_policy]
      - kind: trajectory
        expected_tools: [get_order_detail, check_refund_policy]
        forbidden_tools: [submit_refund]
        max_calls: 3
      - kind: llm_judge
        prompt: tool_appropriateness
  - name: members
    match: { agent: "*-checker", root_only: false }
    scorers:
      - kind: tool_order
        expected_tool: check_refund_policy
`;

function goodTrace(traceId: string) {
  const t = new TraceBuilder({ traceId });
  const a = t.agent('refund-agent');
  a.llm({ toolCalls: [{ name: 'get_order_detail', id: 'c1', args: { order_id: 'A1024' } }] });
  a.tool('get_order_detail', { id: 'c1', args: { order_id: 'A1024' }, result: { ok: true } });
  a.llm({ toolCalls: [{ name: 'check_refund_policy', id: 'c2', args: { order_id: 'A1024' } }] });
  a.tool('check_refund_policy', { id: 'c2', args: { order_id: 'A1024' }, result: { eligible: true } });
  return t;
}

function badTrace(traceId: string) {
  const t = new TraceBuilder({ traceId });
  const a = t.agent('refund-agent');
  a.tool('get_order_detail', { id: 'c1', args: { order_id: 'A1024' } });
  a.tool('submit_refund', { id: 'c3', args: { order_id: 'A1024' } });
  const member = a.agent('policy-checker');
  member.tool('check_refund_policy', { id: 'c2', args: { order_id: 'A1024' } });
  return t;
}

/** The bad run's own calls, both judged appropriate. */
const JUDGE_OK = JSON.stringify({
  evaluations: [
    { toolCalled: 'get_order_detail', wasAppropriate: true, reasoning: 'asked' },
    { toolCalled: 'submit_refund', wasAppropriate: true, reasoning: 'asked' },
  ],
});

describe('evaluateTraces', () => {
  it('scores every matching run, nested runs for root_only: false rules, in a fixed order', async () => {
    const policy = await loadPolicy(POLICY);
    const good = goodTrace(traceIdAt(0.1));
    const bad = badTrace(traceIdAt(0.2));
    const verdicts = await evaluateTraces([bad.toOtlp(), good.toOtlp()], policy, {
      judges: { default: () => JUDGE_OK },
    });
    expect(verdicts.map((v) => [v.trace_id, v.agent, v.rule, v.passed])).toEqual([
      [good.traceId, 'refund-agent', 'refunds', true],
      [bad.traceId, 'refund-agent', 'refunds', false],
      [bad.traceId, 'policy-checker', 'members', true],
    ]);
    const [g, b] = verdicts;
    expect(g!.results.map((r) => [r.scorer, r.label])).toEqual([
      ['reliability', 'pass'],
      ['trajectory', 'pass'],
      ['llm_judge', 'skipped'],
    ]);
    expect(g!.results[2]!.reason).toBe('sampled_out');
    // The bad run failed, so its judge was escalated and ran.
    expect(b!.results.map((r) => [r.scorer, r.label])).toEqual([
      ['reliability', 'fail'],
      ['trajectory', 'fail'],
      ['llm_judge', 'pass'],
    ]);
    expect(b!.results[2]!.detail.escalated).toBe('failure');
    expect(Object.keys(g!)).toEqual([
      'trace_id',
      'span_id',
      'agent',
      'rule',
      'passed',
      'policy_digest',
      'sampled',
      'results',
    ]);
    expect(g!.policy_digest).toBe(policy.digest);
  });

  it('accepts OTLP/JSON text, JSON Lines, a single request and SpanLike[] alike', async () => {
    const policy = await loadPolicy(POLICY);
    const good = goodTrace(traceIdAt(0.1)).toOtlp();
    const bad = badTrace(traceIdAt(0.2)).toOtlp();
    const expected = await evaluateTraces([good, bad], policy);
    const strip = (vs: typeof expected) => JSON.stringify(vs);
    expect(strip(await evaluateTraces(`${JSON.stringify(good)}\n${JSON.stringify(bad)}\n`, policy))).toBe(
      strip(expected),
    );
    expect(strip(await evaluateTraces([JSON.stringify(bad), JSON.stringify(good)], policy))).toBe(
      strip(expected),
    );
    const spans = [...spansFromOtlpJson(good), ...spansFromOtlpJson(bad)];
    expect(strip(await evaluateTraces(spans, policy))).toBe(strip(expected));
    expect((await evaluateTraces(good, policy)).length).toBe(1);
  });

  it('gives identical verdicts whatever the order of spans in the input', async () => {
    const policy = await loadPolicy(POLICY);
    const traces = [goodTrace(traceIdAt(0.3)), badTrace(traceIdAt(0.4)), badTrace(traceIdAt(0.05))];
    const spans = traces.flatMap((t) => spansFromOtlpJson(t.toOtlp()));
    const judges = { default: () => JUDGE_OK };
    const reference = JSON.stringify(await evaluateTraces(spans, policy, { judges, now: () => 0 }));
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat(), { minLength: spans.length, maxLength: spans.length }),
        async (keys) => {
          const shuffled = spans
            .map((s, i) => ({ s, k: keys[i]! }))
            .sort((a, b) => a.k - b.k)
            .map((x) => x.s);
          const out = JSON.stringify(await evaluateTraces(shuffled, policy, { judges, now: () => 0 }));
          expect(out).toBe(reference);
        },
      ),
      { numRuns: 25 },
    );
  });

  it('also gives identical verdicts when spans are shuffled across OTLP requests', async () => {
    const policy = await loadPolicy(POLICY);
    const otlp = badTrace(traceIdAt(0.4)).toOtlp();
    const spans = otlp.resourceSpans[0]!.scopeSpans[0]!.spans;
    const split = (order: number[]): OtlpRequest[] =>
      order.map((i) => ({
        resourceSpans: [
          { ...otlp.resourceSpans[0]!, scopeSpans: [{ scope: { name: 'x' }, spans: [spans[i]!] }] },
        ],
      }));
    const forward = await evaluateTraces(split(spans.map((_, i) => i)), policy);
    const backward = await evaluateTraces(split(spans.map((_, i) => spans.length - 1 - i)), policy);
    expect(JSON.stringify(backward)).toBe(JSON.stringify(forward));
    expect(forward).toHaveLength(2);
  });

  it('applies the judge budget with the given clock', async () => {
    const policy = await loadPolicy(POLICY);
    const inputs = [0.1, 0.2, 0.3, 0.4].map((f) => badTrace(traceIdAt(f)).toOtlp());
    let calls = 0;
    const verdicts = await evaluateTraces(inputs, policy, {
      judges: {
        default: () => {
          calls++;
          return JUDGE_OK;
        },
      },
      now: () => 1_000,
    });
    const judged = verdicts.filter((v) => v.rule === 'refunds').map((v) => v.results[2]!);
    // max_per_minute: 2 — the first two runs in verdict order are judged, the rest skipped.
    expect(judged.map((r) => r.label)).toEqual(['pass', 'pass', 'skipped', 'skipped']);
    expect(judged[3]!.reason).toBe('budget');
    expect(calls).toBe(2);
  });

  it('admits the same judge calls under a per-minute budget whatever their latency', async () => {
    const policy = await loadPolicy(`
version: 1
judge: { max_per_minute: 3, max_concurrent: 2 }
rules:
  - name: r
    scorers:
      - { kind: llm_judge, name: j1, prompt: tool_appropriateness, sampling: { ratio: 1 } }
      - { kind: llm_judge, name: j2, prompt: tool_appropriateness, sampling: { ratio: 1 } }
`);
    const inputs = [0.1, 0.2, 0.3].map((f) => badTrace(traceIdAt(f)).toOtlp());
    for (const delays of [
      [30, 0, 10, 0, 0, 0],
      [0, 30, 0, 20, 5, 0],
      [0, 0, 0, 0, 0, 0],
    ]) {
      let call = 0;
      const judge = () =>
        new Promise<string>((resolve) => setTimeout(() => resolve(JUDGE_OK), delays[call++]));
      const verdicts = await evaluateTraces(inputs, policy, { judges: { default: judge }, now: () => 0 });
      expect(verdicts.map((v) => v.results.map((r) => `${r.scorer}:${r.label}`))).toEqual([
        ['j1:pass', 'j2:pass'],
        ['j1:pass', 'j2:skipped'],
        ['j1:skipped', 'j2:skipped'],
      ]);
    }
  });

  it('reports judges that are not configured as errors, never throwing', async () => {
    const policy = await loadPolicy(POLICY);
    const [v] = await evaluateTraces(badTrace(traceIdAt(0.2)).toOtlp(), policy);
    expect(v!.results[2]).toMatchObject({ label: 'error', reason: 'no judge named "default"' });
  });

  it('skips every scorer of a run whose span never ended', async () => {
    const policy = await loadPolicy(POLICY);
    const t = goodTrace(traceIdAt(0.1));
    const t2 = new TraceBuilder({ traceId: traceIdAt(0.6) });
    const open = t2.agent('refund-agent').open();
    open.tool('get_order_detail', { args: {} });
    const verdicts = await evaluateTraces([t.toOtlp(), t2.toOtlp()], policy);
    const v = verdicts.find((x) => x.trace_id === t2.traceId)!;
    expect(v.results.map((r) => [r.label, r.reason])).toEqual([
      ['skipped', 'incomplete_trace'],
      ['skipped', 'incomplete_trace'],
      ['skipped', 'incomplete_trace'],
    ]);
    // Judged by nobody: not a pass (it read `passed: true`), not a failure either.
    expect(v.passed).toBeNull();
  });

  it('records unreadable input as problems and returns no verdicts for it', async () => {
    const policy = await loadPolicy(POLICY);
    const problems: Problem[] = [];
    const verdicts = await evaluateTraces('this is not json', policy, { problems });
    expect(verdicts).toEqual([]);
    expect(problems.length).toBeGreaterThan(0);
  });

  it('says which outermost runs no rule matched, and how many runs it found', async () => {
    const policy = await loadPolicy(POLICY);
    const good = goodTrace(traceIdAt(0.1));
    const weather = new TraceBuilder({ traceId: traceIdAt(0.3) });
    const run = weather.agent('weather_agent');
    run.tool('getWeather', { args: { city: 'Paris' } });
    // A nested run no rule matches is part of its outermost run, not an unmatched run.
    run.agent('forecaster').tool('lookup', { args: {} });
    const http = new TraceBuilder({ traceId: traceIdAt(0.5) });
    http.span('GET /health', {}, 1);
    const result = await evaluateTraces([good.toOtlp(), weather.toOtlp(), http.toOtlp()], policy);
    expect(result.map((v) => v.agent)).toEqual(['refund-agent']);
    expect(result.runs).toBe(2);
    expect(result.unmatched).toEqual([
      { trace_id: weather.traceId, span_id: run.spanId, agent: 'weather_agent' },
    ]);
    // Still the plain verdict array for callers that compare it as one.
    expect(Object.keys(result)).toEqual(['0']);
    expect(JSON.parse(JSON.stringify(result))).toEqual([...result]);
    const none = await evaluateTraces(http.toOtlp(), policy);
    expect([none.length, none.runs, none.unmatched]).toEqual([0, 0, []]);
  });

  it('the unmatched option collects the same runs as the result, whole', async () => {
    const policy = await loadPolicy(POLICY);
    const weather = new TraceBuilder({ traceId: traceIdAt(0.3) });
    const run = weather.agent('weather_agent');
    run.tool('getWeather', { args: { city: 'Paris' } });
    run.agent('forecaster').tool('lookup', { args: {} });
    const other = new TraceBuilder({ traceId: traceIdAt(0.6) });
    const second = other.agent('travel_agent');
    second.tool('book', { args: {} });
    // A judged run's member no rule matches is covered by the judged run's verdict.
    const judged = goodTrace(traceIdAt(0.1));
    judged.agent('refund-agent').agent('helper').tool('lookup', { args: {} });
    const unmatched: AgentRun[] = [];
    const result = await evaluateTraces([weather.toOtlp(), other.toOtlp(), judged.toOtlp()], policy, {
      unmatched,
    });
    // One meaning for both: the outermost runs no rule matched (the nested forecaster is part
    // of weather_agent's run, reachable as its child), in the result's order.
    expect(unmatched.map((r) => ({ trace_id: r.traceId, span_id: r.spanId, agent: r.agent }))).toEqual(
      result.unmatched,
    );
    expect(result.unmatched.map((r) => r.agent)).toEqual(['weather_agent', 'travel_agent']);
    expect(unmatched[0]!.calls.map((c) => c.name)).toEqual(['getWeather']);
    expect(unmatched[0]!.children.map((c) => c.agent)).toEqual(['forecaster']);
  });
});
