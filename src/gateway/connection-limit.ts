import type { Server } from 'node:net';
import type { PrometheusRegistry } from './prometheus-registry.js';

/**
 * Caps a listener's open connections (Node's `server.maxConnections`: a connection over the
 * cap is closed as soon as it is accepted). Every connection holds a file descriptor, and the
 * process's descriptors are shared with the gRPC listener, `/metrics` and the forwarder's own
 * connections: without a cap, a flood of idle connections to one listener could leave the
 * gateway unable to forward what it accepted. Counts the open and the refused per listener.
 */
export function limitConnections(
  server: Server,
  listener: 'http' | 'metrics',
  max: number,
  registry: PrometheusRegistry,
): void {
  server.maxConnections = max;
  const open = registry.upDown('toolwatch_gateway_connections', 'Open connections, by listener.');
  const refused = registry.counter(
    'toolwatch_gateway_connections_refused_total',
    'Connections closed on arrival because the listener had --max-connections open, by listener.',
  );
  open({ listener }, 0);
  refused({ listener }, 0);
  server.on('connection', (socket: { once(event: 'close', f: () => void): void }) => {
    open({ listener }, 1);
    socket.once('close', () => open({ listener }, -1));
  });
  server.on('drop', () => refused({ listener }));
}
