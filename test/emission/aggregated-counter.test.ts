import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  type MetricData,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { AggregatedCounter } from '../../src/emission/aggregated-counter.js';
import { createMetrics } from '../processor/harness.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const KEYS = [
  'gen_ai.evaluation.name',
  'gen_ai.evaluation.score.label',
  'gen_ai.agent.name',
  'toolwatch.rule',
];

function points(metric: MetricData | undefined) {
  return (metric?.dataPoints ?? []).map((p) => ({ attributes: p.attributes, value: p.value as number }));
}

describe('AggregatedCounter', () => {
  it('exports one cumulative sum per attribute set, as a synchronous counter would', async () => {
    const m = createMetrics();
    const meter = m.meterProvider.getMeter('t');
    const counter = new AggregatedCounter(meter, 'c', { unit: '{evaluation}' }, KEYS);
    const reference = meter.createCounter('reference', { unit: '{evaluation}' });
    const agents = ['a', 'b', 'c'];
    for (let i = 0; i < 300; i++) {
      const values = ['trajectory', i % 7 === 0 ? 'fail' : 'pass', agents[i % 3]!, 'refunds'] as const;
      counter.add(1, ...values);
      reference.add(1, Object.fromEntries(KEYS.map((key, k) => [key, values[k]!])));
    }
    const collected = await m.collect();
    const ours = points(collected.get('c'));
    const theirs = points(collected.get('reference'));
    expect(ours).toHaveLength(6);
    expect(ours.reduce((sum, p) => sum + p.value, 0)).toBe(300);
    expect(new Set(ours.map((p) => JSON.stringify(p)))).toEqual(
      new Set(theirs.map((p) => JSON.stringify(p))),
    );
    // Collected again: cumulative, not reset.
    counter.add(2, 'trajectory', 'pass', 'a', 'refunds');
    const again = points((await m.collect()).get('c'));
    expect(again.reduce((sum, p) => sum + p.value, 0)).toBe(302);
    await m.shutdown();
  });

  it('seeds zero series: a full attribute set is the series later adds reach, a partial one stays its own', async () => {
    const m = createMetrics();
    const counter = new AggregatedCounter(m.meterProvider.getMeter('t'), 'c', {}, KEYS);
    const full = {
      'gen_ai.evaluation.name': 's',
      'gen_ai.evaluation.score.label': 'fail',
      'toolwatch.rule': 'r',
      'gen_ai.agent.name': 'x',
    };
    const partial = {
      'gen_ai.evaluation.name': 's',
      'gen_ai.evaluation.score.label': 'fail',
      'toolwatch.rule': 'r',
    };
    counter.seed(full);
    counter.seed(partial);
    counter.seed({ ...partial });
    let data = points((await m.collect()).get('c'));
    expect(data).toHaveLength(2);
    expect(data.every((p) => p.value === 0)).toBe(true);
    counter.add(1, 's', 'fail', 'x', 'r');
    data = points((await m.collect()).get('c'));
    expect(data).toHaveLength(2);
    expect(data.find((p) => p.attributes['gen_ai.agent.name'] === 'x')?.value).toBe(1);
    expect(data.find((p) => p.attributes['gen_ai.agent.name'] === undefined)?.value).toBe(0);
    await m.shutdown();
  });

  it('bounds its series like the SDK: past the limit, adds go to the otel.metric.overflow series and none is lost', async () => {
    const m = createMetrics();
    const counter = new AggregatedCounter(m.meterProvider.getMeter('t'), 'c', {}, KEYS, 'monotonic', 100);
    for (let i = 0; i < 5000; i++) counter.add(1, 's', 'pass', `agent-${i}`, 'r');
    const data = points((await m.collect()).get('c'));
    expect(data).toHaveLength(100);
    const overflow = data.find((p) => p.attributes['otel.metric.overflow'] === true);
    expect(overflow?.value).toBe(5000 - 99);
    expect(data.reduce((sum, p) => sum + p.value, 0)).toBe(5000);
    await m.shutdown();
  });

  it('keeps memory flat under a flood of distinct attribute values (hostile agent names)', () => {
    const m = createMetrics();
    const counter = new AggregatedCounter(m.meterProvider.getMeter('t'), 'c', {}, KEYS);
    const flood = (from: number) => {
      for (let i = from; i < from + 100_000; i++)
        counter.add(1, 's', 'pass', `agent-${i}-${'x'.repeat(40)}`, 'r');
    };
    flood(0);
    gc();
    const before = process.memoryUsage().heapUsed;
    flood(100_000);
    flood(200_000);
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    // 200,000 more distinct names: without the bound ~40 MB of series; with it, nothing held.
    expect(grown).toBeLessThan(4 * 1024 * 1024);
  });

  it('gives delta readers the increments between collections, as a synchronous counter would', async () => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.DELTA);
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    const meterProvider = new MeterProvider({ readers: [reader] });
    const meter = meterProvider.getMeter('t');
    const ours = new AggregatedCounter(meter, 'ours', {}, ['k']);
    const reference = meter.createCounter('reference');
    const collect = async () => {
      exporter.reset();
      await reader.forceFlush();
      const values = new Map<string, number>();
      for (const metrics of exporter.getMetrics())
        for (const scope of metrics.scopeMetrics)
          for (const metric of scope.metrics)
            for (const point of metric.dataPoints)
              values.set(`${metric.descriptor.name}:${point.attributes.k}`, point.value as number);
      return values;
    };
    const add = (value: number, k: string) => {
      ours.add(value, k);
      reference.add(value, { k });
    };
    add(3, 'a');
    add(1, 'b');
    const first = await collect();
    add(2, 'a');
    const second = await collect();
    expect([first.get('ours:a'), first.get('ours:b'), second.get('ours:a')]).toEqual([3, 1, 2]);
    expect([first.get('reference:a'), first.get('reference:b'), second.get('reference:a')]).toEqual([
      3, 1, 2,
    ]);
    // A series with nothing new: the synchronous counter omits it, the observable one reports 0.
    expect(second.get('ours:b') ?? 0).toBe(0);
    expect(second.get('reference:b') ?? 0).toBe(0);
    await meterProvider.shutdown();
  });

  it('reports an up-down counter that goes below zero', async () => {
    const m = createMetrics();
    const counter = new AggregatedCounter(m.meterProvider.getMeter('t'), 'held', {}, [], 'up_down');
    counter.add(3);
    counter.add(-5);
    const data = points((await m.collect()).get('held'));
    expect(data).toEqual([{ attributes: {}, value: -2 }]);
    await m.shutdown();
  });
});
