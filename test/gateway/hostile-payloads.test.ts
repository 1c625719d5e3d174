import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ToolwatchGateway } from '../../src/gateway/toolwatch-gateway.js';
import { ProtoWriter } from '../../src/otlp/protobuf-wire.js';
import { splitTraceRequest } from '../../src/otlp/trace-request-splice.js';
import { deeplyNestedRequest } from '../fixtures/hostile/deep-request.js';
import { protobufOf, recordRun, type Sink, startSink, supportPolicy, until } from './helpers.js';

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

describe('gateway, requests it could never hold', () => {
  it('refuses for good (not 429-and-retry) a request with more spans than maxHeldSpans', async () => {
    const gw = new ToolwatchGateway({ policy: supportPolicy(), maxHeldSpans: 10 });
    const body = protobufOf(recordRun(['lookup_account'], 10)); // 13 spans
    // Before: "exhausted" with a retry delay, for every retry of this request, forever.
    expect(gw.ingest(body, 'http')).toEqual({
      kind: 'invalid',
      message: 'request has 13 spans, more than the gateway holds (10); send smaller batches',
    });
    expect(gw.registry.value('toolwatch_gateway_spans_rejected_total', { reason: 'request_too_large' })).toBe(
      13,
    );
    expect(gw.ingest(protobufOf(recordRun(['lookup_account'], 2)), 'http').kind).toBe('accepted');
    await gw.close(100);
  });

  it('and a request with more new traces than maxTraces', async () => {
    const gw = new ToolwatchGateway({ policy: supportPolicy(), maxTraces: 2 });
    const body = protobufOf([...recordRun(['a']), ...recordRun(['b']), ...recordRun(['c'])]);
    expect(gw.ingest(body, 'grpc')).toEqual({
      kind: 'invalid',
      message: 'request has 3 traces, more than the gateway buffers (2); send smaller batches',
    });
    await gw.close(100);
  });
});

describe('gateway, a request with very many problems', () => {
  it('accepts 150,000 spans without a name, keeping the last 1,000 problems (the problem list overflowed the stack)', async () => {
    const spans = new ProtoWriter();
    for (let i = 0; i < 150_000; i++) {
      spans.bytes(
        2,
        new ProtoWriter()
          .bytes(1, Buffer.from('0102030405060708090a0b0c0d0e0f10', 'hex'))
          .bytes(2, Buffer.from((i + 1).toString(16).padStart(16, '0'), 'hex'))
          .fixed64(7, 1_000_000n)
          .finish(),
      );
    }
    const body = new ProtoWriter().bytes(1, new ProtoWriter().bytes(2, spans.finish()).finish()).finish();
    const gw = new ToolwatchGateway({ policy: supportPolicy(), maxSpansPerTrace: 200_000 });
    // Before: { kind: 'invalid', message: 'undecodable OTLP protobuf: Maximum call stack size exceeded' }.
    expect(gw.ingest(body, 'http')).toMatchObject({ kind: 'accepted', spans: 150_000 });
    expect(gw.problems).toHaveLength(1000);
    expect(gw.problems[999]).toMatchObject({
      code: 'span_missing_name',
      spanId: (150_000).toString(16).padStart(16, '0'),
    });
    await gw.close(100);
  });
});
