import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { PrometheusRegistry } from '../../src/gateway/prometheus-registry.js';
import { type RunningGateway, startGateway } from '../../src/gateway/start-gateway.js';
import { protobufOf, recordRun, supportPolicy, until } from './helpers.js';

let running: RunningGateway | undefined;
const sockets: Socket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await running?.close();
  running = undefined;
});

interface Connection {
  socket: Socket;
  /** Everything the server sent. */
  received: () => string;
  /** Set once the server closed the connection. */
  closed: () => boolean;
}

/**
 * A raw TCP connection from `from` (a loopback address: each is a client of its own) that
 * sends nothing until told: an idle client, or a flood's.
 */
async function open(address: string, from = '127.0.0.1'): Promise<Connection> {
  const [host, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.split(':').pop())];
  const socket = connect({ port, host, localAddress: from });
  sockets.push(socket);
  let text = '';
  let closed = false;
  socket.on('data', (d) => {
    text += d.toString('latin1');
  });
  socket.on('error', () => undefined);
  socket.on('close', () => {
    closed = true;
  });
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, received: () => text, closed: () => closed };
}

const refusals = (registry: PrometheusRegistry, listener: string, reason: string) =>
  registry.value('toolwatch_gateway_connections_refused_total', { listener, reason });

describe('gateway HTTP listeners, flooded with connections', () => {
  it.each(['http', 'metrics'] as const)(
    'the %s listener keeps at most maxConnections open: one more is closed on arrival, and those within the bound still answer',
    async (listener) => {
      running = await startGateway({
        policy: supportPolicy(),
        http: { port: 0 },
        metrics: { port: 0 },
        maxConnections: 4,
        // One client here: its share is the whole listener.
        maxConnectionsPerClient: 4,
      });
      const address = running.addresses[listener]!;
      const registry = running.gateway.registry;
      const held: Connection[] = [];
      for (let i = 0; i < 4; i++) held.push(await open(address));
      await until('four open', () => registry.value('toolwatch_gateway_connections', { listener }) === 4);
      // Before the bound: a fifth, a thousandth, … each held a file descriptor until it left.
      const excess: Connection[] = [];
      for (let i = 0; i < 20; i++) excess.push(await open(address));
      await until('the excess to be closed', () => excess.every((c) => c.closed()), 5000);
      expect(excess.map((c) => c.received())).toEqual(excess.map(() => ''));
      expect(refusals(registry, listener, 'max_connections')).toBe(20);
      expect(registry.value('toolwatch_gateway_connections', { listener })).toBe(4);
      // Nothing else was refused: not on the other listener, not for the per-client share.
      expect(registry.total('toolwatch_gateway_connections_refused_total')).toBe(20);
      // Connections within the bound still work.
      expect(held.some((c) => c.closed())).toBe(false);
      if (listener === 'http') {
        const body = Buffer.from(protobufOf(recordRun(['lookup_account'])));
        held[0]!.socket.write(
          `POST /v1/traces HTTP/1.1\r\nhost: x\r\ncontent-type: application/x-protobuf\r\ncontent-length: ${body.length}\r\n\r\n`,
        );
        held[0]!.socket.write(body);
      } else held[0]!.socket.write('GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n');
      await until('an answer on a held connection', () => /^HTTP\/1\.1 200 /.test(held[0]!.received()));
      // A place freed is taken again.
      held.pop()!.socket.destroy();
      await until('three open', () => registry.value('toolwatch_gateway_connections', { listener }) === 3);
      const ok = await fetch(`http://${address}/healthz`);
      expect(ok.status).toBe(200);
      expect(refusals(registry, listener, 'max_connections')).toBe(20);
    },
  );

  it('a slow-header and slow-body wave from one client takes its share only: senders from other addresses still get through', async () => {
    running = await startGateway({
      policy: supportPolicy(),
      http: { port: 0 },
      maxConnections: 8,
      // Default share: a quarter of maxConnections, 2 connections per client address.
    });
    const address = running.addresses.http!;
    const registry = running.gateway.registry;
    // The wave, from 127.0.0.1: headers that never end, and bodies that never end.
    const wave: Connection[] = [];
    for (let i = 0; i < 20; i++) {
      const c = await open(address, '127.0.0.1');
      c.socket.write(
        i % 2
          ? 'POST /v1/traces HTTP/1.1\r\nHost: x\r\n'
          : 'POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: 100000\r\n\r\nabc',
      );
      wave.push(c);
    }
    await until('the wave past its share to be closed', () => wave.filter((c) => c.closed()).length === 18);
    expect(refusals(registry, 'http', 'per_client')).toBe(18);
    expect(registry.value('toolwatch_gateway_connections', { listener: 'http' })).toBe(2);
    // Legitimate senders from three other addresses, each with as many connections as its share.
    const body = Buffer.from(protobufOf(recordRun(['lookup_account'])));
    const senders = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];
    const exports = await Promise.all(senders.flatMap((from) => [1, 2].map(() => open(address, from))));
    for (const c of exports) {
      c.socket.write(
        `POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      c.socket.write(body);
    }
    await until('every export to be answered', () => exports.every((c) => /\r\n\r\n/.test(c.received())));
    expect(exports.map((c) => c.received().split('\r\n')[0])).toEqual(exports.map(() => 'HTTP/1.1 200 OK'));
    // The wave's two held connections are still waiting: held to the headers and request
    // timeouts, not let go for the others' sake.
    expect(wave.filter((c) => !c.closed())).toHaveLength(2);
    expect(refusals(registry, 'http', 'max_connections')).toBe(0);
    // A client over its share is refused even when the listener has room.
    for (const c of exports.slice(2)) c.socket.destroy();
    await until(
      'room on the listener',
      () => registry.value('toolwatch_gateway_connections', { listener: 'http' }) === 4,
    );
    const third = await open(address, '127.0.0.2');
    await until('a third connection from 127.0.0.2 to be closed', () => third.closed());
    expect(third.received()).toBe('');
    expect(refusals(registry, 'http', 'per_client')).toBe(19);
  });
});
