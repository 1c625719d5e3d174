/**
 * The gateway's documented defaults: "`--decision-wait` (default 2 s); or `--max-wait`
 * (default 30 s) after its first span", "`--max-held-spans` (default 200,000)", "Request
 * bodies over `--max-request-bytes` (16 MiB) get 413, and so do gzip bodies that inflate
 * beyond `--max-decompressed-bytes` (64 MiB)", and the span limit per trace (10,000, in the
 * options' documentation). Every committed gateway test sets these explicitly, so none of
 * the numbers had a test. The clock is the gateway's own `now` option: no sleeping.
 */
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../src/gateway/start-gateway.js';
import { ToolwatchGateway } from '../../src/gateway/toolwatch-gateway.js';
import { protobufOf, recordRun, supportPolicy } from './helpers.js';

const gateways: ToolwatchGateway[] = [];
const running: RunningGateway[] = [];
afterEach(async () => {
  for (const g of gateways.splice(0)) await g.close(100);
  for (const r of running.splice(0)) await r.close();
});

/** A gateway with every default but the clock, which the test moves. */
function gatewayAt(clock: { now: number }) {
  const gw = new ToolwatchGateway({ policy: supportPolicy(), now: () => clock.now });
  gateways.push(gw);
  const judged = (completion: string) =>
    gw.registry.value('toolwatch_gateway_traces_judged_total', { completion });
  return { gw, judged };
}

describe('docs/gateway.md: the gateway decides when a trace is judged by its defaults', () => {
  it('--decision-wait (2 s): a complete trace is judged 2 s after its last span, not before', async () => {
    const clock = { now: 1_000_000 };
    const { gw, judged } = gatewayAt(clock);
    expect(gw.ingest(protobufOf(recordRun(['lookup_account'])), 'http').kind).toBe('accepted');
    clock.now += 1_990;
    await gw.tick();
    expect(judged('quiet')).toBe(0);
    clock.now += 20;
    await gw.tick();
    expect(judged('quiet')).toBe(1);
  });

  it('--max-wait (30 s): a trace whose root never arrives is judged 30 s after its first span', async () => {
    const clock = { now: 1_000_000 };
    const { gw, judged } = gatewayAt(clock);
    const rootless = recordRun(['lookup_account']).slice(0, -1);
    expect(gw.ingest(protobufOf(rootless), 'http').kind).toBe('accepted');
    clock.now += 29_990;
    await gw.tick();
    expect(judged('max_wait')).toBe(0);
    clock.now += 20;
    await gw.tick();
    expect(judged('max_wait')).toBe(1);
    expect(judged('quiet')).toBe(0);
  });

  it('a trace reaching 10,000 spans is judged at once (span_limit)', async () => {
    const clock = { now: 1_000_000 };
    const { gw, judged } = gatewayAt(clock);
    const spans = recordRun(['lookup_account'], 9_997); // 10,000 spans, the root last
    expect(gw.ingest(protobufOf(spans.slice(0, -1)), 'http').kind).toBe('accepted');
    await gw.tick();
    expect(judged('span_limit')).toBe(0);
    expect(gw.ingest(protobufOf(spans.slice(-1)), 'http').kind).toBe('accepted');
    await gw.tick();
    expect(judged('span_limit')).toBe(1);
  });
});

describe('docs/gateway.md: the gateway refuses by its default size limits', () => {
  it('--max-held-spans (200,000): a request of 200,001 spans is refused for good, one of 200,000 is not', async () => {
    const gw = new ToolwatchGateway({ policy: supportPolicy() });
    gateways.push(gw);
    // One span repeated: the request's size is what is checked before anything is held.
    const span = recordRun(['lookup_account'])[0]!;
    const over = gw.ingest(protobufOf(Array(200_001).fill(span)), 'http');
    expect(over).toEqual({
      kind: 'invalid',
      message: 'request has 200001 spans, more than the gateway holds (200000); send smaller batches',
    });
    const at = gw.ingest(protobufOf(Array(200_000).fill(span)), 'http');
    expect(at.kind).toBe('accepted');
  }, 30_000);

  it('--max-request-bytes (16 MiB) and --max-decompressed-bytes (64 MiB): 413 just past each, not at it', async () => {
    const r = await startGateway({ policy: supportPolicy(), http: { port: 0 } });
    running.push(r);
    const post = async (body: Uint8Array, headers: Record<string, string> = {}) => {
      const res = await fetch(`http://${r.addresses.http}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-protobuf', ...headers },
        body,
      });
      return [res.status, await res.text()] as const;
    };
    const MiB = 1024 * 1024;
    // Zero bytes are not OTLP: within the limits such a body is undecodable (400), not too large.
    expect((await post(new Uint8Array(16 * MiB)))[0]).toBe(400);
    expect((await post(new Uint8Array(16 * MiB + 1)))[0]).toBe(413);
    const atInflated = gzipSync(Buffer.alloc(64 * MiB));
    const overInflated = gzipSync(Buffer.alloc(64 * MiB + 1));
    expect((await post(atInflated, { 'content-encoding': 'gzip' }))[0]).toBe(400);
    const [status, text] = await post(overInflated, { 'content-encoding': 'gzip' });
    expect(status).toBe(413);
    expect(text).toContain('decompressed body over 67108864 bytes');
  }, 30_000);
});
