import { once } from 'node:events';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startGateway } from '../../src/gateway/start-gateway.js';
import { supportPolicy } from './helpers.js';

/** Whether a TCP port on loopback can be listened on now. */
async function free(port: number): Promise<boolean> {
  const server = createServer();
  server.listen(port, '127.0.0.1');
  try {
    await once(server, 'listening');
    server.close();
    return true;
  } catch {
    return false;
  }
}

describe('startGateway that cannot start', () => {
  it('closes the listeners it had opened when a later one fails (a port in use)', async () => {
    // The HTTP listener takes a free port; gRPC is then told to use the same one.
    const blocker = createServer().listen(0, '127.0.0.1');
    await once(blocker, 'listening');
    const port = (blocker.address() as { port: number }).port;
    blocker.close();
    await once(blocker, 'close');
    const started = startGateway({
      policy: supportPolicy(),
      http: { port },
      grpc: { port },
    });
    await expect(started).rejects.toThrow(/EADDRINUSE|No address added/);
    // Before: the HTTP listener stayed open, so `toolwatch serve` reported "cannot start" and
    // never exited.
    expect(await free(port)).toBe(true);
  });
});
