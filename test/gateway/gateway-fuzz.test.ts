import { gzipSync } from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../src/gateway/start-gateway.js';
import { protobufOf, recordRun, type Sink, startSink, supportPolicy, until } from './helpers.js';

const identity = (b: Buffer) => b;
const EXPORT = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';

let sink: Sink;
let running: RunningGateway;
let client: grpc.Client;

beforeAll(async () => {
  sink = await startSink();
  running = await startGateway({
    policy: supportPolicy(),
    forward: [sink.url],
    http: { port: 0 },
    grpc: { port: 0 },
    decisionWaitMs: 100,
    maxWaitMs: 2000,
    maxRequestBytes: 256 * 1024,
    maxDecompressedBytes: 1024 * 1024,
  });
  client = new grpc.Client(running.addresses.grpc!, grpc.credentials.createInsecure());
});
afterAll(async () => {
  client.close();
  await running.close();
  await sink.close();
});

type Bad = { body: Uint8Array; headers: Record<string, string> };

/** One hostile request of each kind the issue names, chosen by `n`. */
function malformed(n: number, valid: Uint8Array): Bad {
  const rnd = fc.sample(fc.uint8Array({ maxLength: 512 }), { numRuns: 1, seed: n })[0]!;
  const proto = { 'content-type': 'application/x-protobuf' };
  switch (n % 8) {
    case 0:
      return { body: rnd, headers: proto };
    case 1: {
      const m = Uint8Array.from(valid);
      m[n % m.length] ^= 0xff;
      return { body: m.subarray(0, Math.max(1, (n * 7) % m.length)), headers: proto };
    }
    case 2:
      return {
        body: gzipSync(valid).subarray(0, 15 + (n % 20)),
        headers: { ...proto, 'content-encoding': 'gzip' },
      };
    case 3:
      return { body: valid, headers: { 'content-type': n % 2 ? 'text/html' : 'application/grpc' } };
    case 4:
      return { body: new Uint8Array(300 * 1024), headers: proto };
    case 5:
      return {
        body: Buffer.from('{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz"'),
        headers: { 'content-type': 'application/json' },
      };
    case 6:
      return {
        body: Buffer.from(
          JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: 1, spanId: [] }] }] }] }),
        ),
        headers: { 'content-type': 'application/json' },
      };
    default:
      return {
        body: gzipSync(Buffer.alloc(4 * 1024 * 1024)),
        headers: { ...proto, 'content-encoding': 'gzip' },
      };
  }
}

function grpcExport(body: Uint8Array): Promise<grpc.status> {
  return new Promise((resolve) =>
    client.makeUnaryRequest(EXPORT, identity, identity, Buffer.from(body), new grpc.Metadata(), (err) =>
      resolve(err ? err.code : grpc.status.OK),
    ),
  );
}

describe('gateway endpoints under 10,000 malformed requests interleaved with valid traffic', () => {
  it('never crashes, holds nothing afterwards, and judges and forwards every valid trace', async () => {
    const url = `http://${running.addresses.http}/v1/traces`;
    const validTraces: string[] = [];
    const statuses = new Map<string, number>();
    const heapBefore = process.memoryUsage().heapUsed;
    const TOTAL = 10_000;
    let sent = 0;
    const worker = async (w: number) => {
      while (sent < TOTAL) {
        const n = sent++;
        if (n % 100 === 0) {
          // A valid trace every 100 requests, alternating transports.
          const spans = recordRun(['lookup_account', 'delete_account']);
          validTraces.push(spans[0]!.spanContext().traceId);
          const body = protobufOf(spans);
          if ((n / 100) % 2 === 0) {
            const res = await fetch(url, {
              method: 'POST',
              headers: { 'content-type': 'application/x-protobuf' },
              body,
            });
            expect(res.status).toBe(200);
            await res.arrayBuffer();
          } else expect(await grpcExport(body)).toBe(grpc.status.OK);
        }
        const bad = malformed(n, protobufOf(recordRun(['lookup_account'])));
        let key: string;
        if (
          w % 2 === 0 ||
          bad.headers['content-type'] !== 'application/x-protobuf' ||
          bad.headers['content-encoding']
        ) {
          const res = await fetch(url, { method: 'POST', headers: bad.headers, body: bad.body });
          await res.arrayBuffer();
          key = `http ${res.status}`;
        } else key = `grpc ${grpc.status[await grpcExport(bad.body)]}`;
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
      }
    };
    await Promise.all([0, 1, 2, 3].map(worker));
    // Every kind of refusal happened, and nothing answered 500 / INTERNAL.
    expect([...statuses.keys()].sort()).toEqual(
      expect.arrayContaining(['http 400', 'http 413', 'http 415', 'grpc INVALID_ARGUMENT']),
    );
    expect([...statuses.keys()].filter((k) => /500|INTERNAL|UNKNOWN/.test(k))).toEqual([]);

    await until(
      'all valid traces forwarded',
      () => {
        const forwardedAgents = sink
          .decoded()
          .filter((s) => s.name.startsWith('invoke_agent') && s.attributes['toolwatch.keep'] === true);
        const ids = new Set(forwardedAgents.map((s) => s.traceId));
        return validTraces.every((t) => ids.has(t));
      },
      30_000,
    );
    await until('nothing held', () => running.gateway.heldSpans === 0, 10_000);
    const r = running.gateway.registry;
    expect(r.total('toolwatch_gateway_spans_received_total')).toBe(
      r.total('toolwatch_gateway_spans_forwarded_total'),
    );
    expect(running.gateway.problems.length).toBeLessThanOrEqual(1000);
    // Memory: nothing is retained per request (the sink's own copies aside).
    globalThis.gc?.();
    const growthMb = (process.memoryUsage().heapUsed - heapBefore) / 1e6;
    console.log(
      `fuzz: ${TOTAL} malformed + ${validTraces.length} valid requests; statuses ${JSON.stringify(Object.fromEntries(statuses))}; heap growth ${growthMb.toFixed(1)} MB`,
    );
    expect(growthMb).toBeLessThan(200);
  }, 360_000);
});
