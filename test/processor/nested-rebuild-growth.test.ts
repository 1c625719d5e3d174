/**
 * Nested agent runs judged under a `rootOnly: false` rule: each nested run is judged as its
 * span ends, inside `span.end()` on the application's thread, from its own subtree (its spans,
 * with the runs below it, rebuilt at their own ends, taken as they are). Rebuilt from the whole
 * trace each time (every held span, the open ancestors included), n nested runs cost n
 * rebuilds of up to n spans. Fastest of 3 (of 5 in the test), one process, on a loaded 2-core machine, 1,000 and
 * 4,000 runs: a chain 0.74 s and 17.9 s that way, 21-36 ms and 44-46 ms from the subtree; a fan
 * of agents under one root 0.63 s and 14.8 s, against 27 and 93-113 ms; two chains started and
 * ended in turn 0.74 s and 18.1 s, against 18 and 60-69 ms. Root-only rules never rebuild a
 * nested run (`readme-promises-nesting.test.ts`).
 *
 * No wall-clock bound: a ratio measured in one process, like against like. Four times the
 * runs may cost at most 10 times the time: linear, with the garbage collector's share growing
 * with the heap (3-7 measured here; quadratic is 16). Whole-trace rebuilds cost 24 times.
 */
import type { Span } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { ToolwatchSpanProcessor } from '../../src/processor/toolwatch-span-processor.js';
import type { Scorer } from '../../src/types.js';
import { policyOf } from './harness.js';
import { startAgent, tool } from './tracing.js';

/** Passes every run and keeps none of them (the harness's fake scorer keeps every run it sees). */
const passing: Scorer = {
  name: 'pass',
  kind: 'custom',
  digest: 'd',
  async: false,
  config: {},
  score: () => ({
    scorer: 'pass',
    kind: 'custom',
    passed: true,
    score: 1,
    label: 'pass',
    reason: null,
    digest: 'd',
    detail: {},
  }),
};

/** A processor judging every run, and a tracer feeding it; `verdicts()` counts what it delivered. */
function judgingAll(spans: number) {
  let verdicts = 0;
  const processor = new ToolwatchSpanProcessor({
    policy: policyOf([{ match: { rootOnly: false }, scorers: [passing] }]),
    maxSpansPerTrace: spans,
    onVerdict: () => {
      verdicts++;
    },
  });
  const tracer = new BasicTracerProvider({ spanProcessors: [processor] }).getTracer('nested');
  return { tracer, processor, verdicts: () => verdicts };
}

/** Milliseconds to end a chain of `depth` agent spans, innermost first; every run judged. */
function endChain(depth: number): number {
  const { tracer, verdicts } = judgingAll(depth + 1);
  const spans: Span[] = [startAgent(tracer, 'a0')];
  for (let i = 1; i < depth; i++) spans.push(startAgent(tracer, `a${i}`, spans[i - 1]));
  tool(tracer, 'lookup', spans[depth - 1]!);
  const start = performance.now();
  for (let i = depth - 1; i >= 0; i--) spans[i]!.end();
  const ms = performance.now() - start;
  expect(verdicts()).toBe(depth);
  return ms;
}

/** Milliseconds to run `width` agents, each with a tool call, one after the other under one root agent. */
function endFan(width: number): number {
  const { tracer, verdicts } = judgingAll(2 * width + 1);
  const root = startAgent(tracer, 'root');
  const start = performance.now();
  for (let i = 0; i < width; i++) {
    const member = startAgent(tracer, `m${i}`, root);
    tool(tracer, 'lookup', member);
    member.end();
  }
  root.end();
  const ms = performance.now() - start;
  expect(verdicts()).toBe(width + 1);
  return ms;
}

/** Milliseconds to end two chains of `depth / 2` agents under one root, their spans started and ended in turn. */
function endTwoChains(depth: number): number {
  const { tracer, verdicts } = judgingAll(depth + 3);
  const root = startAgent(tracer, 'root');
  const half = depth / 2;
  const left: Span[] = [];
  const right: Span[] = [];
  for (let i = 0; i < half; i++) {
    left.push(startAgent(tracer, `l${i}`, i === 0 ? root : left[i - 1]));
    right.push(startAgent(tracer, `r${i}`, i === 0 ? root : right[i - 1]));
  }
  tool(tracer, 'lookup', left[half - 1]!);
  tool(tracer, 'lookup', right[half - 1]!);
  const start = performance.now();
  for (let i = half - 1; i >= 0; i--) {
    left[i]!.end();
    right[i]!.end();
  }
  root.end();
  const ms = performance.now() - start;
  expect(verdicts()).toBe(depth + 1);
  return ms;
}

/**
 * Milliseconds to end a chain of `depth` agent spans outermost first (each run waits for the
 * runs below it, then all are judged at once) or in a shuffled order; every run judged.
 */
async function endChainOutOfOrder(depth: number, order: 'outermost first' | 'shuffled'): Promise<number> {
  const { tracer, processor, verdicts } = judgingAll(depth + 1);
  const spans: Span[] = [startAgent(tracer, 'a0')];
  for (let i = 1; i < depth; i++) spans.push(startAgent(tracer, `a${i}`, spans[i - 1]));
  tool(tracer, 'lookup', spans[depth - 1]!);
  const ends = spans.map((_, i) => i);
  let seed = 7;
  if (order === 'shuffled')
    for (let i = ends.length - 1; i > 0; i--) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      const j = seed % (i + 1);
      [ends[i], ends[j]] = [ends[j]!, ends[i]!];
    }
  const start = performance.now();
  for (const i of ends) spans[i]!.end();
  await processor.forceFlush();
  const ms = performance.now() - start;
  expect(verdicts()).toBe(depth);
  return ms;
}

describe('nested runs judged under rootOnly: false', () => {
  // Judging waiting runs outermost first rebuilt each from its whole subtree anew, and kept
  // every copy: 1,000 deep took 1.3 s, 4,000 ran out of heap.
  for (const order of ['outermost first', 'shuffled'] as const) {
    it(`cost time linear in the depth of a chain ended ${order} (4x deeper, at most 10x the time)`, {
      timeout: 300_000,
    }, async () => {
      await endChainOutOfOrder(250, order);
      let small = Number.POSITIVE_INFINITY;
      let large = Number.POSITIVE_INFINITY;
      for (let round = 0; round < 5; round++) {
        small = Math.min(small, await endChainOutOfOrder(2000, order));
        large = Math.min(large, await endChainOutOfOrder(8000, order));
      }
      expect(
        large / small,
        `2,000 deep ${small.toFixed(0)} ms, 8,000 deep ${large.toFixed(0)} ms`,
      ).toBeLessThan(10);
    });
  }

  for (const [shape, end] of [
    ['a chain', endChain],
    ['a fan of agents under one root', endFan],
    ['two chains interleaved', endTwoChains],
  ] as const) {
    it(`cost time linear in the size of ${shape} (4x the runs, at most 10x the time)`, {
      timeout: 300_000,
    }, () => {
      end(250);
      const fastest = (runs: number) => Math.min(end(runs), end(runs), end(runs), end(runs), end(runs));
      const small = fastest(1000);
      const large = fastest(4000);
      expect(
        large / small,
        `1,000 runs ${small.toFixed(0)} ms, 4,000 runs ${large.toFixed(0)} ms`,
      ).toBeLessThan(10);
    });
  }
});
