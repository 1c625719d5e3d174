/**
 * docs/processor.md bounds table, "metric series": "each counter holds at most 2,000 attribute sets (the
 * SDK's default limit); further ones are summed into one `otel.metric.overflow: true` series,
 * nothing is lost". `aggregated-counter.test.ts` builds the counter with a limit of 100, so the
 * default itself had no test. Here the series come from agent names in span data, through the
 * public path: a `ToolwatchSpanProcessor` on a real tracer provider, a real `MeterProvider`
 * and reader. A synchronous SDK counter on the same provider, given the same attribute sets,
 * is the reference for "as the SDK does by default": the overflow series is one of the 2,000
 * (the SDK keeps 1,999 attribute sets and the overflow series).
 */
import type { MetricData } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { ToolwatchSpanProcessor } from '../../src/processor/toolwatch-span-processor.js';
import { createMetrics, fakeScorer, policyOf } from '../processor/harness.js';
import { startAgent, tool } from '../processor/tracing.js';

const OVERFLOW = 'otel.metric.overflow';

function summary(metric: MetricData | undefined) {
  const points = metric?.dataPoints ?? [];
  const overflow = points.filter((p) => p.attributes[OVERFLOW] === true);
  return {
    series: points.length,
    named: new Set(
      points
        .filter((p) => p.attributes[OVERFLOW] === undefined)
        .map((p) => p.attributes['gen_ai.agent.name']),
    ).size,
    overflowSeries: overflow.length,
    overflowValue: overflow.reduce((sum, p) => sum + (p.value as number), 0),
    total: points.reduce((sum, p) => sum + (p.value as number), 0),
  };
}

/** `count` agents, each with one tool call, through a fresh processor; collected once. */
async function agents(count: number) {
  const m = createMetrics();
  const processor = new ToolwatchSpanProcessor({
    policy: policyOf([{ match: { agent: '*', rootOnly: true }, scorers: [fakeScorer()] }]),
    meterProvider: m.meterProvider,
  });
  const provider = new BasicTracerProvider({ spanProcessors: [processor] });
  const tracer = provider.getTracer('series');
  // The SDK's own synchronous counter, given the same attribute sets in the same collection
  // interval (its limit applies per interval: collected in between, it would keep more).
  const reference = m.meterProvider.getMeter('reference').createCounter('reference');
  for (let i = 0; i < count; i++) {
    const name = `agent-${i}`;
    const agent = startAgent(tracer, name);
    tool(tracer, 'lookup', agent);
    agent.end();
    reference.add(1, {
      'gen_ai.tool.name': 'lookup',
      'toolwatch.tool.status': 'ok',
      'gen_ai.agent.name': name,
    });
  }
  const metrics = await m.collect();
  await provider.shutdown();
  await m.shutdown();
  // `toolwatch.tool.executions` (tool, status, agent) has no zero series from the policy:
  // every attribute set in it is one agent's.
  return { ours: summary(metrics.get('toolwatch.tool.executions')), sdk: summary(metrics.get('reference')) };
}

describe('docs/processor.md: a counter holds at most 2,000 attribute sets by default, as the SDK does', () => {
  it('1,999 agent names: each its own series, no overflow', async () => {
    const { ours, sdk } = await agents(1_999);
    expect(ours).toEqual({ series: 1_999, named: 1_999, overflowSeries: 0, overflowValue: 0, total: 1_999 });
    expect(sdk).toEqual(ours);
  });

  it('2,000 agent names: 2,000 series, the last of them the overflow series (the SDK counts it in its limit)', async () => {
    const { ours, sdk } = await agents(2_000);
    expect(ours).toEqual({ series: 2_000, named: 1_999, overflowSeries: 1, overflowValue: 1, total: 2_000 });
    expect(sdk).toEqual(ours);
  });

  it('2,501 agent names: still 2,000 series, the overflow series sums the rest, nothing is lost', async () => {
    const { ours, sdk } = await agents(2_501);
    expect(ours).toEqual({
      series: 2_000,
      named: 1_999,
      overflowSeries: 1,
      overflowValue: 502,
      total: 2_501,
    });
    expect(sdk).toEqual(ours);
  });
});
