/**
 * `--headers-timeout` (default 60 s, the Collector's OTLP/HTTP receiver's
 * `read_header_timeout`): a client that connects and sends no headers, or never finishes them,
 * is answered 408 and let go at about that deadline, on both HTTP listeners, while a request
 * whose headers arrived is held to the longer `--request-timeout`. Node alone let a slow-header
 * client hold its connections for up to 90 s (its 60 s deadline, checked every 30 s), and the
 * gateway had no setting for it.
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

describe('the gateway over OTLP/HTTP with --headers-timeout', () => {
  it('answers 408 to headers that do not arrive in time, on both listeners; a request whose headers arrived has until --request-timeout', async () => {
    running = await startGateway({
      policy: supportPolicy(),
      http: { port: 0 },
      metrics: { port: 0 },
      headersTimeoutMs: 1000,
    });
    const { http, metrics } = running.addresses;
    let bodyAnswered = false;
    stall(
      http!,
      'POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: 1000\r\n\r\n',
      10,
    ).then(
      () => (bodyAnswered = true),
      () => (bodyAnswered = true),
    );
    const answers = await Promise.all([
      // Nothing at all, headers that never end, on the OTLP/HTTP listener and on /metrics'.
      stall(http!, '', 0),
      stall(http!, 'POST /v1/traces HTTP/1.1\r\nHost: x\r\n', 0),
      stall(metrics!, 'GET /metrics HTTP/1.1\r\nHost: x\r\n', 0),
    ]);
    for (const answer of answers) {
      expect(answer.line).toBe('HTTP/1.1 408 Request Timeout');
      expect(answer.afterMs).toBeGreaterThanOrEqual(900);
      // Well before Node's own 60 s deadline (90 s with its check period): the bug's answer
      // came after this test's timeout.
      expect(answer.afterMs).toBeLessThan(15_000);
    }
    // The request whose headers arrived is still being received (request timeout 300 s): two
    // more headers deadlines later it has had no answer.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(bodyAnswered).toBe(false);
  }, 60_000);

  it('is held to --request-timeout when that is shorter, and a request sent in time is taken', async () => {
    running = await startGateway({
      policy: supportPolicy(),
      http: { port: 0 },
      headersTimeoutMs: 60_000,
      requestTimeoutMs: 1000,
    });
    const answer = await stall(running.addresses.http!, 'POST /v1/traces HTTP/1.1\r\nHost: x\r\n', 0);
    expect(answer.line).toBe('HTTP/1.1 408 Request Timeout');
    expect(answer.afterMs).toBeLessThan(15_000);
    const res = await fetch(`http://${running.addresses.http}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body: protobufOf(recordRun(['lookup_account'])),
    });
    expect(res.status).toBe(200);
  }, 60_000);
});
