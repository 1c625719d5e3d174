import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { ToolwatchGateway } from '../../src/gateway/toolwatch-gateway.js';
import { supportPolicy } from './helpers.js';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer('held-bytes-test');

/** One trace: a root span carrying `size` characters of attribute, and a child. */
function bigTrace(size: number): Uint8Array {
  exporter.reset();
  const root = tracer.startSpan('POST /upload', { attributes: { 'http.request.body': 'x'.repeat(size) } });
  root.end();
  return ProtobufTraceSerializer.serializeRequest(exporter.getFinishedSpans())!;
}

describe('gateway, spans held by their size', () => {
  it('refuses (429) once the held spans’ bytes would pass maxHeldBytes, however few spans that is', async () => {
    const gw = new ToolwatchGateway({
      policy: supportPolicy(),
      maxHeldBytes: 250_000,
      decisionWaitMs: 60_000,
      maxWaitMs: 60_000,
    });
    const first = bigTrace(150_000);
    expect(gw.ingest(first, 'http').kind).toBe('accepted');
    // Counted as received: the span and its share of resource and scope (the request's own
    // framing, a few bytes, is not held).
    expect(gw.heldBytes).toBeGreaterThan(first.length - 32);
    expect(gw.heldBytes).toBeLessThanOrEqual(first.length);
    expect(gw.registry.value('toolwatch_gateway_bytes_held')).toBe(gw.heldBytes);
    // Before: accepted too, and a third, …: 200,000 held spans of 150 KB were ~30 GB.
    const second = gw.ingest(bigTrace(150_000), 'http');
    expect(second).toMatchObject({ kind: 'exhausted', retryAfterMs: 1000 });
    expect(gw.ready).toBe(true);
    expect(gw.ingest(bigTrace(10), 'http').kind).toBe('accepted');
    await gw.close(100);
    expect(gw.heldBytes).toBe(0);
    expect(gw.heldSpans).toBe(0);
  });

  it('refuses for good a single request larger than maxHeldBytes', async () => {
    const gw = new ToolwatchGateway({ policy: supportPolicy(), maxHeldBytes: 100_000 });
    const result = gw.ingest(bigTrace(150_000), 'grpc');
    expect(result.kind).toBe('invalid');
    expect((result as { message: string }).message).toMatch(
      /^request holds \d+ bytes of spans, more than the gateway holds \(100000\); send smaller batches$/,
    );
    await gw.close(100);
  });
});
