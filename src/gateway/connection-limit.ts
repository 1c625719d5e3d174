import type { Server, Socket } from 'node:net';
import type { PrometheusRegistry } from './prometheus-registry.js';

export interface ConnectionLimits {
  /** Open connections the listener keeps. */
  max: number;
  /** Open connections it keeps from one client address. */
  perClient: number;
}

/**
 * Caps a listener's open connections, in all (Node's `server.maxConnections`) and per client
 * address; a connection over either cap is closed as soon as it is accepted. Every connection
 * holds a file descriptor, and the process's descriptors are shared with the gRPC listener,
 * `/metrics` and the forwarder's own connections: without the overall cap, a flood of idle
 * connections could leave the gateway unable to forward what it accepted. Without the share,
 * one client holding every place (slow headers, slow bodies) refused every other sender until
 * its connections timed out. Counts the open and the refused (by reason) per listener.
 */
export function limitConnections(
  server: Server,
  listener: 'http' | 'metrics',
  limits: ConnectionLimits,
  registry: PrometheusRegistry,
): void {
  server.maxConnections = limits.max;
  const open = registry.upDown('toolwatch_gateway_connections', 'Open connections, by listener.');
  const refused = registry.counter(
    'toolwatch_gateway_connections_refused_total',
    'Connections closed on arrival, by listener and reason: max_connections (the listener had ' +
      '--max-connections open) or per_client (the client address had --max-connections-per-client open).',
  );
  open({ listener }, 0);
  refused({ listener, reason: 'max_connections' }, 0);
  refused({ listener, reason: 'per_client' }, 0);
  const byClient = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const client = socket.remoteAddress ?? '';
    const held = byClient.get(client) ?? 0;
    if (held >= limits.perClient) {
      refused({ listener, reason: 'per_client' });
      socket.destroy();
      return;
    }
    byClient.set(client, held + 1);
    open({ listener }, 1);
    socket.once('close', () => {
      open({ listener }, -1);
      const left = byClient.get(client)! - 1;
      if (left === 0) byClient.delete(client);
      else byClient.set(client, left);
    });
  });
  server.on('drop', () => refused({ listener, reason: 'max_connections' }));
}
