/**
 * The bounds table of docs/processor.md gives each processor limit a default ("`maxSpansPerTrace`
 * (10,000)", "`traceTtlMs` (300 s)", …), and `test/processor/bounds.test.ts` attacks every
 * bound with small explicit values. These tests construct the processor with no limits at
 * all, so a changed default (in the code or in docs/processor.md) is caught: each asserts the
 * behaviour just inside and just past the documented value.
 */
import { BasicTracerProvider, type Span } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ToolwatchSpanProcessor } from '../../src/processor/toolwatch-span-processor.js';
import type { Scorer, ScorerResult, Verdict } from '../../src/types.js';
import { createMetrics, fakeScorer, pointValue, policyOf } from './harness.js';
import { startAgent, startTool, tool } from './tracing.js';

afterEach(() => {
  vi.useRealTimers();
});

/**
 * A provider with toolwatch alone and no exporter: nothing but the processor holds the spans,
 * and the defaults are untouched (only the policy, metrics and the verdict callback are set).
 */
function bare(scorers: Scorer[] = [fakeScorer()]) {
  const m = createMetrics();
  const verdicts: Verdict[] = [];
  const processor = new ToolwatchSpanProcessor({
    policy: policyOf([{ scorers }], { judge: { maxPerMinute: 1000, maxConcurrent: 10, escalateOn: [] } }),
    meterProvider: m.meterProvider,
    onVerdict: (v) => verdicts.push(v),
  });
  const provider = new BasicTracerProvider({ spanProcessors: [processor] });
  const tracer = provider.getTracer('defaults');
  return {
    tracer,
    verdicts,
    async dropped(reason: string): Promise<number> {
      const metrics = await m.collect();
      return (pointValue(metrics.get('toolwatch.processor.spans_dropped'), { reason }) as number) ?? 0;
    },
    async close() {
      await provider.shutdown();
      await m.shutdown();
    },
  };
}

const labels = (v: Verdict) => v.results.map((r) => [r.scorer, r.label, r.reason]);

describe('docs/processor.md: the processor limits have the documented defaults', () => {
  it('maxSpansPerTrace (10,000): the 10,000th span of a trace is held, the 10,001st refused and counted', async () => {
    const p = bare();
    const session = startAgent(p.tracer, 'session');
    for (let i = 0; i < 9_999; i++) tool(p.tracer, 'lookup', session, { i });
    expect(await p.dropped('max_spans_per_trace')).toBe(0);
    tool(p.tracer, 'lookup', session, { i: 'one too many' });
    expect(await p.dropped('max_spans_per_trace')).toBe(1);
    session.end();
    expect(p.verdicts.map(labels)).toEqual([[['fake', 'skipped', 'incomplete_trace']]]);
    await p.close();
  }, 30_000);

  it('maxTraces (10,000): the 10,001st agent trace evicts the oldest one, counted as max_traces', async () => {
    const p = bare();
    const agents: Span[] = [];
    for (let i = 0; i < 10_000; i++) agents.push(startAgent(p.tracer, `agent${i}`) as Span);
    expect(await p.dropped('max_traces')).toBe(0);
    agents.push(startAgent(p.tracer, 'one-too-many') as Span);
    // The oldest trace held one span (its agent span) when it was evicted.
    expect(await p.dropped('max_traces')).toBe(1);
    agents[0]!.end();
    agents[1]!.end();
    expect(p.verdicts.map((v) => [v.agent, ...labels(v)])).toEqual([
      ['agent0', ['fake', 'skipped', 'incomplete_trace']],
      // The second oldest was not evicted: judged whole (it has no tool call, so the fake fails it).
      ['agent1', ['fake', 'fail', 'calls: ']],
    ]);
    await p.close();
  }, 30_000);

  it('maxBufferedSpans (100,000): the 100,001st held span evicts the oldest trace, counted as max_buffered_spans', async () => {
    const p = bare();
    // Ten traces of 10,000 spans each (the per-trace default): 100,000 held, all within limits.
    const agents: Span[] = [];
    for (let t = 0; t < 10; t++) {
      const agent = startAgent(p.tracer, `agent${t}`) as Span;
      agents.push(agent);
      for (let i = 0; i < 9_999; i++) tool(p.tracer, 'lookup', agent, { i });
    }
    expect(await p.dropped('max_buffered_spans')).toBe(0);
    expect(await p.dropped('max_spans_per_trace')).toBe(0);
    startAgent(p.tracer, 'one-too-many');
    expect(await p.dropped('max_buffered_spans')).toBe(10_000);
    agents[0]!.end();
    agents[1]!.end();
    expect(p.verdicts.map((v) => [v.agent, ...labels(v)])).toEqual([
      ['agent0', ['fake', 'skipped', 'incomplete_trace']],
      ['agent1', ['fake', 'pass', 'ok']],
    ]);
    await p.close();
  }, 60_000);

  it('maxBufferedBytes (128 MiB): a session holding 120 MiB of arguments is kept, one past 128 MiB is evicted', async () => {
    const p = bare();
    const session = startAgent(p.tracer, 'session');
    // 1 MiB of arguments per call, a fresh string each time (as a tool given a whole document gets).
    const call = (i: number) => tool(p.tracer, 'lookup', session, { document: 'x'.repeat(1024 * 1024), i });
    for (let i = 0; i < 120; i++) call(i);
    expect(await p.dropped('max_buffered_bytes')).toBe(0);
    for (let i = 120; i < 132; i++) call(i);
    // Evicted once past 128 MiB: every span it held then (the session and at least 121 calls).
    expect(await p.dropped('max_buffered_bytes')).toBeGreaterThan(121);
    session.end();
    expect(p.verdicts.map(labels)).toEqual([[['fake', 'skipped', 'incomplete_trace']]]);
    await p.close();
  }, 60_000);

  it('traceTtlMs (300 s): a quiet trace is kept for 299 s and evicted within one sweep after 300 s', async () => {
    vi.useFakeTimers();
    const p = bare();
    const kept = startAgent(p.tracer, 'kept');
    tool(p.tracer, 'lookup', kept);
    const quiet = startAgent(p.tracer, 'quiet');
    tool(p.tracer, 'lookup', quiet);
    await vi.advanceTimersByTimeAsync(299_000);
    // Not evicted yet: judged whole.
    kept.end();
    expect(p.verdicts.map((v) => [v.agent, ...labels(v)])).toEqual([['kept', ['fake', 'pass', 'ok']]]);
    // Sweeps come every traceTtlMs / 10 at this default (30 s): evicted by 330 s.
    await vi.advanceTimersByTimeAsync(31_000);
    quiet.end();
    expect(p.verdicts.map((v) => [v.agent, ...labels(v)])).toEqual([
      ['kept', ['fake', 'pass', 'ok']],
      ['quiet', ['fake', 'skipped', 'incomplete_trace']],
    ]);
    vi.useRealTimers();
    expect(await p.dropped('ttl')).toBe(2);
    await p.close();
  });

  it('lateSpanTimeoutMs (5 s): a run whose tool span never ends is judged 5 s after its agent span ended', async () => {
    vi.useFakeTimers();
    const p = bare();
    const agent = startAgent(p.tracer, 'forgetful');
    tool(p.tracer, 'lookup', agent);
    startTool(p.tracer, 'fire_and_forget', agent);
    agent.end();
    await vi.advanceTimersByTimeAsync(4_900);
    expect(p.verdicts).toEqual([]);
    await vi.advanceTimersByTimeAsync(200);
    expect(p.verdicts.map((v) => [v.agent, ...labels(v)])).toEqual([['forgetful', ['fake', 'pass', 'ok']]]);
    vi.useRealTimers();
    await p.close();
  });

  it('judgeTimeoutMs (60 s): a judge still running after 60 s is aborted and yields an error result', async () => {
    vi.useFakeTimers();
    let aborted = false;
    const hanging: Scorer = {
      ...fakeScorer({ name: 'judge', kind: 'llm_judge', async: true }),
      sampling: { ratio: 1 },
      score: (_run, context) =>
        new Promise<ScorerResult>(() => {
          context?.signal?.addEventListener('abort', () => {
            aborted = true;
          });
        }),
    };
    const p = bare([fakeScorer({ name: 'det' }), hanging]);
    const agent = startAgent(p.tracer, 'asker');
    tool(p.tracer, 'lookup', agent);
    agent.end();
    await vi.advanceTimersByTimeAsync(59_900);
    expect(p.verdicts).toEqual([]);
    expect(aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(200);
    expect(p.verdicts).toHaveLength(1);
    expect(p.verdicts[0]!.results.map((r) => [r.scorer, r.label])).toEqual([
      ['det', 'pass'],
      ['judge', 'error'],
    ]);
    expect(aborted).toBe(true);
    vi.useRealTimers();
    await p.close();
  });
});
