/**
 * An idle gRPC connection is closed after `idleTimeoutMs`, as an idle HTTP one is. gRPC
 * connections are not capped (grpc-js has no setting), and grpc-js kept a connection that
 * made no call for about 24 days: 1,200 such connections from loopback addresses, no token
 * needed, took every descriptor of a gateway under a 1,024-descriptor limit, and every new
 * OTLP/HTTP sender was reset until they went away.
 */
import { once } from 'node:events';
import { connect } from 'node:http2';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../src/gateway/start-gateway.js';
import { supportPolicy, until } from './helpers.js';

let running: RunningGateway | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

describe('an idle gRPC connection', () => {
  it('is closed after idleTimeoutMs', async () => {
    running = await startGateway({
      policy: supportPolicy(),
      grpc: { port: 0 },
      token: 's3cret',
      idleTimeoutMs: 500,
    });
    const session = connect(`http://${running.addresses.grpc}`);
    session.on('error', () => {});
    await once(session, 'connect');
    let closed = false;
    session.on('close', () => (closed = true));
    // Before: still open after 5 s (and for grpc-js's default of about 24 days).
    await until('closed', () => closed || undefined, 5_000);
    expect(closed).toBe(true);
  });
});
