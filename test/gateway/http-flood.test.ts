import { type ClientRequest, request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../src/gateway/start-gateway.js';
import { protobufOf, recordRun, supportPolicy, until } from './helpers.js';

let running: RunningGateway | undefined;
const open: ClientRequest[] = [];

afterEach(async () => {
  for (const r of open.splice(0)) r.destroy();
  await running?.close();
  running = undefined;
});

interface Answer {
  status?: number;
  retryAfter?: string;
}

/** A POST that declares `length` bytes and sends only `sent` of them, holding the rest back. */
function slowPost(port: number, length: number, sent: number): { req: ClientRequest; answer: Answer } {
  const answer: Answer = {};
  const req = request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/v1/traces',
    headers: { 'content-type': 'application/x-protobuf', 'content-length': String(length) },
  });
  req.on('response', (res) => {
    answer.status = res.statusCode;
    answer.retryAfter = res.headers['retry-after'] as string | undefined;
    res.resume();
  });
  req.on('error', () => undefined);
  req.write(Buffer.alloc(sent));
  open.push(req);
  return { req, answer };
}

describe('gateway HTTP receiver, flooded with bodies', () => {
  it('bounds the body bytes held by requests in flight: over maxInFlightBytes a request gets 429 + Retry-After', async () => {
    running = await startGateway({
      policy: supportPolicy(),
      http: { port: 0 },
      maxRequestBytes: 1024 * 1024,
      maxInFlightBytes: 2 * 1024 * 1024,
      decisionWaitMs: 0,
    });
    const port = Number(running.addresses.http!.split(':').pop());
    const inFlight = () => running!.gateway.registry.value('toolwatch_gateway_http_body_bytes');
    // Two slow senders, each within the request limit, hold 1.6 MB between them.
    slowPost(port, 1_000_000, 800_000);
    await until('the first body', () => inFlight() === 800_000);
    slowPost(port, 1_000_000, 800_000);
    await until('the second body', () => inFlight() === 1_600_000);
    // Before: the third was read too (and a fourth, …): nothing bounded their sum.
    const third = slowPost(port, 1_000_000, 800_000);
    await until('the third to be refused', () => third.answer.status, 5000);
    expect(third.answer).toEqual({ status: 429, retryAfter: '1' });
    expect(inFlight()).toBe(1_600_000);
    expect(
      running.gateway.registry.value('toolwatch_gateway_requests_total', {
        transport: 'http',
        outcome: 'in_flight_full',
      }),
    ).toBe(1);
    for (const r of open.splice(0)) r.destroy();
    await until('the bodies to be let go', () => inFlight() === 0);
    // A whole request is accepted again.
    const body = protobufOf(recordRun(['lookup_account']));
    const ok = await fetch(`http://127.0.0.1:${port}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body,
    });
    expect(ok.status).toBe(200);
    expect(inFlight()).toBe(0);
  });
});
