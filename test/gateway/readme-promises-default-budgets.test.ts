/**
 * The gateway's documented default budgets, each at its real default (the option or flag left
 * unset); the other tests set them small:
 * - "The request bytes held by all export calls being received or decoded … are bounded by
 *   `--max-in-flight-bytes` (256 MiB) … one budget for HTTP and gRPC together … Beyond it a
 *   request gets 429 + `Retry-After`, a gRPC call `RESOURCE_EXHAUSTED` with RetryInfo";
 * - "The held spans' bytes as received … `--max-held-bytes` (default 128 MiB) … A single
 *   request with … more bytes than `--max-held-bytes` … is refused for good, 400 /
 *   `INVALID_ARGUMENT` (`_spans_rejected_total{reason="request_too_large"}`)";
 * - "SIGTERM/SIGINT: stop accepting, judge every buffered trace as it is, flush forwarding (up
 *   to `--drain-timeout`, default 30 s), exit 0", and "Every accepted span is forwarded, or
 *   counted as dead-lettered or dropped with a reason" — through `startGateway` and through
 *   `toolwatch serve`.
 * Request limits that would refuse first (`--max-request-bytes`, 16 MiB) are raised
 * explicitly; the budget under test never is.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import * as grpc from '@grpc/grpc-js';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../src/gateway/start-gateway.js';
import { splitTraceRequest } from '../../src/otlp/trace-request-splice.js';
import { protobufOf, recordRun, type Sink, startSink, supportPolicy, until } from './helpers.js';
import { destroySlowSenders, EXPORT, posts, sessions, slowCall, slowPost } from './slow-senders.js';

const MiB = 1024 * 1024;
const identity = (b: Buffer) => b;
const root = new URL('../../', import.meta.url).pathname;

const running: RunningGateway[] = [];
afterEach(async () => {
  destroySlowSenders();
  for (const r of running.splice(0)) await r.close();
});

function exportCall(address: string, body: Uint8Array): Promise<grpc.ServiceError | null> {
  const client = new grpc.Client(address, grpc.credentials.createInsecure(), {
    'grpc.max_send_message_length': -1,
  });
  return new Promise((resolve) => {
    client.makeUnaryRequest(EXPORT, identity, identity, Buffer.from(body), new grpc.Metadata(), (error) => {
      client.close();
      resolve(error ?? null);
    });
  });
}

describe('docs/gateway.md: --max-in-flight-bytes, default 256 MiB, one budget for HTTP and gRPC', () => {
  it('bodies held in flight add up to exactly 256 MiB across both transports; one byte more is refused (429 + Retry-After, RESOURCE_EXHAUSTED)', async () => {
    const r = await startGateway({
      policy: supportPolicy(),
      http: { port: 0 },
      grpc: { port: 0 },
      // Above the 64 MiB bodies sent here (the default, 16 MiB, would answer 413 first).
      maxRequestBytes: 64 * MiB + 64,
    });
    running.push(r);
    const registry = r.gateway.registry;
    const http = () => registry.value('toolwatch_gateway_http_body_bytes');
    const rpc = () => registry.value('toolwatch_gateway_grpc_body_bytes');
    const refused = (transport: string) =>
      registry.value('toolwatch_gateway_requests_total', { transport, outcome: 'in_flight_full' });
    const body = Buffer.alloc(64 * MiB);
    // Three slow HTTP senders and one slow gRPC sender, each 64 MiB in and not finished.
    const senders = [1, 2, 3].map(() => slowPost(r.addresses.http!, 64 * MiB + 1, body));
    await until(
      '192 MiB of HTTP bodies',
      () => http() === 192 * MiB || senders.some((a) => a.status !== undefined),
      30_000,
    );
    expect(senders.map((a) => a.status)).toEqual([undefined, undefined, undefined]);
    // The gRPC frame's 5-byte prefix counts: 64 MiB in all.
    const { answer: call } = slowCall(r.addresses.grpc!, 64 * MiB, body.subarray(0, 64 * MiB - 5));
    await until('64 MiB of a gRPC message', () => rpc() === 64 * MiB || call.status !== undefined, 30_000);
    expect(call.status).toBeUndefined();
    // At the default exactly: nothing was refused, nobody was answered.
    expect(http() + rpc()).toBe(256 * MiB);
    expect(refused('http') + refused('grpc')).toBe(0);
    expect([...senders, call].map((a) => a.status)).toEqual([undefined, undefined, undefined, undefined]);
    // One byte more over HTTP: 429 + Retry-After.
    const late = slowPost(r.addresses.http!, 1024, Buffer.alloc(1));
    await until('the HTTP sender one byte past to be answered', () => late.status, 10_000);
    expect(late).toEqual({ status: 429, retryAfter: '1' });
    // A gRPC call's first frame: RESOURCE_EXHAUSTED, naming the default.
    const { answer: lateCall } = slowCall(r.addresses.grpc!, 1024, 0);
    await until('the gRPC call past the budget to be answered', () => lateCall.status, 10_000);
    expect(lateCall.status).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(lateCall.message).toBe('gateway busy: request bodies in flight over 268435456 bytes; retry later');
    expect([refused('http'), refused('grpc')]).toEqual([1, 1]);
    await until('the refused calls to be let go', () => http() + rpc() === 256 * MiB);
    // Once the senders let go, a whole request is accepted again.
    for (const p of posts.splice(0)) p.destroy();
    for (const s of sessions.splice(0)) s.destroy();
    await until('the bodies to be let go', () => http() + rpc() === 0, 10_000);
    const res = await fetch(`http://${r.addresses.http}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body: protobufOf(recordRun(['lookup_account'])),
    });
    expect(res.status).toBe(200);
  }, 60_000);
});

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer('default-budgets-test');

/** One span whose bytes as the gateway holds them (with resource and scope) are exactly `held`. */
function requestHolding(held: number): Uint8Array {
  const make = (attribute: number) => {
    exporter.reset();
    tracer.startSpan('POST /upload', { attributes: { 'http.request.body': 'x'.repeat(attribute) } }).end();
    return ProtobufTraceSerializer.serializeRequest(exporter.getFinishedSpans())!;
  };
  const heldBy = (bytes: Uint8Array) =>
    splitTraceRequest(bytes).spans.reduce((n, s) => n + s.receivedBytes, 0);
  // The attribute's length varint is four bytes from 2 MiB to 256 MiB: the rest is constant.
  const probe = make(64 * MiB);
  const bytes = make(64 * MiB + held - heldBy(probe));
  expect(heldBy(bytes)).toBe(held);
  return bytes;
}

describe('docs/gateway.md: --max-held-bytes, default 128 MiB', () => {
  it('a request holding 128 MiB + 1 byte of spans is refused for good (400, INVALID_ARGUMENT, request_too_large); one of exactly 128 MiB is accepted', async () => {
    const r = await startGateway({
      policy: supportPolicy(),
      http: { port: 0 },
      grpc: { port: 0 },
      // Above the ~128 MiB requests sent here (the default, 16 MiB, would refuse first).
      maxRequestBytes: 192 * MiB,
      // Held until the test ends, not judged and let go 2 s after it arrived.
      decisionWaitMs: 600_000,
    });
    running.push(r);
    const registry = r.gateway.registry;
    const tooLarge = () =>
      registry.value('toolwatch_gateway_spans_rejected_total', { reason: 'request_too_large' });
    const message =
      'request holds 134217729 bytes of spans, more than the gateway holds (134217728); send smaller batches';
    let over: Uint8Array | undefined = requestHolding(128 * MiB + 1);
    const res = await fetch(`http://${r.addresses.http}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf', connection: 'close' },
      body: over,
    });
    expect(res.status).toBe(400);
    // A google.rpc.Status: the message is in it as UTF-8.
    expect(Buffer.from(await res.arrayBuffer()).toString('latin1')).toContain(message);
    expect(tooLarge()).toBe(1);
    const error = await exportCall(r.addresses.grpc!, over);
    expect(error?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(error?.details).toBe(message);
    expect(tooLarge()).toBe(2);
    over = undefined;
    expect(r.gateway.heldBytes).toBe(0);
    // Exactly at the default: accepted, and held whole.
    // Building it blocks the event loop for seconds on a loaded machine: a kept-alive connection
    // would pass Node's 5 s keep-alive timeout meanwhile and be reset as the request is written.
    const at = requestHolding(128 * MiB);
    const ok = await fetch(`http://${r.addresses.http}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf', connection: 'close' },
      body: at,
    });
    expect(ok.status).toBe(200);
    expect(registry.value('toolwatch_gateway_spans_received_total', { transport: 'http' })).toBe(1);
    expect(r.gateway.heldBytes).toBe(128 * MiB);
    expect(tooLarge()).toBe(2);
  }, 60_000);
});

describe.concurrent('docs/gateway.md: --drain-timeout, default 30 s, towards an endpoint that never answers', () => {
  /** A run posted to a gateway that holds it (a ten-minute decision wait) until it drains. */
  async function postRun(address: string): Promise<number> {
    const spans = recordRun(['lookup_account']);
    const res = await fetch(`http://${address}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body: protobufOf(spans),
    });
    expect(res.status).toBe(200);
    return spans.length;
  }

  it('startGateway: close() waits for forwarding until 30 s have passed, then counts what is left (reason shutdown) and resolves', async () => {
    const sink: Sink = await startSink();
    sink.stall = true;
    try {
      const r = await startGateway({
        policy: supportPolicy(),
        http: { port: 0 },
        forward: [sink.url],
        decisionWaitMs: 600_000,
        // One attempt outlasts the drain: the 30 s deadline, not the forward timeout, ends it.
        forwarding: { timeoutMs: 120_000 },
      });
      const registry = r.gateway.registry;
      const spans = await postRun(r.addresses.http!);
      const unconfirmed = () =>
        registry.value('toolwatch_gateway_spans_unconfirmed_total', {
          endpoint: sink.url,
          reason: 'shutdown',
        });
      const started = Date.now();
      let closedAfter: number | undefined;
      const closed = r.close().then(() => {
        closedAfter = Date.now() - started;
      });
      // 29 s in: still waiting for the endpoint, nothing given up.
      await new Promise((resolve) => setTimeout(resolve, 29_000));
      expect(closedAfter).toBeUndefined();
      expect(r.gateway.heldSpans).toBe(spans);
      expect(unconfirmed()).toBe(0);
      await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 11_000))]);
      console.log(`startGateway close() gave up forwarding after ${closedAfter} ms`);
      expect(closedAfter, 'close() still waiting 40 s in').toBeDefined();
      expect(closedAfter).toBeGreaterThanOrEqual(29_000);
      expect(closedAfter).toBeLessThanOrEqual(40_000);
      // The endpoint read the batch and never answered: it may have it, so the spans are
      // counted unconfirmed — not dead-lettered, which said they were lost.
      expect(unconfirmed()).toBe(spans);
      expect(registry.total('toolwatch_gateway_spans_dead_lettered_total')).toBe(0);
      expect(registry.total('toolwatch_gateway_spans_forwarded_total')).toBe(0);
      expect(r.gateway.heldSpans).toBe(0);
    } finally {
      await sink.close();
    }
  }, 60_000);

  it('toolwatch serve: on SIGTERM it exits 0 once the one attempt timed out (10 s, not re-sent), the spans counted unconfirmed', async () => {
    const sink: Sink = await startSink();
    sink.stall = true;
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/cli/main.ts',
        'serve',
        '--policy',
        'examples/policies/support.yaml',
        '--http',
        '127.0.0.1:0',
        '--grpc',
        'off',
        '--metrics',
        'off',
        '--forward',
        sink.url,
        '--decision-wait',
        '600000',
      ],
      { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += String(d);
    });
    try {
      const port = await until(
        'listening',
        () => /listening http 127\.0\.0\.1:(\d+)/.exec(stderr)?.[1],
        20_000,
      );
      const spans = await postRun(`127.0.0.1:${port}`);
      const started = Date.now();
      child.kill('SIGTERM');
      const exited = once(child, 'exit');
      const [code] = await Promise.race([
        exited,
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error('still draining 40 s after SIGTERM')), 40_000),
        ),
      ]);
      const after = Date.now() - started;
      console.log(`toolwatch serve exited ${after} ms after SIGTERM`);
      expect(code).toBe(0);
      // The forward timeout (10 s) ends the one attempt; re-sending a batch the endpoint read
      // would deliver it twice, so nothing is left to wait 30 s for.
      expect(after).toBeGreaterThanOrEqual(9_000);
      expect(after).toBeLessThan(29_000);
      expect(stderr).toContain(
        `spans received ${spans}, forwarded 0, dead-lettered 0, dropped 0, unconfirmed ${spans}`,
      );
    } finally {
      child.kill('SIGKILL');
      await sink.close();
    }
  }, 60_000);
});
