import { gzipSync } from 'node:zlib';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spansFromOtlpJson } from '../../src/conventions/from-otlp-json.js';
import { type RunningGateway, startGateway } from '../../src/gateway/start-gateway.js';
import { otlpJsonFromProtobuf } from '../../src/otlp/otlp-protobuf.js';
import { splitTraceRequest } from '../../src/otlp/trace-request-splice.js';
import { protobufOf, recordRun, type Sink, startSink, supportPolicy, until } from './helpers.js';

let sink: Sink;
let running: RunningGateway;
let url: string;

async function start(options: Partial<Parameters<typeof startGateway>[0]> = {}) {
  running = await startGateway({
    policy: supportPolicy(),
    forward: [sink.url],
    http: { port: 0 },
    decisionWaitMs: 200,
    forwarding: { initialBackoffMs: 20, maxBackoffMs: 100 },
    ...options,
  });
  url = `http://${running.addresses.http}/v1/traces`;
}

function post(body: Uint8Array | string, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-protobuf', ...headers },
    body,
  });
}

beforeEach(async () => {
  sink = await startSink();
});
afterEach(async () => {
  await running?.close();
  await sink.close();
});

describe('gateway over OTLP/HTTP', () => {
  it('judges a trace sent in pieces, out of order, and forwards every span byte for byte plus the verdict', async () => {
    await start();
    const spans = recordRun(['lookup_account', 'delete_account'], 3);
    // Root first, then the children in reverse, one request each: any order must work.
    const pieces = [spans.at(-1)!, ...spans.slice(0, -1).reverse()];
    for (const span of pieces) expect((await post(protobufOf([span]))).status).toBe(200);
    await until('the trace to be forwarded', () => sink.spans().length === spans.length);

    const sent = new Map(splitTraceRequest(protobufOf(spans)).spans.map((s) => [s.spanId, s]));
    const forwarded = sink.spans();
    expect(forwarded.map((s) => s.spanId).sort()).toEqual([...sent.keys()].sort());
    const agentId = spans.find((s) => s.name.startsWith('invoke_agent'))!.spanContext().spanId;
    for (const span of forwarded) {
      const original = sent.get(span.spanId)!;
      expect(Buffer.from(span.resource.bytes)).toEqual(Buffer.from(original.resource.bytes));
      expect(Buffer.from(span.scope.bytes)).toEqual(Buffer.from(original.scope.bytes));
      if (span.spanId === agentId) {
        // The received bytes, then the verdict appended.
        expect(Buffer.from(span.bytes.subarray(0, original.bytes.length))).toEqual(
          Buffer.from(original.bytes),
        );
        expect(span.bytes.length).toBeGreaterThan(original.bytes.length);
      } else expect(Buffer.from(span.bytes)).toEqual(Buffer.from(original.bytes));
    }
    const agent = sink.decoded().find((s) => s.spanId === agentId)!;
    expect(agent.attributes).toMatchObject({
      'toolwatch.evaluation.passed': false,
      'toolwatch.evaluation.failed': ['trajectory'],
      'toolwatch.evaluation.rule': 'support',
      'toolwatch.keep': true,
      'toolwatch.evaluation.policy_digest': supportPolicy().digest,
    });
    expect(agent.events.map((e) => e.attributes['gen_ai.evaluation.name'])).toEqual([
      'reliability',
      'trajectory',
    ]);
    const metrics = running.gateway.registry;
    expect(
      metrics.value('toolwatch_tool_misuse_total', {
        'toolwatch.misuse.kind': 'forbidden',
        'gen_ai.tool.name': 'delete_account',
        'gen_ai.agent.name': 'support_agent',
        'toolwatch.rule': 'support',
      }),
    ).toBe(1);
    expect(metrics.value('toolwatch_gateway_traces_judged_total', { completion: 'quiet' })).toBe(1);
    // The sink has the spans a moment before the gateway has read its answer.
    await until(
      'counted as forwarded',
      () => metrics.total('toolwatch_gateway_spans_forwarded_total') === spans.length,
    );
    expect(running.gateway.heldSpans).toBe(0);
  });

  it('reads OTLP/JSON and gzip and gives the same verdict as protobuf', async () => {
    await start();
    const spans = recordRun(['lookup_account']);
    const json = Buffer.from(JsonTraceSerializer.serializeRequest(spans)!);
    const res = await post(gzipSync(json), {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('{}');
    await until('forwarded', () => sink.spans().length === spans.length);
    const agent = sink.decoded().find((s) => s.name.startsWith('invoke_agent'))!;
    expect(agent.attributes['toolwatch.evaluation.passed']).toBe(true);
    // Judged: not a skipped record (the run taken as incomplete).
    expect(
      agent.events.map((e) => [
        e.attributes['gen_ai.evaluation.name'],
        e.attributes['gen_ai.evaluation.score.label'],
      ]),
    ).toEqual([
      ['reliability', 'pass'],
      ['trajectory', 'pass'],
    ]);
    expect(agent.attributes['toolwatch.keep']).toBe(false);
    // The JSON became protobuf spans that decode exactly as the SDK's own protobuf does
    // (bytes differ only where the SDK writes proto3 zero defaults explicitly).
    const fromProto = new Map(
      spansFromOtlpJson(otlpJsonFromProtobuf(protobufOf(spans))).map((s) => [s.spanId, s]),
    );
    for (const span of sink.decoded()) {
      if (span.spanId === agent.spanId) continue;
      expect(span).toEqual(fromProto.get(span.spanId));
    }
  });

  it('waits for the outermost agent span, then for quiet; a trace without it waits max_wait', async () => {
    await start({ decisionWaitMs: 150, maxWaitMs: 1500 });
    const spans = recordRun(['lookup_account']);
    const root = spans.at(-1)!;
    expect((await post(protobufOf(spans.slice(0, -1)))).status).toBe(200);
    // The agent's parent (the HTTP root) has not arrived: the run may not be the outermost.
    await new Promise((r) => setTimeout(r, 600));
    expect(sink.bodies).toHaveLength(0);
    expect((await post(protobufOf([root]))).status).toBe(200);
    await until('forwarded', () => sink.spans().length === spans.length);
    expect(
      running.gateway.registry.value('toolwatch_gateway_traces_judged_total', { completion: 'quiet' }),
    ).toBe(1);

    const orphan = recordRun(['lookup_account']).slice(0, -1);
    const t0 = Date.now();
    await post(protobufOf(orphan));
    await until('max_wait', () => sink.spans().length === spans.length + orphan.length, 5000);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1400);
    expect(
      running.gateway.registry.value('toolwatch_gateway_traces_judged_total', { completion: 'max_wait' }),
    ).toBe(1);
  });

  it('drops a re-sent span as a duplicate (counted), so a retried request never counts a tool call twice', async () => {
    await start({ decisionWaitMs: 150 });
    const spans = recordRun(['lookup_account', 'lookup_account']);
    const body = protobufOf(spans);
    expect((await post(body)).status).toBe(200);
    expect((await post(body)).status).toBe(200); // e.g. the Collector timed out and retried
    await until('forwarded', () => sink.spans().length >= spans.length);
    await until('counted', () => running.gateway.heldSpans === 0);
    expect(sink.spans()).toHaveLength(spans.length);
    const r = running.gateway.registry;
    expect(r.value('toolwatch_gateway_spans_dropped_total', { reason: 'duplicate_span' })).toBe(spans.length);
    expect(r.total('toolwatch_gateway_spans_received_total')).toBe(2 * spans.length);
    const agent = sink.decoded().find((s) => s.name.startsWith('invoke_agent'))!;
    expect(agent.attributes['toolwatch.evaluation.passed']).toBe(true);
    // Judged: not a skipped record (the run taken as incomplete).
    expect(
      agent.events.map((e) => [
        e.attributes['gen_ai.evaluation.name'],
        e.attributes['gen_ai.evaluation.score.label'],
      ]),
    ).toEqual([
      ['reliability', 'pass'],
      ['trajectory', 'pass'],
    ]);
  });

  it('passes spans that arrive after their trace was judged through unjudged, counted as late', async () => {
    await start({ decisionWaitMs: 100 });
    const spans = recordRun(['lookup_account'], 1);
    const late = spans.find((s) => s.name === 'db 0')!;
    await post(protobufOf(spans.filter((s) => s !== late)));
    await until('judged', () => sink.spans().length === spans.length - 1);
    await post(protobufOf([late]));
    await until('late span forwarded', () => sink.spans().length === spans.length);
    expect(running.gateway.registry.total('toolwatch_gateway_late_spans_total')).toBe(1);
  });

  it('retries forwarding with backoff and dead-letters after the last attempt, never losing count', async () => {
    await start({
      decisionWaitMs: 50,
      forwarding: { initialBackoffMs: 10, maxBackoffMs: 20, maxAttempts: 3 },
    });
    const first = recordRun(['lookup_account']);
    sink.failNext.push(503, 502);
    await post(protobufOf(first));
    await until('forwarded after retries', () => sink.spans().length === first.length);
    const r = running.gateway.registry;
    expect(r.total('toolwatch_gateway_forward_retries_total')).toBe(2);

    sink.failNext.push(503, 503, 503);
    const second = recordRun(['lookup_account']);
    await post(protobufOf(second));
    await until(
      'dead-lettered',
      () => r.total('toolwatch_gateway_spans_dead_lettered_total') === second.length,
    );
    expect(
      r.value('toolwatch_gateway_spans_dead_lettered_total', {
        endpoint: sink.url,
        reason: 'retries_exhausted_http_503',
      }),
    ).toBe(second.length);
    sink.failNext.push(400);
    const third = recordRun(['lookup_account']);
    await post(protobufOf(third));
    await until(
      'dead-lettered at once',
      () => r.total('toolwatch_gateway_spans_dead_lettered_total') === second.length + third.length,
    );
    // Every accepted span is accounted for: forwarded or dead-lettered.
    expect(r.total('toolwatch_gateway_spans_received_total')).toBe(
      r.total('toolwatch_gateway_spans_forwarded_total') +
        r.total('toolwatch_gateway_spans_dead_lettered_total'),
    );
    expect(running.gateway.heldSpans).toBe(0);
  });

  it('answers 429 with Retry-After and RetryInfo when full, instead of accepting and dropping', async () => {
    await start({ decisionWaitMs: 20, maxHeldSpans: 5, retryAfterMs: 2000 });
    sink.stall = true;
    const spans = recordRun(['lookup_account']); // 3 spans
    expect((await post(protobufOf(spans))).status).toBe(200);
    await until(
      'forward in flight',
      () =>
        running.gateway.heldSpans === 3 &&
        running.gateway.registry.total('toolwatch_gateway_traces_judged_total') === 1,
    );
    const res = await post(protobufOf(recordRun(['lookup_account'])));
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('2');
    const body = Buffer.from(await res.arrayBuffer()).toString('latin1');
    expect(body).toContain('type.googleapis.com/google.rpc.RetryInfo');
    expect((await fetch(`http://${running.addresses.http}/readyz`)).status).toBe(200);
    sink.release();
    await until('drained', () => running.gateway.heldSpans === 0);
    expect(
      running.gateway.registry.value('toolwatch_gateway_spans_rejected_total', { reason: 'buffer_full' }),
    ).toBe(3);
    expect((await post(protobufOf(recordRun(['lookup_account'])))).status).toBe(200);
  });

  it('judging: false forwards the same spans untouched (the pass-through the bench compares against)', async () => {
    await start({ judging: false, decisionWaitMs: 50 });
    const spans = recordRun(['delete_account']);
    await post(protobufOf(spans));
    await until('forwarded', () => sink.spans().length === spans.length);
    const sent = new Map(splitTraceRequest(protobufOf(spans)).spans.map((s) => [s.spanId, s]));
    for (const span of sink.spans())
      expect(Buffer.from(span.bytes)).toEqual(Buffer.from(sent.get(span.spanId)!.bytes));
    expect(running.gateway.registry.total('toolwatch_gateway_verdicts_total')).toBe(0);
  });

  it('close() judges what is pending and flushes before returning', async () => {
    await start({ decisionWaitMs: 60_000 });
    const spans = recordRun(['delete_account']);
    await post(protobufOf(spans));
    expect(sink.bodies).toHaveLength(0);
    await running.close();
    expect(sink.spans()).toHaveLength(spans.length);
    const agent = sink.decoded().find((s) => s.name.startsWith('invoke_agent'))!;
    expect(agent.attributes['toolwatch.keep']).toBe(true);
    expect(
      running.gateway.registry.value('toolwatch_gateway_traces_judged_total', { completion: 'shutdown' }),
    ).toBe(1);
  });
});

describe('forwarding at shutdown', () => {
  it('a stalled next hop cannot hold close() past its deadline: what it was sent is counted unconfirmed, reason shutdown', async () => {
    await start({ decisionWaitMs: 60_000, drainTimeoutMs: 300 });
    sink.stall = true;
    const spans = recordRun(['lookup_account']);
    await post(protobufOf(spans));
    const t0 = Date.now();
    await running.close();
    expect(Date.now() - t0).toBeLessThan(3000);
    const r = running.gateway.registry;
    // The next hop read the whole batch before stalling: it may have it. Counting it
    // dead-lettered (as before) said it was lost; what is known is that no answer came.
    expect(
      r.value('toolwatch_gateway_spans_unconfirmed_total', { endpoint: sink.url, reason: 'shutdown' }),
    ).toBe(spans.length);
    expect(r.total('toolwatch_gateway_spans_dead_lettered_total')).toBe(0);
    expect(running.gateway.heldSpans).toBe(0);
    sink.release();
  });
});
