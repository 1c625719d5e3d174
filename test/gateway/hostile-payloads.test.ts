import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ToolwatchGateway } from '../../src/gateway/toolwatch-gateway.js';
import { splitTraceRequest } from '../../src/otlp/trace-request-splice.js';
import { deeplyNestedRequest } from '../fixtures/hostile/deep-request.js';
import { type Sink, startSink, supportPolicy, until } from './helpers.js';

let sink: Sink;

beforeEach(async () => {
  sink = await startSink();
});

afterEach(async () => {
  await sink.close();
});

function gateway(): ToolwatchGateway {
  return new ToolwatchGateway({
    policy: supportPolicy(),
    forward: [sink.url],
    decisionWaitMs: 0,
    forwarding: { initialBackoffMs: 20, maxBackoffMs: 100 },
  });
}

describe('gateway, hostile payloads', () => {
  it('accepts valid protobuf whose attribute nests 5,000 levels deep and forwards its bytes as received', async () => {
    const gw = gateway();
    const body = deeplyNestedRequest(5000);
    const sent = splitTraceRequest(body).spans[0]!.bytes;
    // Before: 400 "undecodable OTLP protobuf: Maximum call stack size exceeded", the request lost.
    expect(gw.ingest(body, 'http')).toMatchObject({ kind: 'accepted', spans: 1, rejectedSpans: 0 });
    await gw.tick();
    await until('the span to be forwarded', () => sink.spans().length === 1);
    expect(Buffer.from(sink.spans()[0]!.bytes).equals(Buffer.from(sent))).toBe(true);
    expect(gw.registry.total('toolwatch_gateway_spans_undecodable_total')).toBe(0);
    await gw.close(1000);
    expect(gw.heldSpans).toBe(0);
  });
});
