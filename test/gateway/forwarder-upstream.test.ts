import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Forwarder, type ForwarderEvents } from '../../src/gateway/forwarder.js';

let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

async function upstream(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  server = createServer(async (req, res) => {
    for await (const _ of req);
    answer(req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
}

function recorder() {
  const log: string[] = [];
  let settled = 0;
  const events: ForwarderEvents = {
    forwarded: (_e, spans) => log.push(`forwarded ${spans}`),
    retried: (_e, reason) => log.push(`retried ${reason}`),
    deadLettered: (_e, spans, reason) => log.push(`dead-lettered ${spans} ${reason}`),
    settled: (spans) => {
      settled += spans;
    },
  };
  return { log, events, settled: () => settled };
}

describe('Forwarder against a broken upstream', () => {
  it('reads a bounded part of an answer whose body never ends, and counts the batch forwarded once', async () => {
    let written = 0;
    let requests = 0;
    const url = await upstream((_req, res) => {
      requests++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' });
      const chunk = Buffer.alloc(64 * 1024);
      // Writes as fast as the gateway reads, until it stops reading.
      const pump = () => {
        while (!res.destroyed && written < 512 * 1024 * 1024) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
      };
      res.on('close', () => undefined);
      pump();
    });
    const r = recorder();
    const forwarder = new Forwarder(
      { endpoints: [url], timeoutMs: 2000, maxAttempts: 2, initialBackoffMs: 10 },
      r.events,
    );
    forwarder.send(new Uint8Array([0x0a, 0x00]), 3);
    await forwarder.idle();
    // Before: the answer was buffered whole: 512 MB here, held until the timeout.
    expect(r.log).toEqual(['forwarded 3']);
    expect(requests).toBe(1);
    expect(r.settled()).toBe(3);
    expect(written).toBeLessThan(64 * 1024 * 1024);
    await forwarder.close(100);
  });
});

describe('Forwarder and OTLP partial success', () => {
  it('dead-letters the spans an endpoint refused in a 200 answer (protobuf and JSON), and forwards the rest', async () => {
    // ExportTraceServiceResponse { partial_success { rejected_spans: 2, error_message: "bad" } }
    const partial = Buffer.from([0x0a, 0x07, 0x08, 0x02, 0x12, 0x03, 0x62, 0x61, 0x64]);
    let json = false;
    const url = await upstream((_req, res) => {
      if (json) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ partialSuccess: { rejectedSpans: '2', errorMessage: 'bad' } }));
      } else {
        res.writeHead(200, { 'content-type': 'application/x-protobuf' });
        res.end(partial);
      }
    });
    for (const asJson of [false, true]) {
      json = asJson;
      const r = recorder();
      const forwarder = new Forwarder({ endpoints: [url] }, r.events);
      forwarder.send(new Uint8Array([0x0a, 0x00]), 5);
      await forwarder.idle();
      // Before: "forwarded 5" — the refused spans were counted as delivered.
      expect(r.log).toEqual(['forwarded 3', 'dead-lettered 2 partial_success']);
      expect(r.settled()).toBe(5);
      await forwarder.close(100);
    }
  });
});

describe('Forwarder deadlines', () => {
  it('a drain deadline beyond what setTimeout holds (2^31 ms) waits for the upstream instead of firing at once', async () => {
    const waiting: ServerResponse[] = [];
    const url = await upstream((_req, res) => waiting.push(res));
    const r = recorder();
    const forwarder = new Forwarder({ endpoints: [url], timeoutMs: 3_000_000_000 }, r.events);
    forwarder.send(new Uint8Array([0x0a, 0x00]), 1);
    while (waiting.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    const closing = forwarder.close(3_000_000_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Before: Node fired both timers after 1 ms: the request was aborted and the batch
    // dead-lettered ("shutdown") while the upstream was still answering.
    expect(r.log).toEqual([]);
    waiting[0]!.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    await closing;
    expect(r.log).toEqual(['forwarded 1']);
  });
});

describe('Forwarder and credentials in the endpoint URL', () => {
  it('sends them as Basic authorization and keeps them out of the endpoint label', async () => {
    const seen: Array<string | undefined> = [];
    const url = await upstream((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
    const withCredentials = url.replace('http://', 'http://collector:s3cr%40t@');
    const endpoints: string[] = [];
    const r = recorder();
    const forwarder = new Forwarder(
      { endpoints: [withCredentials], maxAttempts: 2, initialBackoffMs: 10 },
      {
        ...r.events,
        forwarded: (endpoint, spans) => {
          endpoints.push(endpoint);
          r.events.forwarded(endpoint, spans);
        },
      },
    );
    forwarder.send(new Uint8Array([0x0a, 0x00]), 2);
    await forwarder.idle();
    // Before: fetch refuses a URL with credentials, so every attempt failed as "network" and
    // the batch was dead-lettered; the password was also in the endpoint label on /metrics.
    expect(r.log).toEqual(['forwarded 2']);
    expect(seen).toEqual([`Basic ${Buffer.from('collector:s3cr@t').toString('base64')}`]);
    expect(endpoints).toEqual([url]);
    await forwarder.close(100);
  });
});

describe('Forwarder and redirects', () => {
  it('dead-letters a batch answered with a redirect instead of following it as a GET without the body', async () => {
    const seen: string[] = [];
    const url = await upstream((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      if (req.url === '/v1/traces') res.writeHead(301, { location: '/moved' }).end();
      else res.writeHead(200).end();
    });
    const r = recorder();
    const forwarder = new Forwarder({ endpoints: [url] }, r.events);
    forwarder.send(new Uint8Array([0x0a, 0x00]), 4);
    await forwarder.idle();
    // Before: "forwarded 4" — the spans went nowhere (GET /moved, no body).
    expect(r.log).toEqual(['dead-lettered 4 http_301']);
    expect(seen).toEqual(['POST /v1/traces']);
    await forwarder.close(100);
  });
});

describe('Forwarder and an upstream slower than the timeout', () => {
  it('sends a batch once and counts it unconfirmed (timeout), not re-sent nor dead-lettered', async () => {
    let received = 0;
    const url = await upstream((_req, res) => {
      received++;
      // Has the whole batch, answers after the gateway stopped waiting.
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(), 1_500);
    });
    const r = recorder();
    const unconfirmed: string[] = [];
    const forwarder = new Forwarder(
      { endpoints: [url], timeoutMs: 300, maxAttempts: 3, initialBackoffMs: 10 },
      { ...r.events, unconfirmed: (_e, spans, reason) => unconfirmed.push(`${spans} ${reason}`) },
    );
    forwarder.send(new Uint8Array([0x0a, 0x00]), 3);
    await forwarder.idle();
    // Before: 3 requests (the upstream got the batch 3 times), then "dead-lettered 3
    // retries_exhausted_timeout" for spans it had.
    expect(received).toBe(1);
    expect(r.log).toEqual([]);
    expect(unconfirmed).toEqual(['3 timeout']);
    expect(r.settled()).toBe(3);
    await forwarder.close(100);
  });

  it.each([
    ['an upstream not reading it (32 MiB cannot all be written)', 'http', 32 * 1024 * 1024],
    ['a TLS handshake that never completes (the body waits in Node)', 'https', 2],
  ])('still retries a timeout before the body was handed over: %s', async (_what, scheme, size) => {
    // Accepts the connection and never reads from it.
    const silent = createNetServer((socket) => socket.pause());
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const url = `${scheme}://127.0.0.1:${(silent.address() as AddressInfo).port}/v1/traces`;
    const r = recorder();
    const unconfirmed: string[] = [];
    const forwarder = new Forwarder(
      { endpoints: [url], timeoutMs: 300, maxAttempts: 2, initialBackoffMs: 10 },
      { ...r.events, unconfirmed: (_e, spans, reason) => unconfirmed.push(`${spans} ${reason}`) },
    );
    try {
      forwarder.send(new Uint8Array(size as number), 2);
      await forwarder.idle();
      expect(r.log).toEqual(['retried timeout', 'dead-lettered 2 retries_exhausted_timeout']);
      expect(unconfirmed).toEqual([]);
    } finally {
      await forwarder.close(100);
      silent.close();
    }
  });
});
