/**
 * docs/gateway.md, "No silent loss": "An endpoint's answer is read up to 64 KiB." The committed test
 * (`forwarder-upstream.test.ts`) only checks that an endless answer is not read to 64 MiB.
 * What the forwarder reads of an answer shows in what it makes of it: the spans an endpoint
 * refuses through OTLP partial success, in a 200 answer, are dead-lettered. An OTLP/JSON answer
 * whose `partialSuccess` closes its last byte is understood whole at 65,536 bytes; one byte
 * longer, its end is not read, the JSON cannot be parsed and the batch counts as forwarded.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Forwarder } from '../../src/gateway/forwarder.js';

const KiB = 1024;

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

/** An endpoint answering 200 with a JSON partial success of 2 refused spans, padded to `bytes`. */
async function endpoint(bytes: number): Promise<string> {
  const head = '{"pad":"';
  const tail = '","partialSuccess":{"rejectedSpans":2,"errorMessage":"bad"}}';
  const body = Buffer.from(head + 'x'.repeat(bytes - head.length - tail.length) + tail);
  expect(body.length).toBe(bytes);
  server = createServer(async (req, res) => {
    for await (const _ of req);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
    // In small writes: the answer arrives in many chunks, as from a slow endpoint.
    for (let i = 0; i < body.length; i += 4 * KiB) res.write(body.subarray(i, i + 4 * KiB));
    res.end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
}

/** Sends one 5-span batch; resolves with what the forwarder counted. */
async function forwardTo(url: string): Promise<string[]> {
  const log: string[] = [];
  const forwarder = new Forwarder(
    { endpoints: [url], maxAttempts: 1 },
    {
      forwarded: (_e, spans) => log.push(`forwarded ${spans}`),
      retried: (_e, reason) => log.push(`retried ${reason}`),
      deadLettered: (_e, spans, reason) => log.push(`dead-lettered ${spans} ${reason}`),
      settled: () => {},
    },
  );
  forwarder.send(new Uint8Array([0x0a, 0x00]), 5);
  await forwarder.idle();
  await forwarder.close(0);
  return log;
}

describe('docs/gateway.md: an endpoint answer is read up to 64 KiB', () => {
  it('an answer of exactly 64 KiB is read whole: its partial success is counted', async () => {
    expect(await forwardTo(await endpoint(64 * KiB))).toEqual([
      'forwarded 3',
      'dead-lettered 2 partial_success',
    ]);
  });

  it('an answer one byte longer is cut: its end (the partial success) is not read', async () => {
    expect(await forwardTo(await endpoint(64 * KiB + 1))).toEqual(['forwarded 5']);
  });
});
