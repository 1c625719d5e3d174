import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type RunningGateway,
  type StartGatewayOptions,
  startGateway,
} from '../../src/gateway/start-gateway.js';
import { protobufOf, recordRun, type Sink, startSink, supportPolicy, until } from './helpers.js';

let sink: Sink;
let running: RunningGateway;
let base: string;

async function start(options: Partial<StartGatewayOptions> = {}) {
  running = await startGateway({
    policy: supportPolicy(),
    forward: [sink.url],
    http: { port: 0 },
    ...options,
  });
  base = `http://${running.addresses.http}`;
}

function post(body: Uint8Array | string, headers: Record<string, string> = {}) {
  return fetch(`${base}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-protobuf', ...headers },
    body,
  });
}

/** No response may carry a stack trace or an internal path. */
async function textOf(res: Response): Promise<string> {
  const text = Buffer.from(await res.arrayBuffer()).toString('latin1');
  expect(text).not.toMatch(/\n\s+at |node_modules|\.ts:\d+/);
  return text;
}

beforeEach(async () => {
  sink = await startSink();
});
afterEach(async () => {
  await running?.close();
  await sink.close();
});

describe('gateway security', () => {
  it('binds to 127.0.0.1 unless told otherwise', async () => {
    await start({ grpc: { port: 0 }, metrics: { port: 0 } });
    expect(running.addresses.http).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(running.addresses.grpc).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(running.addresses.metrics).toMatch(/^127\.0\.0\.1:\d+$/);
  });

  it('requires the bearer token on /v1/traces when set (probes and metrics stay open)', async () => {
    await start({ token: 'tok-123' });
    const body = protobufOf(recordRun(['lookup_account']));
    const none = await post(body);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect(await textOf(none)).toContain('bearer token');
    expect((await post(body, { authorization: 'Bearer tok-12' })).status).toBe(401);
    expect((await post(body, { authorization: 'Basic tok-123' })).status).toBe(401);
    expect((await post(body, { authorization: 'Bearer tok-123' })).status).toBe(200);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/metrics`)).status).toBe(200);
  });

  it('refuses oversize bodies (413), declared or streamed, and gzip bombs by their decompressed size', async () => {
    await start({ maxRequestBytes: 64 * 1024, maxDecompressedBytes: 1024 * 1024 });
    const big = new Uint8Array(65 * 1024);
    expect((await post(big)).status).toBe(413);
    // Streamed without a content-length: counted as it arrives.
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < 20; i++) c.enqueue(new Uint8Array(8 * 1024));
        c.close();
      },
    });
    const streamed = await fetch(`${base}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    const bomb = gzipSync(Buffer.alloc(50 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(64 * 1024);
    const res = await post(bomb, { 'content-encoding': 'gzip' });
    expect(res.status).toBe(413);
    expect(await textOf(res)).toContain('decompressed body over 1048576 bytes');
    expect((await post(protobufOf(recordRun(['lookup_account'])))).status).toBe(200);
  });

  it('answers 415 for unknown content types and encodings, 400 with the reason for undecodable bodies', async () => {
    await start();
    const body = protobufOf(recordRun(['lookup_account']));
    expect((await post(body, { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await post(body, { 'content-encoding': 'br' })).status).toBe(415);
    const cases: [Uint8Array | string, Record<string, string>, RegExp][] = [
      [body.subarray(0, body.length - 3), {}, /truncated/],
      ['{"resourceSpans": [', { 'content-type': 'application/json' }, /body is not JSON/],
      [
        '{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": 5}]}]}]}',
        { 'content-type': 'application/json' },
        /\$\.resourceSpans\[0\]\.scopeSpans\[0\]\.spans\[0\]\.traceId/,
      ],
      [gzipSync(body).subarray(0, 20), { 'content-encoding': 'gzip' }, /not valid gzip/],
    ];
    for (const [payload, headers, reason] of cases) {
      const res = await post(payload, headers);
      expect(res.status).toBe(400);
      expect(await textOf(res)).toMatch(reason);
    }
    expect((await fetch(`${base}/v1/traces`)).status).toBe(405);
    expect((await fetch(`${base}/nope`, { method: 'POST' })).status).toBe(404);
  });

  it('rejects spans with unusable ids through partial_success, keeping the rest', async () => {
    await start({ decisionWaitMs: 50 });
    const spans = recordRun(['lookup_account']);
    const json = JSON.parse(
      Buffer.from(
        (await import('@opentelemetry/otlp-transformer')).JsonTraceSerializer.serializeRequest(spans)!,
      ).toString(),
    );
    json.resourceSpans[0].scopeSpans[0].spans.push({
      traceId: '00000000000000000000000000000000',
      spanId: '0102030405060708',
      name: 'x',
    });
    const res = await post(JSON.stringify(json), { 'content-type': 'application/json' });
    expect(res.status).toBe(200);
    expect(JSON.parse(await textOf(res))).toEqual({
      partialSuccess: {
        rejectedSpans: '1',
        errorMessage: 'span with a trace_id that is not 16 non-zero bytes',
      },
    });
    await until('forwarded', () => sink.spans().length === spans.length);
  });

  const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
  it.skipIf(!hasOpenssl)('serves HTTPS and gRPC over TLS when given a certificate', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolwatch-tls-'));
    try {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-days',
          '1',
          '-subj',
          '/CN=127.0.0.1',
          '-addext',
          'subjectAltName=IP:127.0.0.1',
          '-keyout',
          join(dir, 'key.pem'),
          '-out',
          join(dir, 'cert.pem'),
        ],
        { stdio: 'ignore' },
      );
      await start({
        tls: { cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') },
        grpc: { port: 0 },
        decisionWaitMs: 50,
      });
      const body = protobufOf(recordRun(['lookup_account']));
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpsRequest(
          `https://${running.addresses.http}/v1/traces`,
          {
            method: 'POST',
            ca: readFileSync(join(dir, 'cert.pem')),
            headers: { 'content-type': 'application/x-protobuf' },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end(body);
      });
      expect(status).toBe(200);
      // Plain HTTP to the TLS port is not served.
      await expect(fetch(`http://${running.addresses.http}/healthz`)).rejects.toThrow();
      // gRPC: a TLS client that trusts the certificate gets through, a plaintext one does not.
      const call = (credentials: grpc.ChannelCredentials) =>
        new Promise<grpc.status>((resolve) => {
          const client = new grpc.Client(running.addresses.grpc!, credentials);
          client.makeUnaryRequest(
            '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
            (b: Buffer) => b,
            (b: Buffer) => b,
            Buffer.from(body),
            new grpc.Metadata(),
            { deadline: Date.now() + 5000 },
            (err) => {
              client.close();
              resolve(err ? err.code : grpc.status.OK);
            },
          );
        });
      expect(await call(grpc.credentials.createSsl(readFileSync(join(dir, 'cert.pem'))))).toBe(
        grpc.status.OK,
      );
      expect(await call(grpc.credentials.createInsecure())).not.toBe(grpc.status.OK);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
