import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
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

/** A raw TCP connection that sends nothing until told: an idle client, or a flood's. */
async function open(address: string): Promise<Connection> {
  const [host, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.split(':').pop())];
  const socket = connect(port, host);
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

describe('gateway HTTP listeners, flooded with connections', () => {
  it.each(['http', 'metrics'] as const)(
    'the %s listener keeps at most maxConnections open: one more is closed on arrival, and those within the bound still answer',
    async (listener) => {
      running = await startGateway({
        policy: supportPolicy(),
        http: { port: 0 },
        metrics: { port: 0 },
        maxConnections: 4,
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
      expect(registry.value('toolwatch_gateway_connections_refused_total', { listener })).toBe(20);
      expect(registry.value('toolwatch_gateway_connections', { listener })).toBe(4);
      // The other listener is not affected.
      const other = listener === 'http' ? 'metrics' : 'http';
      expect(registry.value('toolwatch_gateway_connections_refused_total', { listener: other })).toBe(0);
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
      expect(registry.value('toolwatch_gateway_connections_refused_total', { listener })).toBe(20);
    },
  );
});
