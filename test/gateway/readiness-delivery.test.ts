/**
 * Readiness follows delivery: with the forward endpoint down, or answering 429 or 500, a
 * gateway that reports ready keeps receiving spans it can only dead-letter. After
 * `unreadyAfterFailures` (5) failed attempts in a row /readyz answers 503, and the first
 * success — an empty export probes the endpoint while nothing else is sent — makes it ready.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { GatewayLogRecord } from '../../src/gateway/gateway-log.js';
import { type RunningGateway, startGateway } from '../../src/gateway/start-gateway.js';
import { protobufOf, recordRun, supportPolicy, until } from './helpers.js';

/** A real OTLP/HTTP endpoint answering `status` (200: accepted) and counting empty bodies. */
async function upstream(port = 0) {
  const state = { status: 500, requests: 0, empty: 0, server: undefined as unknown as Server, url: '' };
  state.server = createServer(async (req, res) => {
    let size = 0;
    for await (const chunk of req) size += (chunk as Buffer).length;
    state.requests++;
    if (size === 0) state.empty++;
    res.writeHead(state.status, { 'content-type': 'application/x-protobuf' }).end();
  });
  state.server.listen(port, '127.0.0.1');
  await once(state.server, 'listening');
  state.url = `http://127.0.0.1:${(state.server.address() as AddressInfo).port}/v1/traces`;
  return state;
}

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function gatewayTo(url: string, maxAttempts = 1) {
  const records: GatewayLogRecord[] = [];
  const g: RunningGateway = await startGateway({
    policy: supportPolicy(),
    forward: [url],
    http: { port: 0 },
    decisionWaitMs: 20,
    // One attempt per batch: each trace posted is one failed attempt.
    forwarding: { initialBackoffMs: 10, maxBackoffMs: 50, maxAttempts },
    logger: (r) => records.push(r),
  });
  cleanup.push(() => g.close());
  const readyz = async () => (await fetch(`http://${g.addresses.http}/readyz`)).status;
  const post = async () => {
    const res = await fetch(`http://${g.addresses.http}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body: protobufOf(recordRun(['lookup_account'])),
    });
    await res.arrayBuffer();
    expect(res.status).toBe(200);
  };
  const metric = (name: string) =>
    g.gateway.registry.value(name, name.includes('forward') ? { endpoint: url } : {});
  return { g, readyz, post, metric, records };
}

describe('readiness follows delivery', () => {
  it.each([500, 429])(
    'an endpoint answering %i: 503 after 5 failed attempts, 200 again once it accepts',
    async (status) => {
      const up = await upstream();
      cleanup.push(() => void up.server.close());
      up.status = status;
      const { readyz, post, metric, records } = await gatewayTo(up.url);
      expect(await readyz()).toBe(200);
      // One trace at a time, so each is one request (traces judged together leave together).
      for (let i = 1; i <= 4; i++) {
        await post();
        await until(
          `attempt ${i}`,
          () => metric('toolwatch_gateway_forward_consecutive_failures') === i || undefined,
        );
      }
      expect(up.requests).toBe(4);
      expect(await readyz()).toBe(200);
      // The fifth failed attempt in a row makes the gateway unready.
      await post();
      await until('unready', async () => (await readyz()) === 503 || undefined);
      // Before: 200 all along, while every span was dead-lettered.
      expect(metric('toolwatch_gateway_forward_up')).toBe(0);
      expect(metric('toolwatch_gateway_ready')).toBe(0);
      expect(metric('toolwatch_gateway_forward_consecutive_failures')).toBeGreaterThanOrEqual(5);
      expect(records.find((r) => r.msg.startsWith('forwarding failing'))?.attributes).toMatchObject({
        endpoint: up.url,
        consecutive_failures: 5,
      });
      // No traffic while unready: probes (empty exports) find out when it accepts again.
      up.status = 200;
      await until('ready again', async () => (await readyz()) === 200 || undefined);
      expect(up.empty).toBeGreaterThanOrEqual(1);
      expect(metric('toolwatch_gateway_forward_up')).toBe(1);
      expect(metric('toolwatch_gateway_ready')).toBe(1);
      expect(metric('toolwatch_gateway_forward_consecutive_failures')).toBe(0);
      expect(records.at(-1)).toEqual({
        level: 'info',
        msg: 'forwarding delivers again',
        attributes: { endpoint: up.url },
      });
    },
  );

  it('an endpoint that is down (connection refused): 503, then 200 once it listens again', async () => {
    const probe = await upstream();
    const port = (probe.server.address() as AddressInfo).port;
    await new Promise((resolve) => probe.server.close(resolve));
    const { readyz, post, metric } = await gatewayTo(probe.url);
    for (let i = 1; i <= 5; i++) {
      await post();
      await until(
        `attempt ${i}`,
        () => metric('toolwatch_gateway_forward_consecutive_failures') === i || undefined,
      );
    }
    await until('unready', async () => (await readyz()) === 503 || undefined);
    const up = await upstream(port);
    cleanup.push(() => void up.server.close());
    up.status = 200;
    await until('ready again', async () => (await readyz()) === 200 || undefined);
    expect(up.empty).toBeGreaterThanOrEqual(1);
  });

  it('a single failed attempt does not make it unready', async () => {
    const up = await upstream();
    cleanup.push(() => void up.server.close());
    let failNext = true;
    up.server.removeAllListeners('request');
    up.server.on('request', async (req, res) => {
      for await (const _ of req);
      up.requests++;
      res.writeHead(failNext ? 503 : 200).end();
      failNext = false;
    });
    const { g, readyz, post } = await gatewayTo(up.url, 3);
    await post();
    await until(
      'forwarded',
      () => g.gateway.registry.total('toolwatch_gateway_spans_forwarded_total') === 3 || undefined,
    );
    expect(up.requests).toBe(2);
    expect(await readyz()).toBe(200);
  });

  it.each([400, 413])(
    'an endpoint refusing batches with %i is not failing: those batches are dead-lettered, readiness stays',
    async (status) => {
      // The answer is about the batch, not the endpoint (a Collector refuses a body over its
      // size limit, or invalid UTF-8 the gateway passes on): a sender that makes its own
      // batches refused must not take the gateway out of a load balancer's rotation.
      const up = await upstream();
      cleanup.push(() => void up.server.close());
      up.status = status;
      const { g, readyz, post, metric } = await gatewayTo(up.url);
      const refused = () =>
        g.gateway.registry.value('toolwatch_gateway_spans_dead_lettered_total', {
          endpoint: up.url,
          reason: `http_${status}`,
        });
      for (let i = 1; i <= 6; i++) {
        await post();
        await until(`batch ${i} refused`, () => refused() === 3 * i || undefined);
      }
      expect(up.requests).toBe(6);
      // Before: 503 after the fifth refused batch, until an empty probe succeeded.
      expect(metric('toolwatch_gateway_forward_consecutive_failures')).toBe(0);
      expect(await readyz()).toBe(200);
    },
  );
});
