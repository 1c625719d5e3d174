import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { DiagLogLevel, diag } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { LiveMisuseMonitor } from '../../src/guard/live-misuse.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { ToolwatchSpanProcessor } from '../../src/processor/toolwatch-span-processor.js';
import { trajectory } from '../../src/scorers/trajectory.js';
import type { MisuseEvent } from '../../src/types.js';
import { createMetrics, fakeScorer, pointValue, policyOf } from '../processor/harness.js';
import { inside, pipeline, startAgent, startPlain, tool } from '../processor/tracing.js';

function monitor() {
  const events: MisuseEvent[] = [];
  const policy = policyOf([
    {
      name: 'refunds',
      match: { agent: 'refund-*', rootOnly: true },
      scorers: [
        trajectory({ forbiddenTools: ['submit_refund'], maxCalls: 5 }),
        trajectory({ name: 'strict', expectedTools: ['get_order'], maxCalls: 2, maxRepeats: 1 }),
      ],
    },
    { name: 'chat', match: { agent: 'chat', rootOnly: true }, scorers: [fakeScorer()] },
  ]);
  return { events, live: new LiveMisuseMonitor(policy, (e) => events.push(e)) };
}

const identity = { attributes: {}, nested: false };

describe('LiveMisuseMonitor', () => {
  it('watches only agents that a rule with trajectory limits matches', () => {
    const { live } = monitor();
    expect(live.enabled).toBe(true);
    expect(live.watch({ ...identity, agent: 'refund-bot' }, 't1', 's1')).toBeDefined();
    expect(live.watch({ ...identity, agent: 'chat' }, 't1', 's1')).toBeUndefined();
    // root_only: a nested run is not watched on its own.
    expect(live.watch({ ...identity, agent: 'refund-bot', nested: true }, 't1', 's1')).toBeUndefined();
    const none = new LiveMisuseMonitor(policyOf([{ scorers: [fakeScorer()] }]), () => {});
    expect(none.enabled).toBe(false);
  });

  it('merges the limits of a rule: union of names, tightest budgets', () => {
    const { live, events } = monitor();
    const agent = live.watch({ ...identity, agent: 'refund-bot' }, 't1', 's1')!;
    live.toolStarted(agent, 'submit_refund', 'x1');
    live.toolStarted(agent, 'get_order', 'x2');
    live.toolStarted(agent, 'weather', 'x3');
    expect(events.map((e) => [e.kind, e.tool, e.span_id])).toEqual([
      ['forbidden', 'submit_refund', 'x1'],
      ['unexpected', 'weather', 'x3'],
    ]);
    events.length = 0;
    live.toolEnded(agent, 'get_order', '{"id":1,"b":2}', 'x2');
    expect(events).toEqual([]);
    // Same arguments in another key order: a repeat (max_repeats 1 allows one call).
    live.toolEnded(agent, 'get_order', { b: 2, id: 1 }, 'x4');
    expect(events.map((e) => e.kind)).toEqual(['repeated_call']);
    expect(events[0]!.detail).toEqual({ count: 2, max_repeats: 1 });
    live.toolEnded(agent, 'get_order', '{"id":2}', 'x5');
    expect(events.map((e) => e.kind)).toEqual(['repeated_call', 'call_budget']);
    expect(events[1]).toMatchObject({
      rule: 'refunds',
      agent: 'refund-bot',
      trace_id: 't1',
      detail: { calls: 3, max_calls: 2 },
    });
  });
});

describe('live repeat counts are bounded', () => {
  it('remembers a bounded number of distinct calls of a session that never ends, and still catches repeats', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const misuses: MisuseEvent[] = [];
    // Out of the sample: no span is held, so only the live counts could grow.
    const processor = new ToolwatchSpanProcessor({
      policy: definePolicy({
        sampling: { ratio: 0 },
        rules: [{ name: 'r', match: { agent: '*' }, scorers: [trajectory({ maxRepeats: 3 })] }],
      }),
      onMisuse: (event) => misuses.push(event),
    });
    const provider = new BasicTracerProvider({ spanProcessors: [processor] });
    const tracer = provider.getTracer('session');
    const pad = 'y'.repeat(1000);
    gc();
    const before = process.memoryUsage().heapUsed;
    const session = startAgent(tracer, 'session');
    // Long arguments (remembered by digest), repeated 4 times: the 4th is one too many.
    for (let i = 0; i < 4; i++) tool(tracer, 'lookup', session, { id: 'first', pad });
    expect(misuses.map((m) => [m.kind, m.detail.count])).toEqual([['repeated_call', 4]]);
    // 50,000 distinct calls: each one's key was kept for the life of the session (58 MB).
    for (let i = 0; i < 50_000; i++) tool(tracer, 'lookup', session, { i, pad });
    gc();
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(12 * 1024 * 1024);
    // A call remembered before the cap still counts; key order does not matter.
    tool(tracer, 'lookup', session, { pad, id: 'first' });
    expect(misuses.map((m) => [m.kind, m.detail.count])).toEqual([
      ['repeated_call', 4],
      ['repeated_call', 5],
    ]);
    session.end();
    await provider.shutdown();
  });
});

describe('live misuse through the processor', () => {
  it('logs each (rule, kind, tool) once through diag, and still counts and delivers every misuse', async () => {
    const warnings: string[] = [];
    const logger = {
      error: () => {},
      warn: (message: string) => warnings.push(message),
      info: () => {},
      debug: () => {},
      verbose: () => {},
    };
    diag.setLogger(logger, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
    try {
      const metrics = createMetrics();
      const misuses: MisuseEvent[] = [];
      const p = pipeline({
        policy: policyOf([
          {
            name: 'refunds',
            match: { agent: 'refund-*', rootOnly: true },
            scorers: [trajectory({ expectedTools: ['get_order'] })],
          },
        ]),
        meterProvider: metrics.meterProvider,
        onMisuse: (event) => misuses.push(event),
      });
      for (let run = 0; run < 5; run++) {
        const agent = startAgent(p.tracer, 'refund-bot');
        tool(p.tracer, 'get_order', agent);
        tool(p.tracer, 'weather', agent);
        if (run === 4) tool(p.tracer, 'news', agent);
        agent.end();
      }
      await p.flush();
      expect(misuses.map((m) => m.tool)).toEqual([
        'weather',
        'weather',
        'weather',
        'weather',
        'weather',
        'news',
      ]);
      const logged = warnings.filter((w) => w.includes('unexpected tool call'));
      expect(logged).toHaveLength(2);
      expect(logged[0]).toContain('weather');
      expect(logged[1]).toContain('news');
      const counter = (await metrics.collect()).get('toolwatch.tool.misuse');
      expect(
        pointValue(counter, { 'gen_ai.tool.name': 'weather', 'toolwatch.misuse.kind': 'unexpected' }),
      ).toBe(5);
      await p.provider.shutdown();
      await metrics.shutdown();
    } finally {
      diag.disable();
    }
  });

  it('logs at most 1,000 distinct misuses, however many distinct tool names an agent invents', async () => {
    let logged = 0;
    const count = () => logged++;
    const none = () => {};
    diag.setLogger(
      { error: none, warn: count, info: none, debug: none, verbose: none },
      { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
    );
    try {
      const misuses: MisuseEvent[] = [];
      const p = pipeline({
        policy: policyOf([
          {
            name: 'refunds',
            match: { agent: 'refund-*', rootOnly: true },
            scorers: [trajectory({ expectedTools: ['get_order'] })],
          },
        ]),
        onMisuse: (event) => misuses.push(event),
      });
      const agent = startAgent(p.tracer, 'refund-bot');
      for (let i = 0; i < 1200; i++) tool(p.tracer, `invented_${i}`, agent);
      agent.end();
      await p.flush();
      expect(misuses).toHaveLength(1200);
      expect(logged).toBe(1000);
      await p.provider.shutdown();
    } finally {
      diag.disable();
    }
  });
});

describe('live misuse out of the sample, below model spans (not followed there)', () => {
  it('finds the agent of a tool below a model span through the model span, beside another open agent', async () => {
    const misuses: MisuseEvent[] = [];
    const p = pipeline({
      policy: definePolicy({
        sampling: { ratio: 0 },
        rules: [{ name: 'r', match: { agent: '*' }, scorers: [trajectory({ forbiddenTools: ['delete'] })] }],
      }),
      onMisuse: (event) => misuses.push(event),
    });
    const root = startPlain(p.tracer, 'GET /tasks');
    const first = startAgent(p.tracer, 'first', root);
    const model = p.tracer.startSpan(
      'chat m',
      { attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'm' } },
      inside(first),
    );
    // Started after `first`'s model span: the agent that started last, and still open.
    const second = startAgent(p.tracer, 'second', root);
    tool(p.tracer, 'delete', model);
    model.end();
    tool(p.tracer, 'delete', second);
    second.end();
    first.end();
    root.end();
    expect(misuses.map((m) => [m.kind, m.tool, m.agent])).toEqual([
      ['forbidden', 'delete', 'first'],
      ['forbidden', 'delete', 'second'],
    ]);
    // Each run is still marked out of the sample.
    const records = p.exporter
      .getFinishedSpans()
      .filter((s) => s.attributes['toolwatch.evaluation.skipped'] === 'sampled_out')
      .map((s) => s.name)
      .sort();
    expect(records).toEqual(['invoke_agent first', 'invoke_agent second']);
    await p.provider.shutdown();
  });
});
