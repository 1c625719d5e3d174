/**
 * A chain of nested agent runs judged under a `rootOnly: false` rule. Each nested run is
 * judged as its span ends, inside `span.end()` on the application's thread, from its own
 * subtree: its spans, with the run below it (rebuilt at its own end) taken as it is. Rebuilt
 * from the whole trace each time (every held span, the open ancestors included), a chain of n
 * runs cost n rebuilds of up to n spans: fastest of 3, one process, on a loaded 2-core
 * machine, 250 deep 49 ms, 1,000 740 ms, 4,000 17.9 s; from the subtree, 12 ms, 36 ms and
 * 44 ms. Root-only rules never rebuild a nested run (`readme-promises-nesting.test.ts`).
 *
 * No wall-clock bound: a ratio measured in one process, like against like. Four times the
 * depth may cost at most 6 times the time (linear with noise); whole-trace rebuilds cost
 * 9-27 times.
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
  return { tracer, verdicts: () => verdicts };
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

describe('nested runs judged under rootOnly: false', () => {
  for (const [shape, end] of [
    ['a chain', endChain],
    ['a fan of agents under one root', endFan],
    ['two chains interleaved', endTwoChains],
  ] as const) {
    it(`cost time linear in the size of ${shape} (4x the runs, at most 6x the time)`, {
      timeout: 300_000,
    }, () => {
      end(100);
      const fastest = (runs: number) => Math.min(end(runs), end(runs), end(runs));
      const small = fastest(250);
      const large = fastest(1000);
      expect(
        large / small,
        `250 runs ${small.toFixed(0)} ms, 1,000 runs ${large.toFixed(0)} ms`,
      ).toBeLessThan(6);
    });
  }
});
