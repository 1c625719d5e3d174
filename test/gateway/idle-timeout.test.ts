/**
 * `--idle-timeout` (default 60 s, the Collector's OTLP/HTTP receiver's `keepalive.idle_timeout`):
 * a kept-alive connection stays usable between exports. Node's own default closes it after
 * 5 s idle, shorter than the exporters' idle timeouts (Go's, the Collector's: 90 s), so an
 * export written to a connection as the gateway closed it failed (ECONNRESET).
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../src/gateway/start-gateway.js';
import { protobufOf, recordRun, supportPolicy } from './helpers.js';

const running: RunningGateway[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.close()));
});

/** One keep-alive connection; `send` writes a request and resolves with its whole response. */
function connection(address: string) {
  const [host, port] = address.split(':');
  const socket: Socket = connect(Number(port), host);
  let buffered = Buffer.alloc(0);
  let waiting: ((response: { status: string; body: string }) => void) | undefined;
  let closedAt: number | undefined;
  const take = () => {
    const end = buffered.indexOf('\r\n\r\n');
    if (waiting === undefined || end < 0) return;
    const head = buffered.subarray(0, end).toString('latin1');
    let body = '';
    let at = end + 4;
    if (/transfer-encoding: *chunked/i.test(head)) {
      for (;;) {
        const line = buffered.indexOf('\r\n', at);
        if (line < 0) return;
        const size = Number.parseInt(buffered.subarray(at, line).toString('latin1'), 16);
        if (buffered.length < line + 2 + size + 2) return;
        body += buffered.subarray(line + 2, line + 2 + size).toString('latin1');
        at = line + 2 + size + 2;
        if (size === 0) break;
      }
    } else {
      const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (buffered.length < at + length) return;
      body = buffered.subarray(at, at + length).toString('latin1');
      at += length;
    }
    buffered = buffered.subarray(at);
    const done = waiting;
    waiting = undefined;
    done({ status: head.split('\r\n')[0]!, body });
  };
  socket.on('data', (d: Buffer) => {
    buffered = Buffer.concat([buffered, d]);
    take();
  });
  socket.on('error', () => {});
  socket.on('close', () => {
    closedAt = performance.now();
  });
  return {
    socket,
    closedAt: () => closedAt,
    send(path: string, body?: Uint8Array) {
      return new Promise<{ status: string; body: string }>((resolve) => {
        waiting = resolve;
        const head = body
          ? `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: ${body.length}\r\n\r\n`
          : `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`;
        socket.write(head);
        if (body) socket.write(body);
      });
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the gateway keeps idle HTTP connections', () => {
  it('by default past Node’s 5 s: a second export 6 s after the first goes on the same connection', async () => {
    const r = await startGateway({ policy: supportPolicy(), http: { port: 0 }, metrics: { port: 0 } });
    running.push(r);
    const traces = connection(r.addresses.http!);
    const metrics = connection(r.addresses.metrics!);
    expect((await traces.send('/v1/traces', protobufOf(recordRun(['lookup_account'])))).status).toBe(
      'HTTP/1.1 200 OK',
    );
    expect((await metrics.send('/metrics')).status).toBe('HTTP/1.1 200 OK');
    await sleep(6_000);
    expect(traces.closedAt(), 'the OTLP/HTTP listener closed the idle connection').toBeUndefined();
    expect(metrics.closedAt(), 'the metrics listener closed the idle connection').toBeUndefined();
    expect((await traces.send('/v1/traces', protobufOf(recordRun(['lookup_account'])))).status).toBe(
      'HTTP/1.1 200 OK',
    );
    const scrape = await metrics.send('/metrics');
    expect(scrape.status).toBe('HTTP/1.1 200 OK');
    // Both exports arrived over the one connection, and it is still the only one.
    expect(scrape.body).toContain('toolwatch_gateway_connections{listener="http"} 1');
    expect(
      r.gateway.registry.value('toolwatch_gateway_requests_total', {
        transport: 'http',
        outcome: 'accepted',
      }),
    ).toBe(2);
    traces.socket.destroy();
    metrics.socket.destroy();
  }, 30_000);

  it('does not hold up close(): idle connections are closed as the gateway stops', async () => {
    const r = await startGateway({ policy: supportPolicy(), http: { port: 0 }, metrics: { port: 0 } });
    const traces = connection(r.addresses.http!);
    const metrics = connection(r.addresses.metrics!);
    await traces.send('/v1/traces', protobufOf(recordRun(['lookup_account'])));
    await metrics.send('/metrics');
    const started = performance.now();
    await r.close();
    // Well under the 60 s idle timeout (and the 30 s drain timeout): nothing waited for them.
    expect(performance.now() - started).toBeLessThan(10_000);
    await sleep(100);
    expect(traces.closedAt()).toBeDefined();
    expect(metrics.closedAt()).toBeDefined();
  }, 30_000);

  it('for --idle-timeout, then closes them', async () => {
    const r = await startGateway({
      policy: supportPolicy(),
      http: { port: 0 },
      metrics: { port: 0 },
      idleTimeoutMs: 1_000,
    });
    running.push(r);
    const traces = connection(r.addresses.http!);
    const metrics = connection(r.addresses.metrics!);
    await traces.send('/v1/traces', protobufOf(recordRun(['lookup_account'])));
    const answered = performance.now();
    await metrics.send('/metrics');
    await sleep(4_000);
    for (const c of [traces, metrics]) {
      const closedAt = c.closedAt();
      expect(closedAt, 'still open 4 s after a 1 s idle timeout').toBeDefined();
      expect(closedAt! - answered).toBeGreaterThanOrEqual(900);
    }
  }, 30_000);
});
