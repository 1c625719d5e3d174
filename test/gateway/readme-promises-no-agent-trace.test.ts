/**
 * docs/gateway.md, "When a trace is judged": "A trace whose root arrived and that has no agent span is
 * forwarded after the decision wait (nothing to judge)." No committed test sends the gateway
 * a trace without an agent span and looks at when it leaves. Here a real endpoint receives
 * what the gateway forwards; the decision wait is driven by the gateway's own `now` option
 * (no sleeping), at its default (2 s).
 */
import { context, SpanKind, trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ToolwatchGateway } from '../../src/gateway/toolwatch-gateway.js';
import { protobufOf, type Sink, startSink, supportPolicy } from './helpers.js';

const gateways: ToolwatchGateway[] = [];
const sinks: Sink[] = [];
afterEach(async () => {
  for (const g of gateways.splice(0)) await g.close(100);
  for (const s of sinks.splice(0)) await s.close();
});

/** An HTTP request handled with two database calls: three spans, no agent, the root last. */
function plainTrace() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('plain');
  const root = tracer.startSpan('GET /orders', {
    kind: SpanKind.SERVER,
    attributes: { 'http.route': '/orders' },
  });
  const inside = trace.setSpan(context.active(), root);
  tracer.startSpan('SELECT orders', { attributes: { 'db.system': 'postgresql' } }, inside).end();
  tracer.startSpan('SELECT refunds', { attributes: { 'db.system': 'postgresql' } }, inside).end();
  root.end();
  return exporter.getFinishedSpans();
}

async function gatewayAt(clock: { now: number }) {
  const sink = await startSink();
  sinks.push(sink);
  const gw = new ToolwatchGateway({ policy: supportPolicy(), forward: [sink.url], now: () => clock.now });
  gateways.push(gw);
  const judged = (completion: string) =>
    gw.registry.value('toolwatch_gateway_traces_judged_total', { completion });
  return { gw, sink, judged };
}

describe('docs/gateway.md: a trace with a root and no agent span is forwarded after the decision wait', () => {
  it('held for 2 s after its last span, then forwarded whole, with no verdict', async () => {
    const clock = { now: 1_000_000 };
    const { gw, sink, judged } = await gatewayAt(clock);
    const spans = plainTrace();
    expect(gw.ingest(protobufOf(spans), 'http').kind).toBe('accepted');
    clock.now += 1_990;
    await gw.tick();
    expect(judged('quiet')).toBe(0);
    expect(gw.heldSpans).toBe(3);
    clock.now += 20;
    await gw.tick();
    expect(judged('quiet')).toBe(1);
    await vi.waitFor(() => expect(sink.spans()).toHaveLength(3), { timeout: 5_000 });
    expect(
      sink
        .decoded()
        .map((s) => s.name)
        .sort(),
    ).toEqual(['GET /orders', 'SELECT orders', 'SELECT refunds']);
    expect(gw.registry.value('toolwatch_gateway_spans_forwarded_total', { endpoint: sink.url })).toBe(3);
    expect(gw.registry.total('toolwatch_gateway_verdicts_total')).toBe(0);
    await vi.waitFor(() => expect(gw.heldSpans).toBe(0), { timeout: 5_000 });
  });

  it('without its root it is not: held until --max-wait (30 s) after its first span', async () => {
    const clock = { now: 1_000_000 };
    const { gw, sink, judged } = await gatewayAt(clock);
    const rootless = plainTrace().filter((s) => s.parentSpanContext !== undefined);
    expect(rootless).toHaveLength(2);
    expect(gw.ingest(protobufOf(rootless), 'http').kind).toBe('accepted');
    clock.now += 2_010;
    await gw.tick();
    expect(judged('quiet')).toBe(0);
    expect(gw.heldSpans).toBe(2);
    clock.now += 30_000 - 2_010;
    await gw.tick();
    expect(judged('max_wait')).toBe(1);
    await vi.waitFor(() => expect(sink.spans()).toHaveLength(2), { timeout: 5_000 });
  });
});
