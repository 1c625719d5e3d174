import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { ToolwatchGateway } from '../../src/gateway/toolwatch-gateway.js';
import { protobufOf, recordRun, supportPolicy } from './helpers.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapMb(): number {
  gc();
  return process.memoryUsage().heapUsed / 1e6;
}

/** Agent subtrees whose root never arrives: they stay buffered until max_wait. */
function orphanRequest(traces: number): { body: Uint8Array; spans: number } {
  const spans = [];
  for (let i = 0; i < traces; i++)
    spans.push(...recordRun(['lookup_account', 'delete_account'], 4).slice(0, -1));
  return { body: protobufOf(spans), spans: spans.length };
}

describe('gateway bounds, flooded', () => {
  it('maxHeldSpans: a flood of traces that never complete is refused once full; held spans and heap stay bounded', async () => {
    let now = 0;
    const gateway = new ToolwatchGateway({
      policy: supportPolicy(),
      maxHeldSpans: 20_000,
      maxWaitMs: 60_000,
      now: () => now,
    });
    const request = orphanRequest(50); // 350 spans
    const before = heapMb();
    let accepted = 0;
    let refused = 0;
    for (let i = 0; i < 200; i++) {
      const result = gateway.ingest(i < 60 ? orphanRequest(50).body : request.body, 'http');
      if (result.kind === 'accepted') accepted++;
      else {
        expect(result.kind).toBe('exhausted');
        refused++;
      }
      expect(gateway.heldSpans).toBeLessThanOrEqual(20_000);
    }
    // The same request re-sent would be duplicates (dropped, below): each request is new traces.
    expect(accepted).toBe(Math.floor(20_000 / request.spans));
    expect(refused).toBe(200 - accepted);
    const grown = heapMb() - before;
    console.log(
      `bounds: ${gateway.heldSpans} spans held, heap +${grown.toFixed(1)} MB (${((grown * 1e6) / gateway.heldSpans / 1024).toFixed(2)} KiB/span)`,
    );
    expect(grown).toBeLessThan(100);
    expect(gateway.ready).toBe(false);
    // max_wait: everything held is judged and leaves; the gateway takes traffic again.
    now = 60_000;
    await gateway.tick();
    expect(gateway.registry.value('toolwatch_gateway_traces_judged_total', { completion: 'max_wait' })).toBe(
      accepted * 50,
    );
    expect(gateway.heldSpans).toBe(0);
    expect(
      gateway.registry.value('toolwatch_gateway_spans_dropped_total', { reason: 'no_forward_endpoint' }),
    ).toBe(accepted * request.spans);
    expect(gateway.ingest(request.body, 'grpc').kind).toBe('accepted');
    await gateway.close(100);
  });

  it('maxTraces: new traces are refused once that many are buffered', async () => {
    const gateway = new ToolwatchGateway({ policy: supportPolicy(), maxTraces: 100, maxWaitMs: 60_000 });
    let accepted = 0;
    for (let i = 0; i < 30; i++)
      if (gateway.ingest(orphanRequest(10).body, 'http').kind === 'accepted') accepted++;
    expect(accepted).toBe(10);
    await gateway.close(100);
  });

  it('maxSpansPerTrace: a trace that reaches the limit is judged at once; its later spans pass through as late', async () => {
    const gateway = new ToolwatchGateway({
      policy: supportPolicy(),
      maxSpansPerTrace: 50,
      decisionWaitMs: 60_000,
      maxWaitMs: 60_000,
    });
    const spans = recordRun(['lookup_account'], 80); // 84 spans in one trace
    gateway.ingest(protobufOf(spans.slice(0, 60)), 'http');
    await gateway.tick();
    expect(
      gateway.registry.value('toolwatch_gateway_traces_judged_total', { completion: 'span_limit' }),
    ).toBe(1);
    gateway.ingest(protobufOf(spans.slice(60)), 'http');
    await gateway.tick();
    expect(gateway.registry.total('toolwatch_gateway_late_spans_total')).toBe(spans.length - 60);
    expect(gateway.heldSpans).toBe(0);
    await gateway.close(100);
  });
});
