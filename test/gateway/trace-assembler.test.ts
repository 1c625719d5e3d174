import { afterEach, describe, expect, it, vi } from 'vitest';
import { TraceAssembler } from '../../src/gateway/trace-assembler.js';
import type { RawSpan } from '../../src/otlp/trace-request-splice.js';
import type { SpanLike } from '../../src/types.js';

const TRACE = 'ab'.repeat(16);
const id = (i: number) => (i + 1).toString(16).padStart(16, '0');

/** An agent span whose parent is the next span of the chain (`parent` '' for the root). */
function agentSpan(spanId: string, parent: string): [RawSpan, SpanLike] {
  const raw = {
    traceId: TRACE,
    spanId,
    parentSpanId: parent,
    endTimeUnixNano: 0n,
    bytes: new Uint8Array(),
    receivedBytes: 0,
    resource: { bytes: new Uint8Array(), key: '' },
    scope: { bytes: new Uint8Array(), key: '' },
  };
  const like: SpanLike = {
    traceId: TRACE,
    spanId,
    name: 'invoke_agent nested',
    kind: 0,
    startTime: 0,
    status: { code: 0 },
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'nested' },
    events: [],
    ...(parent ? { parentSpanId: parent } : {}),
  };
  return [raw, like];
}

function chain(assembler: TraceAssembler, depth: number, withRoot: boolean): void {
  for (let i = 0; i < depth; i++) {
    const parent = i === depth - 1 && withRoot ? '' : id(i + 1);
    const [raw, like] = agentSpan(id(i), parent);
    assembler.add(raw, like, 0);
  }
}

afterEach(() => vi.restoreAllMocks());

describe('TraceAssembler', () => {
  it('checks a deep chain of agent spans whose root never arrives in O(spans) per tick, not O(spans²)', () => {
    const depth = 3000;
    const assembler = new TraceAssembler({
      decisionWaitMs: 0,
      maxWaitMs: 60_000,
      maxSpansPerTrace: 10_000,
      decidedCacheSize: 10,
    });
    chain(assembler, depth, false);
    // Parent lookups made by one tick: a walk from every agent span to the missing root
    // makes ~depth²/2 (4.5 million here), and the gateway ticks every 250 ms until max_wait.
    const get = vi.spyOn(Map.prototype, 'get');
    expect(assembler.due(1)).toEqual([]);
    expect(get.mock.calls.length).toBeLessThan(depth * 4);
    expect(assembler.bufferedSpans).toBe(depth);
  });

  it('is due when quiet once the deep chain reaches the root, and not while a cycle stands in for it', () => {
    const options = { decisionWaitMs: 0, maxWaitMs: 60_000, maxSpansPerTrace: 10_000, decidedCacheSize: 10 };
    const rooted = new TraceAssembler(options);
    chain(rooted, 500, true);
    expect(rooted.due(1).map((d) => d.completion)).toEqual(['quiet']);

    const cyclic = new TraceAssembler(options);
    const [a, la] = agentSpan(id(0), id(1));
    const [b, lb] = agentSpan(id(1), id(0));
    cyclic.add(a, la, 0);
    cyclic.add(b, lb, 0);
    expect(cyclic.due(1)).toEqual([]);
    expect(cyclic.due(60_000).map((d) => d.completion)).toEqual(['max_wait']);
  });
});
