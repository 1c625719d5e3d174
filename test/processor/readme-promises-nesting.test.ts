/**
 * docs/processor.md bounds table, "nesting": "open descendants are counted per span (O(1) per span): a
 * 10,000-deep chain of agent spans ends in milliseconds". `bounds.test.ts` ends such a chain
 * but asserts no cost, so a chain that costs O(depth) per span (the bug this bound records:
 * 10,000 deep never finished) would still pass it given time.
 *
 * No wall-clock bound here: the machine is shared and its speed unknown, and the processor
 * exposes no count of its own work. What is machine-independent is a ratio measured in one
 * process, like against like: the CPU time of a chain of agent spans against that of as many
 * agent spans side by side under one agent (the same spans, the same verdict; only the nesting
 * differs). O(1) per span makes them equal (0.9–1.1 measured here). The chain is 20,000 deep,
 * twice the docs/processor.md's, so that an O(depth) step per span stands clear of noise: one more walk
 * up the chain per span start (pointer steps only) made the ratio 9.7–10.5 at 20,000 but only
 * 2.6–5.7 at 10,000; the old bug was far costlier. Each side is the fastest of 5 alternating
 * runs after a warm-up, so a GC pause or a busy neighbour in one run does not decide, and the
 * bound (3) leaves room for noise.
 */
import type { Span } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { ToolwatchSpanProcessor } from '../../src/processor/toolwatch-span-processor.js';
import type { Verdict } from '../../src/types.js';
import { fakeScorer, policyOf } from './harness.js';
import { startAgent, tool } from './tracing.js';

/** CPU ms to start and end `count` agent spans, each under the previous (`chain`) or all under the first. */
function cpuMs(count: number, shape: 'chain' | 'flat'): number {
  const verdicts: Verdict[] = [];
  const processor = new ToolwatchSpanProcessor({
    policy: policyOf([{ scorers: [fakeScorer({ judge: () => true })] }]),
    // The chain and its tool call: judged whole, not cut by the span limit.
    maxSpansPerTrace: count + 1,
    onVerdict: (v) => verdicts.push(v),
  });
  const provider = new BasicTracerProvider({ spanProcessors: [processor] });
  const tracer = provider.getTracer('nesting');
  const before = process.cpuUsage();
  const spans: Span[] = [startAgent(tracer, 'a0')];
  for (let i = 1; i < count; i++)
    spans.push(startAgent(tracer, `a${i}`, spans[shape === 'chain' ? i - 1 : 0]));
  tool(tracer, 'lookup', spans[count - 1]!);
  for (let i = count - 1; i >= 0; i--) spans[i]!.end();
  const used = process.cpuUsage(before);
  // root_only: one run, the outermost, judged (a `skipped: incomplete_trace` record would
  // mean the trace was cut, and the work not done).
  expect(verdicts.map((v) => [v.agent, v.results[0]!.label, v.results[0]!.reason])).toEqual([
    ['a0', 'pass', 'ok'],
  ]);
  return (used.user + used.system) / 1000;
}

describe('docs/processor.md: nesting costs O(1) per span', () => {
  it('a 20,000-deep chain of agent spans costs what 20,000 agent spans side by side cost', () => {
    cpuMs(1_000, 'chain');
    cpuMs(1_000, 'flat');
    const chain: number[] = [];
    const flat: number[] = [];
    for (let round = 0; round < 5; round++) {
      chain.push(cpuMs(20_000, 'chain'));
      flat.push(cpuMs(20_000, 'flat'));
    }
    const ratio = Math.min(...chain) / Math.min(...flat);
    expect(
      ratio,
      `chain ${chain.map((t) => t.toFixed(0))} ms, flat ${flat.map((t) => t.toFixed(0))} ms`,
    ).toBeLessThan(3);
  }, 60_000);
});
