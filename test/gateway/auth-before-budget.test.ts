/**
 * Authentication comes before any budget, on both transports: a caller without the bearer
 * token never holds a byte of `--max-in-flight-bytes`. The gRPC receiver counted an Export
 * call's frames before its handler checked the token, so eight no-token calls, each sending
 * 6 MiB of a declared 15 MiB message and stalling, held 30 of 32 MiB and an authenticated
 * 4 MB OTLP/HTTP export got 429 until they went away (up to `--request-timeout`).
 */
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../src/gateway/start-gateway.js';
import { protobufOf, recordRun, supportPolicy, until } from './helpers.js';
import { destroySlowSenders, EXPORT, slowCall, slowPost } from './slow-senders.js';

const MiB = 1024 * 1024;
const identity = (b: Buffer) => b;

let running: RunningGateway | undefined;

afterEach(async () => {
  destroySlowSenders();
  await running?.close();
  running = undefined;
});

function grpcExport(address: string, body: Uint8Array, token: string): Promise<grpc.status> {
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return new Promise((resolve) =>
    client.makeUnaryRequest(EXPORT, identity, identity, Buffer.from(body), metadata, (error) => {
      client.close();
      resolve(error?.code ?? grpc.status.OK);
    }),
  );
}

describe('the gateway with a bearer token, under callers without it', () => {
  it('no-token senders stalling mid-message hold none of the in-flight budget: authenticated exports over HTTP and gRPC are accepted', async () => {
    running = await startGateway({
      policy: supportPolicy(),
      http: { port: 0 },
      grpc: { port: 0 },
      token: 's3cret',
      maxRequestBytes: 4 * MiB,
      maxInFlightBytes: 4 * MiB,
    });
    const registry = running.gateway.registry;
    const held = () =>
      registry.value('toolwatch_gateway_grpc_body_bytes') +
      registry.value('toolwatch_gateway_http_body_bytes');
    // Eight calls and eight POSTs without the token (or with a wrong one), each sending 1 MiB
    // of a declared 3 MiB and stalling: 16 MiB against a 4 MiB budget, had they been counted.
    const calls = Array.from({ length: 8 }, (_, i) =>
      slowCall(running!.addresses.grpc!, 3 * MiB, MiB, i % 2 ? { authorization: 'Bearer wrong' } : {}),
    );
    const bodies = Array.from({ length: 8 }, (_, i) =>
      slowPost(running!.addresses.http!, 3 * MiB, MiB, i % 2 ? { authorization: 'Bearer wrong' } : {}),
    );
    // Answered, or (the bug) holding the budget with no answer.
    await until(
      'every no-token sender to be answered',
      () =>
        held() > 0 ||
        (calls.every((c) => c.answer.status !== undefined) && bodies.every((b) => b.status !== undefined)),
    );
    expect(held()).toBe(0);
    expect(calls.map((c) => c.answer.status)).toEqual(calls.map(() => grpc.status.UNAUTHENTICATED));
    expect(calls.map((c) => c.answer.message)).toEqual(calls.map(() => 'missing or wrong bearer token'));
    expect(bodies.map((b) => b.status)).toEqual(bodies.map(() => 401));
    expect(held()).toBe(0);
    // A refused call's stream is reset: what its sender goes on writing is discarded.
    await until('the refused streams to be reset', () => calls.every((c) => c.stream.destroyed));
    // The authenticated senders have the whole budget: 3 MiB over HTTP, then over gRPC.
    const body = protobufOf(recordRun(['lookup_account'], 28_000));
    expect(body.length).toBeGreaterThan(2.5 * MiB);
    expect(body.length).toBeLessThan(4 * MiB);
    const accepted = await fetch(`http://${running.addresses.http}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf', authorization: 'Bearer s3cret' },
      body,
    });
    expect(accepted.status).toBe(200);
    expect(await grpcExport(running.addresses.grpc!, body, 's3cret')).toBe(grpc.status.OK);
    expect(
      registry.value('toolwatch_gateway_requests_total', { transport: 'grpc', outcome: 'in_flight_full' }) +
        registry.value('toolwatch_gateway_requests_total', { transport: 'http', outcome: 'in_flight_full' }),
    ).toBe(0);
    expect(held()).toBe(0);
  }, 120_000);
});
