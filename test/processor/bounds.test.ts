/**
 * Every bound the processor documents, attacked: floods, deep nesting, eviction, clock
 * jumps and stalls, hanging judges, garbage scorer results, full spans, hostile attribute
 * values, shared processors. Each test failed on the processor before the rewrite.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { diag } from '@opentelemetry/api';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { classify } from '../../src/conventions/classify.js';
import { SpanRole, spanRole } from '../../src/conventions/span-role.js';
import { evaluateTraces } from '../../src/evaluation/evaluate-traces.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { ToolwatchSpanProcessor } from '../../src/processor/toolwatch-span-processor.js';
import { trajectory } from '../../src/scorers/trajectory.js';
import type { AgentRun, Problem, Scorer, ScorerResult, Verdict } from '../../src/types.js';
import { SpanFactory } from '../helpers/span-like.js';
import { createMetrics, fakeScorer, pointValue, policyOf } from './harness.js';
import { byName, evaluationEvents, pipeline, startAgent, startPlain, startTool, tool } from './tracing.js';

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

type Pipeline = ReturnType<typeof pipeline>;

/** Spans the processor holds right now (the buffer's count; `_held` on the processor before the rewrite). */
function held(p: Pipeline): number {
  const processor = p.processor as unknown as { _buffer?: { held: number }; _held?: number };
  return processor._buffer?.held ?? processor._held ?? Number.NaN;
}

function tracesHeld(p: Pipeline): number {
  const processor = p.processor as unknown as { _buffer?: { size: number }; _traces?: { size: number } };
  return processor._buffer?.size ?? processor._traces?.size ?? Number.NaN;
}

const expectsLookup = () => trajectory({ expectedTools: ['lookup'], forbiddenTools: ['delete_everything'] });

describe('bound 1: span limits hold on every path', () => {
  it('keeps a never-ending session under maxSpansPerTrace and counts exactly what it did not hold', async () => {
    const m = createMetrics();
    const verdicts: Verdict[] = [];
    const p = pipeline({
      policy: policyOf([{ scorers: [expectsLookup()] }]),
      meterProvider: m.meterProvider,
      maxSpansPerTrace: 100,
      maxBufferedSpans: 1000,
      onVerdict: (v) => verdicts.push(v),
    });
    const session = startAgent(p.tracer, 'session');
    const tools = 20_000;
    let peak = 0;
    for (let i = 0; i < tools; i++) {
      tool(p.tracer, 'lookup', session, { i });
      if (i % 1000 === 0) peak = Math.max(peak, held(p));
    }
    peak = Math.max(peak, held(p));
    expect(peak).toBeLessThanOrEqual(100);
    const metrics = await m.collect();
    // The session span and 99 tools were held; every other tool span was refused, once.
    expect(
      pointValue(metrics.get('toolwatch.processor.spans_dropped'), { reason: 'max_spans_per_trace' }),
    ).toBe(tools - 99);
    session.end();
    // Judged on 99 of 20,000 calls, any verdict could be false: the run gets a record instead.
    expect(verdicts).toHaveLength(1);
    expect(verdicts[0]!.results.map((r) => [r.label, r.reason])).toEqual([['skipped', 'incomplete_trace']]);
    expect(held(p)).toBe(0);
    await p.provider.shutdown();
    await m.shutdown();
  });

  it('keeps spans first seen as they end (OpenInference bridges) under the limits too', async () => {
    const m = createMetrics();
    const p = pipeline({
      policy: policyOf([{ scorers: [fakeScorer()] }]),
      meterProvider: m.meterProvider,
      maxSpansPerTrace: 50,
    });
    const root = startPlain(p.tracer, 'Agent workflow');
    for (let i = 0; i < 5000; i++) {
      const span = startPlain(p.tracer, 'lookup', root);
      span.setAttributes({ 'openinference.span.kind': 'TOOL', 'tool.name': 'lookup', 'input.value': '{}' });
      span.end();
    }
    expect(held(p)).toBeLessThanOrEqual(50);
    const metrics = await m.collect();
    expect(
      pointValue(metrics.get('toolwatch.processor.spans_dropped'), { reason: 'max_spans_per_trace' }),
    ).toBe(5000 - 50);
    root.end();
    await p.provider.shutdown();
    await m.shutdown();
  });
});

describe('bound 1b: bytes held', () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;

  /** A tool call whose arguments are a fresh ~100 KB string (as a tool given a whole document gets). */
  const bigTool = (tracer: Pipeline['tracer'], parent: ReturnType<typeof startAgent>, i: number) =>
    tool(tracer, 'lookup', parent, { document: 'x'.repeat(100_000), i });

  /** A never-ending session of 300 such calls, with nothing else holding the spans (no exporter). */
  async function flood(maxBufferedBytes?: number) {
    const m = createMetrics();
    const verdicts: Verdict[] = [];
    const processor = new ToolwatchSpanProcessor({
      policy: policyOf([{ scorers: [expectsLookup()] }]),
      meterProvider: m.meterProvider,
      onVerdict: (v) => verdicts.push(v),
      ...(maxBufferedBytes === undefined ? {} : { maxBufferedBytes }),
    });
    const provider = new BasicTracerProvider({ spanProcessors: [processor] });
    const tracer = provider.getTracer('flood');
    gc();
    const before = process.memoryUsage().heapUsed;
    const session = startAgent(tracer, 'session');
    const calls = 300;
    for (let i = 0; i < calls; i++) bigTool(tracer, session, i);
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    const bytes = (processor as unknown as { _buffer: { bytes: number } })._buffer.bytes;
    session.end();
    const metrics = await m.collect();
    const dropped = (reason: string) =>
      pointValue(metrics.get('toolwatch.processor.spans_dropped'), { reason }) ?? 0;
    await provider.shutdown();
    await m.shutdown();
    return { grown, bytes, verdicts, calls, dropped };
  }

  it('keeps a session whose tool calls carry large arguments under maxBufferedBytes', async () => {
    // The control: under the default (128 MiB) the 30 MB of arguments are all held until the run ends.
    const held = await flood();
    expect(held.grown).toBeGreaterThan(25 * 1024 * 1024);
    expect(held.verdicts[0]!.results[0]!.label).toBe('pass');

    const bounded = await flood(4 * 1024 * 1024);
    expect(bounded.grown).toBeLessThan(8 * 1024 * 1024);
    // Evicted as it passed 4 MiB: the spans it held then, and every later one, are counted.
    expect(bounded.bytes).toBe(0);
    const atEviction = bounded.dropped('max_buffered_bytes') as number;
    expect(atEviction).toBeGreaterThan(30);
    expect(atEviction).toBeLessThan(50);
    expect(atEviction + (bounded.dropped('evicted_trace') as number)).toBe(bounded.calls + 1);
    // Judged on part of the session, a verdict could be false: the run gets a record instead.
    expect(bounded.verdicts.map((v) => v.results.map((r) => [r.label, r.reason]))).toEqual([
      [['skipped', 'incomplete_trace']],
    ]);
  });

  it('evicts the oldest other trace first, and judges the newer one whole', async () => {
    const m = createMetrics();
    const verdicts: Verdict[] = [];
    const p = pipeline({
      policy: policyOf([{ scorers: [expectsLookup()] }]),
      meterProvider: m.meterProvider,
      maxBufferedBytes: 1024 * 1024,
      onVerdict: (v) => verdicts.push(v),
    });
    const older = startAgent(p.tracer, 'older');
    for (let i = 0; i < 6; i++) bigTool(p.tracer, older, i);
    const newer = startAgent(p.tracer, 'newer');
    for (let i = 0; i < 6; i++) bigTool(p.tracer, newer, i);
    newer.end();
    older.end();
    expect(verdicts.map((v) => [v.agent, v.results[0]!.label, v.results[0]!.reason])).toEqual([
      ['newer', 'pass', null],
      ['older', 'skipped', 'incomplete_trace'],
    ]);
    const metrics = await m.collect();
    // The older trace held its agent span and its six calls when the newer one's fifth call came.
    expect(
      pointValue(metrics.get('toolwatch.processor.spans_dropped'), { reason: 'max_buffered_bytes' }),
    ).toBe(7);
    expect(tracesHeld(p)).toBe(0);
    await p.provider.shutdown();
    await m.shutdown();
  });

  it('evicts a trace first seen as its spans end, as the span ending puts it over maxBufferedBytes', async () => {
    // OpenInference bridges write every attribute as a span ends. The tool span ending put its
    // trace over the bound; its eviction rebuilt the trace's ended runs with that span (converted
    // and let go, not yet closed) and read its span: a TypeError, swallowed by the eviction's
    // catch-all, and the agent's run that had ended got no record.
    const warn = vi.spyOn(diag, 'warn');
    const verdicts: Verdict[] = [];
    const p = pipeline({
      policy: policyOf([{ match: { rootOnly: false }, scorers: [expectsLookup()] }]),
      maxBufferedBytes: 200,
      onVerdict: (v) => verdicts.push(v),
    });
    const root = startPlain(p.tracer, 'Agent workflow');
    const agent = startPlain(p.tracer, 'support', root);
    agent.setAttributes({ 'openinference.span.kind': 'AGENT', 'agent.name': 'support' });
    agent.end();
    const lookup = startPlain(p.tracer, 'lookup', root);
    lookup.setAttributes({
      'openinference.span.kind': 'TOOL',
      'tool.name': 'lookup',
      'input.value': JSON.stringify({ document: 'x'.repeat(1000) }),
    });
    lookup.end();
    root.end();
    expect(warn.mock.calls.map((c) => String(c[0])).filter((m) => m.includes('failed'))).toEqual([]);
    // (What the implicit run of the tool outside every agent gets under the limits is a gap the
    // docs/processor.md names: not asserted.)
    expect(
      verdicts
        .filter((v) => v.span_id === agent.spanContext().spanId)
        .map((v) => v.results.map((r) => r.reason)),
    ).toEqual([['incomplete_trace']]);
    expect(tracesHeld(p)).toBe(0);
    await p.provider.shutdown();
  });
});

describe('bound 1c: long-lived traces', () => {
  it('lets each judged run under a workflow span go, so the trace never reaches its span limit', async () => {
    const m = createMetrics();
    const verdicts: Verdict[] = [];
    const p = pipeline({
      policy: policyOf([{ scorers: [expectsLookup()] }]),
      meterProvider: m.meterProvider,
      maxSpansPerTrace: 200,
      onVerdict: (v) => verdicts.push(v),
    });
    // A workflow (or session) span that outlives many agent runs: each run was held until it
    // ended, so every later run was rebuilt with all earlier ones, and past 200 spans the
    // trace was incomplete: every run after the 99th got a record instead of a verdict.
    const workflow = p.tracer.startSpan('invoke_workflow session', {
      attributes: { 'gen_ai.operation.name': 'invoke_workflow' },
    });
    const runs = 500;
    let peak = 0;
    for (let i = 0; i < runs; i++) {
      const agent = startAgent(p.tracer, 'assistant', workflow);
      tool(p.tracer, 'lookup', agent, { i });
      agent.end();
      peak = Math.max(peak, held(p));
    }
    workflow.end();
    expect(peak).toBeLessThanOrEqual(3);
    expect(verdicts).toHaveLength(runs);
    expect(verdicts.every((v) => v.passed && v.results[0]!.label === 'pass')).toBe(true);
    const metrics = await m.collect();
    // Each execution counted once, though the runs were judged one by one and let go.
    expect(pointValue(metrics.get('toolwatch.tool.executions'), { 'gen_ai.tool.name': 'lookup' })).toBe(runs);
    expect(metrics.get('toolwatch.processor.spans_dropped')?.dataPoints ?? []).toEqual([]);
    expect(tracesHeld(p)).toBe(0);
    await p.provider.shutdown();
    await m.shutdown();
  });
});

describe('bound 2: nesting costs O(depth)', () => {
  it('ends a 10,000-deep chain of agent spans', { timeout: 20_000 }, async () => {
    const verdicts: Verdict[] = [];
    const depth = 9_999;
    // The root run passes only if the whole chain is under it, its deepest run holding the call.
    const wholeChain = (run: AgentRun) => {
      let levels = 1;
      while (run.children.length === 1) {
        run = run.children[0]!;
        levels++;
      }
      return levels === depth && run.executions.map((e) => e.name).join() === 'lookup';
    };
    const p = pipeline({
      policy: policyOf([{ scorers: [fakeScorer({ judge: wholeChain })] }]),
      onVerdict: (v) => verdicts.push(v),
    });
    // 9,999 agents and their tool: 10,000 spans, the default maxSpansPerTrace, so the chain is
    // judged whole (one span more and the run gets skipped: incomplete_trace, which also "passes").
    const chain = [startAgent(p.tracer, 'a0')];
    for (let i = 1; i < depth; i++) chain.push(startAgent(p.tracer, `a${i}`, chain[i - 1]));
    tool(p.tracer, 'lookup', chain[depth - 1]!);
    for (let i = depth - 1; i >= 0; i--) chain[i]!.end();
    // root_only: only the outermost run is judged, with the whole chain below it.
    expect(verdicts.map((v) => v.agent)).toEqual(['a0']);
    expect(verdicts[0]!.passed).toBe(true);
    expect(verdicts[0]!.results.map((r) => r.label)).toEqual(['pass']);
    expect(tracesHeld(p)).toBe(0);
    await p.provider.shutdown();
  });
});

describe('bound 3: an evicted trace is never re-created', () => {
  it('counts its later spans and gives its run an incomplete record, not a false failure', async () => {
    const m = createMetrics();
    const verdicts: Verdict[] = [];
    const p = pipeline({
      policy: policyOf([{ match: { agent: 'first', rootOnly: true }, scorers: [expectsLookup()] }]),
      meterProvider: m.meterProvider,
      maxTraces: 1,
      onVerdict: (v) => verdicts.push(v),
    });
    const first = startAgent(p.tracer, 'first');
    tool(p.tracer, 'prepare', first);
    // A second trace evicts the first one (maxTraces 1).
    const second = startAgent(p.tracer, 'second');
    tool(p.tracer, 'lookup', first);
    tool(p.tracer, 'other', first);
    first.end();
    second.end();
    expect(verdicts).toHaveLength(1);
    expect(verdicts[0]).toMatchObject({ agent: 'first' });
    expect(verdicts[0]!.results.map((r) => [r.label, r.reason])).toEqual([['skipped', 'incomplete_trace']]);
    const metrics = await m.collect();
    // Two spans held when evicted (agent + prepare), then two tools and the agent's end seen later.
    expect(pointValue(metrics.get('toolwatch.processor.spans_dropped'), { reason: 'max_traces' })).toBe(2);
    expect(pointValue(metrics.get('toolwatch.processor.spans_dropped'), { reason: 'evicted_trace' })).toBe(2);
    expect(tracesHeld(p)).toBe(0);
    await p.provider.shutdown();
    await m.shutdown();
  });

  it('gives a run whose agent span stays open long after its trace was evicted for inactivity its record', async () => {
    // The trace's tombstone expired like a trace, a traceTtlMs after the eviction, while the
    // agent span was still open: as it ended, a GenAI agent span started a new trace and was
    // judged on itself alone (a false "lookup was not called"), a Traceloop agent span and an
    // implicit run's root (tools under a workflow span) got nothing.
    vi.useFakeTimers();
    const verdicts: Verdict[] = [];
    const p = pipeline({
      policy: policyOf([{ match: { rootOnly: false }, scorers: [expectsLookup()] }]),
      traceTtlMs: 1000,
      onVerdict: (v) => verdicts.push(v),
    });
    const genAi = startAgent(p.tracer, 'support');
    tool(p.tracer, 'lookup', genAi);
    const traceloop = p.tracer.startSpan('billing.agent', {
      attributes: { 'traceloop.span.kind': 'agent', 'traceloop.entity.name': 'billing' },
    });
    tool(p.tracer, 'lookup', traceloop);
    const workflow = p.tracer.startSpan('flow.workflow', {
      attributes: { 'traceloop.span.kind': 'workflow' },
    });
    tool(p.tracer, 'lookup', workflow);
    await vi.advanceTimersByTimeAsync(1500);
    expect(tracesHeld(p)).toBe(0);
    // Quiet for ten times traceTtlMs more.
    await vi.advanceTimersByTimeAsync(10_000);
    vi.useRealTimers();
    genAi.end();
    traceloop.end();
    workflow.end();
    expect(verdicts.map((v) => [v.span_id, v.results.map((r) => [r.label, r.reason])])).toEqual(
      [genAi, traceloop, workflow].map((s) => [s.spanContext().spanId, [['skipped', 'incomplete_trace']]]),
    );
    expect(tracesHeld(p)).toBe(0);
    await p.provider.shutdown();
  });

  it('lets the remains of a trace cut by span limits expire once its refused agent span has ended', async () => {
    vi.useFakeTimers();
    const m = createMetrics();
    const verdicts: Verdict[] = [];
    const p = pipeline({
      policy: policyOf([{ match: { rootOnly: false }, scorers: [fakeScorer()] }]),
      meterProvider: m.meterProvider,
      maxSpansPerTrace: 1,
      traceTtlMs: 1000,
      onVerdict: (v) => verdicts.push(v),
    });
    const root = startAgent(p.tracer, 'root');
    // Over maxSpansPerTrace: refused, and remembered only while it is open.
    const refused = startAgent(p.tracer, 'refused', root);
    refused.end();
    root.end();
    expect(verdicts.map((v) => [v.agent, v.results.map((r) => r.reason)])).toEqual([
      ['refused', ['incomplete_trace']],
      ['root', ['incomplete_trace']],
    ]);
    // Nothing of the trace is open: quiet for ten times traceTtlMs, its remains expire like a
    // trace, and a span of it that starts later is followed afresh, not refused as evicted.
    await vi.advanceTimersByTimeAsync(10_000);
    vi.useRealTimers();
    const later = startAgent(p.tracer, 'later', root);
    later.end();
    // Judged on its own spans: a verdict, not a record.
    expect(verdicts.at(-1)!.agent).toBe('later');
    expect(verdicts.at(-1)!.results.map((r) => r.label)).not.toContain('skipped');
    const metrics = await m.collect();
    expect(
      pointValue(metrics.get('toolwatch.processor.spans_dropped'), { reason: 'evicted_trace' }),
    ).toBeUndefined();
    await p.provider.shutdown();
    await m.shutdown();
  });

  it('does not evict an active trace when the wall clock jumps past traceTtlMs', async () => {
    vi.useFakeTimers();
    const verdicts: Verdict[] = [];
    const p = pipeline({
      policy: policyOf([{ scorers: [expectsLookup()] }]),
      traceTtlMs: 1000,
      onVerdict: (v) => verdicts.push(v),
    });
    const agent = startAgent(p.tracer, 'agent');
    await vi.advanceTimersByTimeAsync(300);
    tool(p.tracer, 'lookup', agent);
    // NTP step, VM resume: the clock jumps an hour; one sweep period passes.
    vi.setSystemTime(Date.now() + 3_600_000);
    await vi.advanceTimersByTimeAsync(300);
    expect(tracesHeld(p)).toBe(1);
    agent.end();
    vi.useRealTimers();
    expect(verdicts).toHaveLength(1);
    expect(verdicts[0]!.passed).toBe(true);
    expect(verdicts[0]!.results[0]!.label).toBe('pass');
    await p.provider.shutdown();
  });

  it('does not evict an active trace when the event loop stalls longer than traceTtlMs', async () => {
    const verdicts: Verdict[] = [];
    const p = pipeline({
      policy: policyOf([{ scorers: [expectsLookup()] }]),
      traceTtlMs: 100,
      onVerdict: (v) => verdicts.push(v),
    });
    const agent = startAgent(p.tracer, 'agent');
    // The application computes for 400 ms without yielding, making tool calls as it goes.
    const until = Date.now() + 400;
    let next = 0;
    while (Date.now() < until) {
      if (Date.now() < next) continue;
      tool(p.tracer, 'lookup', agent);
      next = Date.now() + 20;
    }
    // The sweeps that were due run now, once.
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(tracesHeld(p)).toBe(1);
    agent.end();
    expect(verdicts[0]!.results[0]!.label).toBe('pass');
    await p.provider.shutdown();
  });
});

describe('bound 5: judges never hold shutdown or the process', () => {
  const hanging = (): Scorer =>
    fakeScorer({ name: 'judge', async: true, promise: () => new Promise<ScorerResult>(() => {}) });

  it('aborts hanging judges at once at shutdown and still exports their evaluate spans', async () => {
    const verdicts: Verdict[] = [];
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      // An exporter that keeps what it got after shutdown (the in-memory one forgets it).
      const exported: ReadableSpan[] = [];
      const exporter = {
        export: (spans: ReadableSpan[], done: (result: { code: number }) => void) => {
          exported.push(...spans);
          done({ code: 0 });
        },
        shutdown: async () => {},
      };
      let provider: BasicTracerProvider | undefined;
      const processor = new ToolwatchSpanProcessor({
        policy: policyOf([{ scorers: [fakeScorer(), { ...hanging(), sampling: { ratio: 1 } }] }], {
          judge: { maxPerMinute: 1000, maxConcurrent: 100, escalateOn: [] },
        }),
        judgeTimeoutMs: 60_000,
        tracerProvider: { getTracer: (name: string) => provider!.getTracer(name) },
        onVerdict: (v) => verdicts.push(v),
      });
      provider = new BasicTracerProvider({
        spanProcessors: [processor, new BatchSpanProcessor(exporter, { scheduledDelayMillis: 3_600_000 })],
      });
      const p = { provider, tracer: provider.getTracer('test') };
      // More runs waiting on judges than an EventTarget's default listener limit (10).
      for (let i = 0; i < 12; i++) {
        const agent = startAgent(p.tracer, `agent${i}`);
        tool(p.tracer, 'lookup', agent);
        agent.end();
      }
      const started = Date.now();
      const outcome = await Promise.race([
        p.provider.shutdown().then(() => 'shut down'),
        new Promise((resolve) => setTimeout(() => resolve('still waiting'), 5000).unref()),
      ]);
      expect(outcome).toBe('shut down');
      expect(Date.now() - started).toBeLessThan(5000);
      expect(verdicts).toHaveLength(12);
      for (const v of verdicts) expect(v.results.map((r) => r.label)).toEqual(['pass', 'error']);
      // The batch exporter was shut down in parallel, and still exported every evaluate span.
      const evaluateSpans = exported.filter((s) => s.name.startsWith('evaluate '));
      expect(evaluateSpans).toHaveLength(12);
      expect(evaluationEvents(evaluateSpans[0]!)[0]!.attributes?.['gen_ai.evaluation.score.label']).toBe(
        'error',
      );
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('lets the application exit while an llm_judge hangs', { timeout: 30_000 }, () => {
    const script = fileURLToPath(new URL('./fixtures/hanging-judge-app.ts', import.meta.url));
    const started = Date.now();
    const child = spawnSync(process.execPath, ['--import', 'tsx', script], {
      encoding: 'utf8',
      timeout: 25_000,
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
    });
    expect(child.stderr).not.toContain('Error');
    expect(child.stdout.trim()).toBe('app done');
    // The judge's own timeout is 20 s: the process must not wait for it.
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(child.status).toBe(0);
  });
});

describe('bound 6: scorer results are validated', () => {
  it('turns missing and garbage results into errors and keeps every other result', async () => {
    const verdicts: Verdict[] = [];
    const garbage = (name: string, result: unknown): Scorer => ({
      ...fakeScorer({ name }),
      score: () => result as ScorerResult,
    });
    const ok = (name: string, patch: Partial<ScorerResult>) =>
      garbage(name, {
        scorer: name,
        kind: 'custom',
        passed: true,
        score: 1,
        label: 'pass',
        reason: null,
        digest: 'd',
        detail: {},
        ...patch,
      });
    const p = pipeline({
      policy: policyOf([
        {
          scorers: [
            trajectory({ forbiddenTools: ['delete_everything'] }),
            garbage('nothing', null),
            garbage('undefined', undefined),
            ok('weird_label', { label: 'weird' as never }),
            ok('nan', { score: Number.NaN }),
            ok('negative', { score: -0.5 }),
          ],
        },
      ]),
      onVerdict: (v) => verdicts.push(v),
    });
    const agent = startAgent(p.tracer, 'agent');
    tool(p.tracer, 'delete_everything', agent);
    agent.end();
    expect(verdicts).toHaveLength(1);
    const labels = verdicts[0]!.results.map((r) => [r.scorer, r.label]);
    expect(labels).toEqual([
      ['trajectory', 'fail'],
      ['nothing', 'error'],
      ['undefined', 'error'],
      ['weird_label', 'error'],
      ['nan', 'error'],
      ['negative', 'error'],
    ]);
    expect(verdicts[0]!.results[3]!.reason).toContain('label "weird"');
    const exported = byName(await p.flush(), 'invoke_agent agent');
    const events = evaluationEvents(exported);
    expect(events.map((e) => e.attributes?.['gen_ai.evaluation.score.value'])).toEqual([
      expect.any(Number),
      0,
      0,
      0,
      0,
      0,
    ]);
    expect(exported.attributes['toolwatch.evaluation.failed']).toEqual([
      'trajectory',
      'nothing',
      'undefined',
      'weird_label',
      'nan',
      'negative',
    ]);
    await p.provider.shutdown();
  });
});

describe('bound 7: the verdict never pushes the application data out', () => {
  it('puts the verdict on an evaluate span when the agent span is at its event limit', async () => {
    const verdicts: Verdict[] = [];
    const p = pipeline({
      policy: policyOf([{ scorers: [fakeScorer({ name: 'a' }), fakeScorer({ name: 'b' })] }]),
      spanLimits: { eventCountLimit: 128 },
      onVerdict: (v) => verdicts.push(v),
    });
    const agent = startAgent(p.tracer, 'busy');
    for (let i = 0; i < 128; i++) agent.addEvent(`app.event.${i}`);
    tool(p.tracer, 'lookup', agent);
    agent.end();
    const spans = await p.flush();
    const exported = byName(spans, 'invoke_agent busy');
    expect(exported.events).toHaveLength(128);
    expect(exported.events[0]!.name).toBe('app.event.0');
    expect(exported.droppedEventsCount).toBe(0);
    expect(exported.attributes['toolwatch.evaluation.rule']).toBeUndefined();
    const evaluate = byName(spans, 'evaluate busy');
    expect(evaluate.parentSpanContext?.spanId).toBe(exported.spanContext().spanId);
    expect(evaluationEvents(evaluate)).toHaveLength(2);
    expect(evaluate.attributes['toolwatch.evaluation.passed']).toBe(true);
    expect(verdicts).toHaveLength(1);
    await p.provider.shutdown();
  });

  it('puts the verdict on an evaluate span when the agent span is at its attribute limit', async () => {
    const p = pipeline({
      policy: policyOf([{ scorers: [fakeScorer()] }]),
      spanLimits: { attributeCountLimit: 8 },
    });
    const agent = startAgent(p.tracer, 'full');
    for (let i = 0; i < 6; i++) agent.setAttribute(`app.key.${i}`, i);
    tool(p.tracer, 'lookup', agent);
    agent.end();
    const spans = await p.flush();
    const exported = byName(spans, 'invoke_agent full');
    expect(Object.keys(exported.attributes)).toHaveLength(8);
    expect(exported.droppedAttributesCount).toBe(0);
    expect(exported.attributes['app.key.5']).toBe(5);
    expect(byName(spans, 'evaluate full').attributes['toolwatch.evaluation.rule']).toBe('rule0');
    await p.provider.shutdown();
  });
});

describe('bound 8: hostile shapes', () => {
  it('gives the agent an incomplete record when ordinary spans nest deeper than maxSpansPerTrace, and makes no bogus run', async () => {
    const verdicts: Verdict[] = [];
    const p = pipeline({
      policy: policyOf([{ match: { rootOnly: false }, scorers: [expectsLookup()] }]),
      maxSpansPerTrace: 20,
      onVerdict: (v) => verdicts.push(v),
    });
    const agent = startAgent(p.tracer, 'deep');
    const chain = [startPlain(p.tracer, 'GET /0', agent)];
    for (let i = 1; i < 40; i++) chain.push(startPlain(p.tracer, `GET /${i}`, chain[i - 1]));
    tool(p.tracer, 'lookup', chain[39]!);
    for (let i = 39; i >= 0; i--) chain[i]!.end();
    agent.end();
    expect(verdicts.map((v) => v.agent)).toEqual(['deep']);
    expect(verdicts[0]!.results.map((r) => [r.label, r.reason])).toEqual([['skipped', 'incomplete_trace']]);
    await p.provider.shutdown();
  });

  it('keeps a tool span whose clock runs ahead of its agent in that agent run, and says so', async () => {
    const spans = new SpanFactory();
    const agent = spans.make(
      'invoke_agent clerk',
      { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'clerk' },
      { start: 1_000, end: 1_050 },
    );
    // Another process, its clock 1 s ahead, ran the tool: it "starts" after the agent ended.
    const skewed = spans.make(
      'execute_tool delete_everything',
      {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'delete_everything',
        'gen_ai.tool.call.arguments': '{}',
      },
      { parent: agent, start: 2_010, end: 2_020 },
    );
    const policy = definePolicy({
      rules: [{ name: 'r', scorers: [trajectory({ forbiddenTools: ['delete_everything'] })] }],
    });
    const problems: Problem[] = [];
    const verdicts = await evaluateTraces([agent, skewed], policy, { problems });
    expect(verdicts).toHaveLength(1);
    expect(verdicts[0]!.passed).toBe(false);
    expect(verdicts[0]!.results[0]!.detail.errors).toEqual([
      expect.objectContaining({ code: 'forbidden_tool', tool: 'delete_everything' }),
    ]);
    expect(problems.map((p) => p.code)).toContain('clock_skew');
  });

  it.each([
    ['invoke_agent x', { 'gen_ai.operation.name': ['invoke_agent'] }],
    ['invoke_agent x', { 'gen_ai.operation.name': 7 }],
    ['invoke_agent x', { 'gen_ai.operation.name': 'create_agent' }],
    ['execute_tool x', { 'gen_ai.operation.name': ['execute_tool'], 'gen_ai.tool.name': 'x' }],
    ['lookup', { 'openinference.span.kind': 'tool' }],
    ['Agent', { 'openinference.span.kind': 'agent' }],
    ['invoke_agent x', { 'gen_ai.operation.name': 'invoke_agent' }],
    ['execute_tool (merged)', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'x' }],
  ] as const)('the hot path and reconstruction agree on %s %j', (name, attributes) => {
    const role = classify(new SpanFactory().make(name, attributes as Record<string, unknown>));
    const hot = spanRole(name, attributes as never);
    expect(hot === SpanRole.AGENT, 'agent').toBe(role === 'agent');
    expect(hot === SpanRole.TOOL, 'tool').toBe(role === 'tool');
  });

  it('says so when the processor, shut down by one tracer provider, gets spans from another', async () => {
    const warn = vi.spyOn(diag, 'warn');
    const m = createMetrics();
    const first = pipeline({
      policy: policyOf([{ scorers: [fakeScorer()] }]),
      meterProvider: m.meterProvider,
    });
    await first.provider.shutdown();
    // The same processor instance, attached to a second provider.
    const second = new BasicTracerProvider({ spanProcessors: [first.processor] });
    const tracer = second.getTracer('second');
    const agent = startAgent(tracer, 'orphan');
    startTool(tracer, 'lookup', agent).end();
    agent.end();
    const metrics = await m.collect();
    expect(pointValue(metrics.get('toolwatch.processor.spans_dropped'), { reason: 'after_shutdown' })).toBe(
      2,
    );
    expect(warn.mock.calls.map((c) => String(c[0])).some((msg) => msg.includes('after shutdown()'))).toBe(
      true,
    );
    await m.shutdown();
  });
});
