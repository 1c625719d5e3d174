/**
 * docs/processor.md bounds table, "live repeat counts": "an agent remembers at most 10,000 distinct calls
 * (long arguments by SHA-256) … calls seen before the cap still count, new ones past it are
 * not remembered live". `live-misuse.test.ts` makes 50,000 distinct calls and checks memory
 * and one repeat of the first call: it passes with the cap at 5,000 or 20,000. Here the cap is
 * hit exactly: the 10,000th distinct call is still remembered, the 10,001st is not.
 */
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { definePolicy } from '../../src/policy/define-policy.js';
import { ToolwatchSpanProcessor } from '../../src/processor/toolwatch-span-processor.js';
import { trajectory } from '../../src/scorers/trajectory.js';
import type { MisuseEvent } from '../../src/types.js';
import { startAgent, tool } from './tracing.js';

describe('docs/processor.md: an agent remembers at most 10,000 distinct calls live', () => {
  it('the 10,000th distinct call still counts its repeats, the 10,001st does not; calls before the cap still count', async () => {
    const misuses: MisuseEvent[] = [];
    // Out of the sample: only the live counts see the calls (no run is rebuilt at the end here).
    const processor = new ToolwatchSpanProcessor({
      policy: definePolicy({
        sampling: { ratio: 0 },
        rules: [{ name: 'r', match: { agent: '*' }, scorers: [trajectory({ maxRepeats: 1 })] }],
      }),
      onMisuse: (event) => misuses.push(event),
    });
    const provider = new BasicTracerProvider({ spanProcessors: [processor] });
    const tracer = provider.getTracer('session');
    // Half the calls have long arguments (remembered by digest), half short (remembered whole):
    // both kinds count against the same cap.
    const pad = 'y'.repeat(300);
    const args = (i: number) => (i % 2 === 0 ? { i, pad } : { i });
    const repeats = () => misuses.filter((m) => m.kind === 'repeated_call').map((m) => [m.detail.count]);
    const session = startAgent(tracer, 'session');
    for (let i = 0; i < 10_000; i++) tool(tracer, 'lookup', session, args(i));
    expect(misuses).toEqual([]);
    // The 10,000th distinct call (index 9,999) and the first, the last and first remembered.
    tool(tracer, 'lookup', session, args(9_999));
    tool(tracer, 'lookup', session, args(0));
    expect(repeats()).toEqual([[2], [2]]);
    // The 10,001st distinct call, short or long, is not remembered: its repeats go unseen live.
    tool(tracer, 'lookup', session, args(10_000));
    tool(tracer, 'lookup', session, args(10_000));
    tool(tracer, 'lookup', session, args(10_001));
    tool(tracer, 'lookup', session, args(10_001));
    expect(repeats()).toEqual([[2], [2]]);
    // Calls remembered before the cap go on counting past it.
    tool(tracer, 'lookup', session, { pad, i: 0 });
    expect(repeats()).toEqual([[2], [2], [3]]);
    session.end();
    await provider.shutdown();
  }, 30_000);
});
