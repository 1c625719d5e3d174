import * as grpc from '@grpc/grpc-js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../src/gateway/start-gateway.js';
import { fields } from '../../src/otlp/protobuf-wire.js';
import { protobufOf, recordRun, type Sink, startSink, supportPolicy, until } from './helpers.js';

const identity = (b: Buffer) => b;
const EXPORT = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';

/** A real grpc-js client, one channel (HTTP/2 connection) per call site that asks for one. */
function exportCall(
  address: string,
  body: Uint8Array,
  metadata = new grpc.Metadata(),
  channelOptions: grpc.ChannelOptions = {},
): Promise<{ error: grpc.ServiceError | null; response?: Buffer }> {
  const client = new grpc.Client(address, grpc.credentials.createInsecure(), channelOptions);
  return new Promise((resolve) => {
    client.makeUnaryRequest(EXPORT, identity, identity, Buffer.from(body), metadata, (error, response) => {
      client.close();
      resolve({ error: error ?? null, ...(response ? { response } : {}) });
    });
  });
}

let sink: Sink;
let running: RunningGateway;

beforeEach(async () => {
  sink = await startSink();
});
afterEach(async () => {
  await running?.close();
  await sink.close();
});

describe('gateway over OTLP/gRPC', () => {
  it('assembles a trace across calls on separate connections (gzip-compressed) and forwards the verdict', async () => {
    running = await startGateway({
      policy: supportPolicy(),
      forward: [sink.url],
      grpc: { port: 0 },
      decisionWaitMs: 150,
    });
    const spans = recordRun(['lookup_account', 'delete_account']);
    for (const span of spans.reverse()) {
      const { error, response } = await exportCall(running.addresses.grpc!, protobufOf([span]), undefined, {
        'grpc.default_compression_algorithm': 2,
      });
      expect(error).toBeNull();
      expect(response!.length).toBe(0);
    }
    await until('forwarded', () => sink.spans().length === spans.length);
    const agent = sink.decoded().find((s) => s.name.startsWith('invoke_agent'))!;
    expect(agent.attributes['toolwatch.keep']).toBe(true);
    expect(
      running.gateway.registry.value('toolwatch_gateway_spans_received_total', { transport: 'grpc' }),
    ).toBe(spans.length);
  });

  it('answers RESOURCE_EXHAUSTED with a RetryInfo detail when full', async () => {
    running = await startGateway({
      policy: supportPolicy(),
      forward: [sink.url],
      grpc: { port: 0 },
      decisionWaitMs: 20,
      maxHeldSpans: 4,
      retryAfterMs: 1500,
    });
    sink.stall = true;
    expect(
      (await exportCall(running.addresses.grpc!, protobufOf(recordRun(['lookup_account'])))).error,
    ).toBeNull();
    const { error } = await exportCall(running.addresses.grpc!, protobufOf(recordRun(['lookup_account'])));
    expect(error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    const details = error!.metadata.get('grpc-status-details-bin')[0] as Buffer;
    // google.rpc.Status { code = 8, details = [Any { type_url, RetryInfo { retry_delay = 1.5 s } }] }
    const status = [...fields(details)];
    expect(status.find(([f]) => f === 1)?.[1]).toBe(8);
    const any = [...fields(status.find(([f]) => f === 3)![1] as Uint8Array)];
    expect(Buffer.from(any[0]![1] as Uint8Array).toString()).toBe('type.googleapis.com/google.rpc.RetryInfo');
    const delay = [...fields([...fields(any[1]![1] as Uint8Array)][0]![1] as Uint8Array)];
    expect(delay).toEqual([
      [1, 1, 0],
      [2, 500_000_000, 0],
    ]);
    sink.release();
  });

  it('refuses a gzip-compressed message that inflates beyond the limit (a gzip bomb over gRPC)', async () => {
    running = await startGateway({
      policy: supportPolicy(),
      grpc: { port: 0 },
      maxRequestBytes: 1024 * 1024,
    });
    const bomb = new Uint8Array(64 * 1024 * 1024); // 64 MiB of zeros: ~64 KiB on the wire
    const heapBefore = process.memoryUsage().heapUsed;
    const { error } = await exportCall(running.addresses.grpc!, bomb, undefined, {
      'grpc.default_compression_algorithm': 2,
    });
    expect(error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(error?.details).toMatch(/decompresses to a size larger than/);
    expect(running.gateway.registry.total('toolwatch_gateway_spans_received_total')).toBe(0);
    console.log(
      `gRPC gzip bomb: refused; heap delta ${((process.memoryUsage().heapUsed - heapBefore) / 1e6).toFixed(1)} MB`,
    );
    // A sane request on the same server still works.
    expect(
      (await exportCall(running.addresses.grpc!, protobufOf(recordRun(['lookup_account'])))).error,
    ).toBeNull();
  });

  it('requires the bearer token when one is set, and says INVALID_ARGUMENT for garbage', async () => {
    running = await startGateway({
      policy: supportPolicy(),
      forward: [sink.url],
      grpc: { port: 0 },
      token: 's3cret',
    });
    const body = protobufOf(recordRun(['lookup_account']));
    expect((await exportCall(running.addresses.grpc!, body)).error?.code).toBe(grpc.status.UNAUTHENTICATED);
    const wrong = new grpc.Metadata();
    wrong.set('authorization', 'Bearer s3cre');
    expect((await exportCall(running.addresses.grpc!, body, wrong)).error?.code).toBe(
      grpc.status.UNAUTHENTICATED,
    );
    const right = new grpc.Metadata();
    right.set('authorization', 'Bearer s3cret');
    expect((await exportCall(running.addresses.grpc!, body, right)).error).toBeNull();
    const garbage = await exportCall(
      running.addresses.grpc!,
      new Uint8Array([0x0a, 0xff, 0xff, 0x01]),
      right,
    );
    expect(garbage.error?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(garbage.error?.details).toMatch(/undecodable OTLP protobuf: truncated/);
  });
});
