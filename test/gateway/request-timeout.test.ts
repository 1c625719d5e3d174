/**
 * `--request-timeout` on OTLP/HTTP: a sender whose message stops arriving is answered 408 at
 * about that deadline and gives its share of the in-flight budget back. Below 60 s the
 * deadline did not hold: setting `server.requestTimeout` alone left Node's 60 s
 * `headersTimeout` as the deadline and its 30 s check interval, so a 1 s timeout answered
 * after 90 s.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../src/gateway/start-gateway.js';
import { protobufOf, recordRun, supportPolicy } from './helpers.js';
import { stall } from './slow-senders.js';

let running: RunningGateway | undefined;

afterEach(async () => {
  await running?.close();
  running = undefined;
});

describe('the gateway over OTLP/HTTP with --request-timeout', () => {
  it('answers 408 to a body that stops arriving, at the deadline rather than 90 s later', async () => {
    running = await startGateway({ policy: supportPolicy(), http: { port: 0 }, requestTimeoutMs: 1000 });
    const [body, headers] = await Promise.all([
      stall(
        running.addresses.http!,
        'POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: 1000\r\n\r\n',
        10,
      ),
      // Headers that never end are held to the same deadline.
      stall(running.addresses.http!, 'POST /v1/traces HTTP/1.1\r\nHost: x\r\n', 0),
    ]);
    for (const answer of [body, headers]) {
      expect(answer.line).toBe('HTTP/1.1 408 Request Timeout');
      // At least the deadline; well before Node's 60 s headers timeout and 30 s check period
      // (the bug answered after 90 s, beyond this test's timeout).
      expect(answer.afterMs).toBeGreaterThanOrEqual(900);
      expect(answer.afterMs).toBeLessThan(15_000);
    }
  }, 30_000);

  it('still takes a whole request sent in time', async () => {
    running = await startGateway({ policy: supportPolicy(), http: { port: 0 }, requestTimeoutMs: 1000 });
    const res = await fetch(`http://${running.addresses.http}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body: protobufOf(recordRun(['lookup'])),
    });
    expect(res.status).toBe(200);
  });
});
