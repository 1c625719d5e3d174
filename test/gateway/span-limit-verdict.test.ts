/**
 * A trace judged because it reached `maxSpansPerTrace` is judged on part of it: every later
 * span passes through unjudged (late). A sender that pads a run with filler spans and then
 * sends a forbidden call must not get a passing verdict for that run: its runs get
 * `skipped: incomplete_trace`, as the span processor's do past its span limit.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ToolwatchGateway } from '../../src/gateway/toolwatch-gateway.js';
import { protobufOf, recordRun, type Sink, startSink, supportPolicy } from './helpers.js';

let gateway: ToolwatchGateway | undefined;
let sink: Sink | undefined;
afterEach(async () => {
  await gateway?.close(100);
  await sink?.close();
  gateway = sink = undefined;
});

describe('a trace judged at its span limit', () => {
  it('gets incomplete_trace records, not a verdict judged on the spans before the limit', async () => {
    const clock = { now: 1_000_000 };
    sink = await startSink();
    gateway = new ToolwatchGateway({
      policy: supportPolicy(),
      forward: [sink.url],
      maxSpansPerTrace: 50,
      decisionWaitMs: 1_000,
      maxWaitMs: 60_000,
      now: () => clock.now,
    });
    // lookup_account, delete_account, 47 filler spans, the agent, the root: 51 spans.
    const whole = recordRun(['lookup_account']); // a trace under the limit keeps its verdict
    gateway.ingest(protobufOf(whole), 'http');
    const spans = recordRun(['lookup_account', 'delete_account'], 47);
    const forbidden = spans.filter((s) => s.name === 'execute_tool delete_account');
    const padded = spans.filter((s) => s.name !== 'execute_tool delete_account');
    gateway.ingest(protobufOf(padded), 'http');
    clock.now += 2_000; // both traces are judged in one batch: the whole one quiet, the other full
    await gateway.tick();
    gateway.ingest(protobufOf(forbidden), 'http');
    await gateway.tick();
    const registry = gateway.registry;
    expect(registry.value('toolwatch_gateway_traces_judged_total', { completion: 'span_limit' })).toBe(1);
    expect(registry.value('toolwatch_gateway_traces_judged_total', { completion: 'quiet' })).toBe(1);
    expect(registry.total('toolwatch_gateway_late_spans_total')).toBe(1);
    await gateway.close(10_000);
    const labels = (traceId: string) =>
      sink!
        .decoded()
        .find((s) => s.name === 'invoke_agent support_agent' && s.traceId === traceId)!
        .events!.map((e) => e.attributes['gen_ai.evaluation.score.label']);
    // Before: both scorers passed on the 50 spans the gateway held; the delete was never scored.
    expect(labels(spans[0]!.spanContext().traceId)).toEqual(['skipped', 'skipped']);
    expect(labels(whole[0]!.spanContext().traceId)).toEqual(['pass', 'pass']);
  });
});
