import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { ToolwatchMetrics } from '../../src/emission/metrics.js';
import type { ScorerResult } from '../../src/types.js';
import { createMetrics, fakeScorer, pointValue, policyOf } from '../processor/harness.js';

function result(scorer: string, label: ScorerResult['label'], score: number): ScorerResult {
  return {
    scorer,
    kind: 'custom',
    passed: label === 'pass',
    score,
    label,
    reason: null,
    digest: 'd',
    detail: {},
  };
}

describe('ToolwatchMetrics', () => {
  it('creates a zero series for every (scorer, label) and (rule, misuse kind) of the policy', async () => {
    const m = createMetrics();
    const policy = policyOf([
      {
        name: 'refunds',
        match: { agent: 'refund-agent', rootOnly: true },
        scorers: [fakeScorer({ name: 'a' }), fakeScorer({ name: 'b' })],
      },
      { name: 'any', match: { agent: 'support-*', rootOnly: true }, scorers: [fakeScorer({ name: 'c' })] },
    ]);
    new ToolwatchMetrics({ meterProvider: m.meterProvider, policy });
    const metrics = await m.collect();
    const evaluations = metrics.get('toolwatch.evaluations')!;
    // 3 scorers × 4 labels.
    expect(evaluations.dataPoints).toHaveLength(12);
    expect(evaluations.dataPoints.every((p) => p.value === 0)).toBe(true);
    expect(
      pointValue(evaluations, {
        'gen_ai.evaluation.name': 'a',
        'gen_ai.evaluation.score.label': 'fail',
        'gen_ai.agent.name': 'refund-agent',
        'toolwatch.rule': 'refunds',
      }),
    ).toBe(0);
    // A glob names no single agent: the series is created without it.
    const glob = evaluations.dataPoints.find((p) => p.attributes['gen_ai.evaluation.name'] === 'c');
    expect(glob?.attributes['gen_ai.agent.name']).toBeUndefined();
    const misuse = metrics.get('toolwatch.tool.misuse')!;
    expect(misuse.dataPoints).toHaveLength(8);
    expect(pointValue(misuse, { 'toolwatch.misuse.kind': 'call_budget', 'toolwatch.rule': 'refunds' })).toBe(
      0,
    );
    await m.shutdown();
  });

  it('counts results, scores, executions, misuse, judge calls, drops and buffered traces', async () => {
    const m = createMetrics();
    const metrics = new ToolwatchMetrics({ meterProvider: m.meterProvider });
    metrics.recordResult(result('s', 'fail', 0.25), 'agent-x', 'r');
    metrics.recordResult(result('s', 'fail', 0.5), 'agent-x', 'r');
    metrics.recordResult(result('s', 'skipped', 0), 'agent-x', 'r');
    metrics.recordToolExecution('lookup', 'error', 'agent-x');
    metrics.recordMisuse('forbidden', 'submit_refund', 'agent-x', 'r');
    metrics.recordJudgeCall('judge', 'skipped_budget');
    metrics.recordSpansDropped('ttl', 7);
    metrics.recordSpansDropped('ttl', 0);
    metrics.tracesBuffered(3);
    metrics.tracesBuffered(-1);
    const all = await m.collect();
    expect(
      pointValue(all.get('toolwatch.evaluations'), {
        'gen_ai.evaluation.score.label': 'fail',
        'gen_ai.agent.name': 'agent-x',
      }),
    ).toBe(2);
    const score = all.get('toolwatch.evaluation.score')!;
    // The skipped result carries no score.
    expect((score.dataPoints[0]!.value as { count: number; sum: number }).count).toBe(2);
    expect((score.dataPoints[0]!.value as { count: number; sum: number }).sum).toBeCloseTo(0.75);
    expect(
      pointValue(all.get('toolwatch.tool.executions'), {
        'gen_ai.tool.name': 'lookup',
        'toolwatch.tool.status': 'error',
      }),
    ).toBe(1);
    expect(pointValue(all.get('toolwatch.tool.misuse'), { 'gen_ai.tool.name': 'submit_refund' })).toBe(1);
    expect(pointValue(all.get('toolwatch.judge.calls'), { outcome: 'skipped_budget' })).toBe(1);
    expect(pointValue(all.get('toolwatch.processor.spans_dropped'), { reason: 'ttl' })).toBe(7);
    expect(all.get('toolwatch.processor.traces_buffered')!.dataPoints[0]!.value).toBe(2);
    expect(all.get('toolwatch.tool.executions')!.descriptor.unit).toBe('{execution}');
    await m.shutdown();
  });

  it('sums what several users of one MeterProvider count, as synchronous counters would', async () => {
    const m = createMetrics();
    const first = new ToolwatchMetrics({ meterProvider: m.meterProvider });
    const second = new ToolwatchMetrics({ meterProvider: m.meterProvider });
    first.recordResult(result('s', 'fail', 0), 'agent-x', 'r');
    second.recordResult(result('s', 'fail', 0), 'agent-x', 'r');
    second.recordResult(result('s', 'fail', 0), 'agent-x', 'r');
    first.tracesBuffered(1);
    second.tracesBuffered(2);
    const all = await m.collect();
    const evaluations = all.get('toolwatch.evaluations')!;
    expect(evaluations.dataPoints).toHaveLength(1);
    expect(pointValue(evaluations, { 'gen_ai.agent.name': 'agent-x' })).toBe(3);
    expect(all.get('toolwatch.processor.traces_buffered')!.dataPoints[0]!.value).toBe(3);
    await m.shutdown();
  });

  it('is a no-op without a meter provider', () => {
    const metrics = new ToolwatchMetrics();
    expect(() => metrics.recordResult(result('s', 'pass', 1), 'a', 'r')).not.toThrow();
  });

  it('cuts agent and tool names from span data to 256 characters, so hostile names cannot grow memory', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const m = createMetrics();
    const metrics = new ToolwatchMetrics({ meterProvider: m.meterProvider });
    // A model can make up tool names, and frameworks record calls to tools the agent lacks:
    // 3,000 distinct 100 KB names (2,000 series kept whole would hold 200 MB).
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 3000; i++) {
      const name = `${i}:${'x'.repeat(100_000)}`;
      metrics.recordToolExecution(name, 'ok', `agent ${name}`);
      metrics.recordMisuse('unexpected', name, 'assistant', 'rule');
      metrics.recordResult(result('s', 'pass', 1), `agent ${name}`, 'rule');
    }
    gc();
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(20 * 1024 * 1024);
    const collected = await m.collect();
    const executions = collected.get('toolwatch.tool.executions')!.dataPoints;
    const names = executions.map((p) => p.attributes['gen_ai.tool.name']).filter((n) => n !== undefined);
    expect(names.length).toBeGreaterThan(1000);
    for (const name of names) {
      expect(String(name)).toHaveLength(256);
      expect(String(name).endsWith('…')).toBe(true);
    }
    expect(pointValue(collected.get('toolwatch.tool.executions'), { 'gen_ai.tool.name': names[0] })).toBe(1);
    for (const point of collected.get('toolwatch.evaluations')!.dataPoints) {
      const agent = point.attributes['gen_ai.agent.name'];
      if (agent !== undefined) expect(String(agent).length).toBeLessThanOrEqual(256);
    }
    await m.shutdown();
  });
});
