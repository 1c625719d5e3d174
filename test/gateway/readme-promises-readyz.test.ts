/**
 * docs/gateway.md, the gateway's metrics: "`/readyz`, 503 while draining or above 90 % of
 * `--max-held-spans` or of `--max-held-bytes`". The only committed check reads `/readyz` at
 * 60 % of the span limit (200); nothing held the gateway above 90 % of either limit, or asked
 * during a drain. A load balancer relies on this to move traffic away before requests are
 * refused with 429.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../src/gateway/start-gateway.js';
import { protobufOf, recordRun, type Sink, startSink, supportPolicy, until } from './helpers.js';

let sink: Sink;
const running: RunningGateway[] = [];

async function start(options: Partial<Parameters<typeof startGateway>[0]> = {}): Promise<RunningGateway> {
  const gateway = await startGateway({
    policy: supportPolicy(),
    forward: [sink.url],
    http: { port: 0 },
    // Traces stay buffered (held) for the whole test unless it closes the gateway.
    decisionWaitMs: 60_000,
    maxWaitMs: 60_000,
    forwarding: { initialBackoffMs: 20, maxBackoffMs: 100 },
    ...options,
  });
  running.push(gateway);
  return gateway;
}

const readyz = async (g: RunningGateway) => (await fetch(`http://${g.addresses.http}/readyz`)).status;

async function post(g: RunningGateway, body: Uint8Array): Promise<number> {
  const res = await fetch(`http://${g.addresses.http}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-protobuf' },
    body,
  });
  await res.arrayBuffer();
  return res.status;
}

/** The spans of one agent run without its root, so the trace waits (held) for max_wait. */
function rootless(extraSpans: number) {
  return protobufOf(recordRun(['lookup_account'], extraSpans).slice(0, -1));
}

beforeEach(async () => {
  sink = await startSink();
});
afterEach(async () => {
  sink.release();
  for (const g of running.splice(0)) await g.close();
  await sink.close();
});

describe('docs/gateway.md: /readyz', () => {
  it('answers 200 at 85 % of maxHeldSpans and 503 at 95 %, while requests are still accepted', async () => {
    const g = await start({ maxHeldSpans: 20 });
    expect(await readyz(g)).toBe(200);
    expect(await post(g, rootless(15))).toBe(200); // 17 spans
    expect(g.gateway.heldSpans).toBe(17);
    expect(await readyz(g)).toBe(200);
    expect(await post(g, rootless(0))).toBe(200); // 2 more: 19 of 20
    expect(g.gateway.heldSpans).toBe(19);
    expect(await readyz(g)).toBe(503);
  });

  it('answers 200 at 85 % of maxHeldBytes and 503 at 95 %', async () => {
    const body = rootless(15);
    const probe = await start();
    expect(await post(probe, body)).toBe(200);
    const bytes = probe.gateway.heldBytes;
    expect(bytes).toBeGreaterThan(0);
    // The same spans held by gateways whose byte limit puts them at 85 % and 95 % of it.
    const roomy = await start({ maxHeldBytes: Math.ceil(bytes / 0.85) });
    const tight = await start({ maxHeldBytes: Math.ceil(bytes / 0.95) });
    expect(await post(roomy, body)).toBe(200);
    expect(await post(tight, body)).toBe(200);
    expect([roomy.gateway.heldBytes, tight.gateway.heldBytes]).toEqual([bytes, bytes]);
    expect(await readyz(roomy)).toBe(200);
    expect(await readyz(tight)).toBe(503);
  });

  it('is not ready while draining (503, or refused: the listener stops accepting first)', async () => {
    const g = await start();
    expect(await post(g, rootless(0))).toBe(200);
    expect(await readyz(g)).toBe(200);
    expect(g.gateway.ready).toBe(true);
    // Forwarding stalls, so the drain lasts until the sink is released.
    sink.stall = true;
    const closing = g.close();
    await until('draining', () => sink.bodies.length === 0 && g.gateway.heldSpans > 0 && !g.gateway.ready);
    expect([503, 'refused']).toContain(await readyz(g).catch(() => 'refused'));
    sink.release();
    await closing;
    expect(sink.spans()).toHaveLength(2);
  });
});
