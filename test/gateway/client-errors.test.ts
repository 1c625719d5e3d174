/**
 * Requests pipelined on one HTTP/1.1 connection are answered per request, in order, even when
 * bytes that are not HTTP follow them: the requests' responses first, then the error for the
 * bytes after them, then the connection closes. Node answered 400 at once, before the
 * response being prepared, so the client read 400 for an export the gateway had accepted.
 */
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../src/gateway/start-gateway.js';
import { protobufOf, recordRun, supportPolicy, until } from './helpers.js';

let running: RunningGateway | undefined;

afterEach(async () => {
  await running?.close();
  running = undefined;
});

/** Writes `bytes` at once on a new connection; resolves with the status lines read until it closed. */
function exchange(address: string, bytes: Buffer): Promise<string[]> {
  const [host, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.split(':').pop())];
  return new Promise((resolve) => {
    const socket = connect(port, host);
    let text = '';
    socket.on('data', (d) => {
      text += d.toString('latin1');
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(text.match(/HTTP\/1\.1 \d{3} [^\r]*/g) ?? []));
    socket.write(bytes);
  });
}

const exportRequest = (body: Uint8Array) =>
  Buffer.concat([
    Buffer.from(
      `POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: ${body.length}\r\n\r\n`,
    ),
    body,
  ]);

describe('the gateway over OTLP/HTTP, with junk pipelined after requests', () => {
  it('answers the accepted export 200 first, then 400 for the junk after it', async () => {
    running = await startGateway({ policy: supportPolicy(), http: { port: 0 } });
    const spans = recordRun(['lookup_account']);
    const answers = await exchange(
      running.addresses.http!,
      Buffer.concat([exportRequest(protobufOf(spans)), Buffer.from('GARBAGE \x01\x02 junk\r\n\r\n')]),
    );
    expect(answers).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 400 Bad Request']);
    const registry = running.gateway.registry;
    await until(
      'the spans to be counted',
      () => registry.total('toolwatch_gateway_spans_received_total') > 0,
    );
    expect(registry.total('toolwatch_gateway_spans_received_total')).toBe(spans.length);
  });

  it('answers every pipelined request in order before the error, whatever the error (400, 431)', async () => {
    running = await startGateway({ policy: supportPolicy(), http: { port: 0 }, metrics: { port: 0 } });
    const body = protobufOf(recordRun(['lookup_account']));
    const probe = Buffer.from('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    const junk = Buffer.from('\x16\x03\x01 not http\r\n\r\n');
    expect(
      await exchange(running.addresses.http!, Buffer.concat([probe, exportRequest(body), probe, junk])),
    ).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK', 'HTTP/1.1 200 OK', 'HTTP/1.1 400 Bad Request']);
    // Headers over Node's limit after a whole request: 431, after the request's answer.
    const huge = Buffer.from(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(await exchange(running.addresses.metrics!, Buffer.concat([probe, huge]))).toEqual([
      'HTTP/1.1 200 OK',
      'HTTP/1.1 431 Request Header Fields Too Large',
    ]);
  });

  it('answers junk with nothing before it at once, as before', async () => {
    running = await startGateway({ policy: supportPolicy(), http: { port: 0 } });
    expect(await exchange(running.addresses.http!, Buffer.from('junk\r\n\r\n'))).toEqual([
      'HTTP/1.1 400 Bad Request',
    ]);
  });
});
