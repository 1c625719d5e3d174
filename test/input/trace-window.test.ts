import { describe, expect, it } from 'vitest';
import { TraceWindow } from '../../src/input/trace-window.js';
import type { SpanLike } from '../../src/types.js';

function span(traceId: string, spanId: string): SpanLike {
  return { traceId, spanId, name: 's', startTime: 0, attributes: {} } as unknown as SpanLike;
}

const id = (n: number) => n.toString(16).padStart(32, '0');

describe('TraceWindow', () => {
  it('closes a trace once `window` records have not mentioned it, with all its spans', () => {
    const w = new TraceWindow({ window: 2 });
    expect(w.add([span(id(1), 'a')], 'f', 1)).toEqual([]);
    expect(w.add([span(id(2), 'b'), span(id(1), 'c')], 'f', 2)).toEqual([]);
    expect(w.add([span(id(2), 'd')], 'f', 3)).toEqual([]);
    const done = w.add([span(id(3), 'e')], 'f', 4);
    expect(done.map((g) => [g.traceId, g.spans.map((s) => s.spanId), g.line])).toEqual([
      [id(1), ['a', 'c'], 1],
    ]);
    expect(w.drain().map((g) => g.traceId)).toEqual([id(2), id(3)]);
  });

  it('holds at most `window` traces open when each record mentions new ones (the bound is the window)', () => {
    const w = new TraceWindow({ window: 100 });
    let closed = 0;
    let maxOpen = 0;
    for (let i = 0; i < 100_000; i++) {
      closed += w.add([span(id(i), '1'), span(id(i), '2')], 'f', i + 1).length;
      maxOpen = Math.max(maxOpen, w.openTraces);
    }
    expect(maxOpen).toBe(100);
    expect(closed + w.drain().length).toBe(100_000);
  });

  it('judges the oldest trace early when the open spans exceed the bound, and counts it', () => {
    const w = new TraceWindow({ window: 1_000_000, maxOpenSpans: 50 });
    let closed = 0;
    for (let i = 0; i < 1000; i++) closed += w.add([span(id(i), 'a'), span(id(i), 'b')], 'f', i + 1).length;
    expect(w.openTraces).toBeLessThanOrEqual(25);
    expect(w.forced).toBe(closed);
    expect(w.events[0]).toMatchObject({ kind: 'forced', traceId: id(0) });
  });

  it('reports a trace that reappears after its window closed', () => {
    const w = new TraceWindow({ window: 1 });
    w.add([span(id(1), 'a')], 'f', 1);
    expect(w.add([span(id(2), 'b')], 'f', 2).map((g) => g.traceId)).toEqual([id(1)]);
    w.add([span(id(1), 'late')], 'f', 3);
    expect(w.reappeared).toBe(1);
    expect(w.events).toEqual([{ kind: 'reappeared', traceId: id(1), file: 'f', line: 3 }]);
  });

  it('still reports a trace that reappears a second time, after its first close left the remembered ring', () => {
    const w = new TraceWindow({ window: 1, rememberClosed: 3 });
    w.add([span(id(1), 'a')], 'f', 1);
    w.add([span(id(2), 'b')], 'f', 2); // closes 1 (ring: 1)
    w.add([span(id(1), 'late')], 'f', 3); // 1 reappears; closes 2 (ring: 1, 2)
    w.add([span(id(3), 'c')], 'f', 4); // closes 1 again (ring: 1, 2, 1)
    w.add([span(id(4), 'd')], 'f', 5); // closes 3, which takes the first 1's slot (ring: 3, 2, 1)
    w.add([span(id(1), 'later')], 'f', 6);
    // Before: the first slot's eviction forgot 1 though the third still held it: unreported.
    expect(w.reappeared).toBe(2);
    expect(w.events.map((e) => e.line)).toEqual([3, 6]);
  });
});
