/**
 * A span id reused with other content is a conflict, not a retry: a `delete_account` tool
 * span sent under the id of an earlier `lookup_account` span of the same trace must be judged
 * (the forbidden call fails the verdict), forwarded, counted, and marked on the verdict.
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { GatewayLogRecord } from '../../src/gateway/gateway-log.js';
import { ToolwatchGateway } from '../../src/gateway/toolwatch-gateway.js';
import { protobufOf, recordRun, type Sink, startSink, supportPolicy } from './helpers.js';

const gateways: ToolwatchGateway[] = [];
const sinks: Sink[] = [];
afterEach(async () => {
  for (const g of gateways.splice(0)) await g.close(100);
  for (const s of sinks.splice(0)) await s.close();
});

async function gatewayAt(clock: { now: number }, records: GatewayLogRecord[] = []) {
  const sink = await startSink();
  sinks.push(sink);
  const gw = new ToolwatchGateway({
    policy: supportPolicy(),
    forward: [sink.url],
    decisionWaitMs: 100,
    now: () => clock.now,
    logger: (r) => records.push(r),
  });
  gateways.push(gw);
  return { gw, sink };
}

/** The same span, reporting another span id (the SDK picks ids; an attacker does not have to). */
function underId(span: ReadableSpan, spanId: string): ReadableSpan {
  const context = { ...span.spanContext(), spanId };
  return Object.create(span, { spanContext: { value: () => context } }) as ReadableSpan;
}

const named = (spans: ReadableSpan[], name: string) => spans.find((s) => s.name === name)!;

async function judgeAll(gw: ToolwatchGateway, sink: Sink, clock: { now: number }, spans: number) {
  clock.now += 1_000;
  await gw.tick();
  await vi.waitFor(() => expect(sink.spans()).toHaveLength(spans), { timeout: 10_000 });
  await vi.waitFor(() => expect(gw.heldSpans).toBe(0), { timeout: 10_000 });
}

describe('a span id reused with other content', () => {
  it('is judged, forwarded, counted and marked: a delete_account hidden under the id of a lookup_account', async () => {
    const clock = { now: 1_000_000 };
    const { gw, sink } = await gatewayAt(clock);
    const spans = recordRun(['lookup_account', 'delete_account']);
    const lookup = named(spans, 'execute_tool lookup_account');
    const hidden = underId(named(spans, 'execute_tool delete_account'), lookup.spanContext().spanId);
    const honest = spans.filter((s) => !s.name.includes('delete_account'));
    expect(gw.ingest(protobufOf(honest), 'http').kind).toBe('accepted');
    expect(gw.ingest(protobufOf([hidden]), 'http').kind).toBe('accepted');
    await judgeAll(gw, sink, clock, 4);

    // Before: counted dropped (duplicate_span), never forwarded, and the verdict passed.
    const r = gw.registry;
    expect(r.value('toolwatch_gateway_spans_dropped_total', { reason: 'duplicate_span' })).toBe(0);
    expect(r.total('toolwatch_gateway_span_id_conflicts_total')).toBe(1);
    const forwarded = sink.decoded();
    expect(forwarded.map((s) => s.name).sort()).toEqual([
      'POST /support',
      'execute_tool delete_account',
      'execute_tool lookup_account',
      'invoke_agent support_agent',
    ]);
    expect(forwarded.filter((s) => s.spanId === lookup.spanContext().spanId)).toHaveLength(2);
    const agent = forwarded.find((s) => s.name === 'invoke_agent support_agent')!;
    expect(agent.attributes['toolwatch.evaluation.passed']).toBe(false);
    expect(agent.attributes['toolwatch.evaluation.failed']).toContain('trajectory');
    expect(agent.attributes['toolwatch.evaluation.span_id_conflicts']).toEqual([lookup.spanContext().spanId]);
    expect(agent.attributes['toolwatch.keep']).toBe(true);
    expect(r.value('toolwatch_gateway_verdicts_total', { rule: 'support', passed: 'false' })).toBe(1);
  });

  it('in one request pairs each span with its own content (both judged under their names)', async () => {
    const clock = { now: 1_000_000 };
    const { gw, sink } = await gatewayAt(clock);
    const spans = recordRun(['lookup_account', 'delete_account']);
    const lookup = named(spans, 'execute_tool lookup_account');
    const hidden = underId(named(spans, 'execute_tool delete_account'), lookup.spanContext().spanId);
    const attack = spans.map((s) => (s.name.includes('delete_account') ? hidden : s));
    expect(gw.ingest(protobufOf(attack), 'http').kind).toBe('accepted');
    await judgeAll(gw, sink, clock, 4);
    const agent = sink.decoded().find((s) => s.name === 'invoke_agent support_agent')!;
    expect(agent.attributes['toolwatch.evaluation.passed']).toBe(false);
    // Before (one decoded span per id): both spans were judged as delete_account, so the
    // expected lookup_account was missing too.
    const reliability = agent.events.find((e) => e.attributes['gen_ai.evaluation.name'] === 'reliability')!;
    expect(reliability.attributes['gen_ai.evaluation.score.label']).toBe('pass');
    expect(gw.registry.total('toolwatch_gateway_span_id_conflicts_total')).toBe(1);
  });

  it('a retry (the same span again) is still dropped as a duplicate and judged once', async () => {
    const clock = { now: 1_000_000 };
    const { gw, sink } = await gatewayAt(clock);
    const spans = recordRun(['lookup_account']);
    expect(gw.ingest(protobufOf(spans), 'http').kind).toBe('accepted');
    expect(gw.ingest(protobufOf([named(spans, 'execute_tool lookup_account')]), 'http').kind).toBe(
      'accepted',
    );
    await judgeAll(gw, sink, clock, 3);
    const r = gw.registry;
    expect(r.value('toolwatch_gateway_spans_dropped_total', { reason: 'duplicate_span' })).toBe(1);
    expect(r.total('toolwatch_gateway_span_id_conflicts_total')).toBe(0);
    const agent = sink.decoded().find((s) => s.name === 'invoke_agent support_agent')!;
    expect(agent.attributes['toolwatch.evaluation.passed']).toBe(true);
    expect(agent.attributes['toolwatch.evaluation.span_id_conflicts']).toBeUndefined();
  });

  it('marks a passing verdict too, logs it under the default (failing) and lists at most 16 ids', async () => {
    const clock = { now: 1_000_000 };
    const records: GatewayLogRecord[] = [];
    const { gw, sink } = await gatewayAt(clock, records);
    const spans = recordRun(['lookup_account'], 20);
    const plain = spans.filter((s) => s.name.startsWith('db '));
    // Each plain span's id reused by the next plain span's content: 20 conflicts, no tool call.
    const reused = plain.map((s, i) => underId(plain[(i + 1) % plain.length]!, s.spanContext().spanId));
    expect(gw.ingest(protobufOf(spans), 'http').kind).toBe('accepted');
    expect(gw.ingest(protobufOf(reused), 'http').kind).toBe('accepted');
    await judgeAll(gw, sink, clock, spans.length + reused.length);
    expect(gw.registry.total('toolwatch_gateway_span_id_conflicts_total')).toBe(20);
    const agent = sink.decoded().find((s) => s.name === 'invoke_agent support_agent')!;
    expect(agent.attributes['toolwatch.evaluation.passed']).toBe(true);
    const listed = plain.slice(0, 16).map((s) => s.spanContext().spanId);
    expect(agent.attributes['toolwatch.evaluation.span_id_conflicts']).toEqual(listed);
    expect(records).toEqual([
      expect.objectContaining({
        level: 'warn',
        msg: 'verdict passed',
        attributes: expect.objectContaining({ span_id_conflicts: listed }),
      }),
    ]);
  });

  it('the conflict and unconfirmed series exist at 0 from the start (an alert sees the first increase)', async () => {
    const { gw, sink } = await gatewayAt({ now: 1_000_000 });
    const text = gw.registry.text();
    // Before: absent until the first conflict, whose increase() an alert could not see.
    expect(text).toContain('\ntoolwatch_gateway_span_id_conflicts_total 0\n');
    for (const reason of ['timeout', 'shutdown'])
      expect(text).toContain(
        `\ntoolwatch_gateway_spans_unconfirmed_total{endpoint="${sink.url}",reason="${reason}"} 0\n`,
      );
  });
});
