import { context, trace } from '@opentelemetry/api';
import { BasicTracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { SpanRole } from '../../src/conventions/span-role.js';
import { followedAgent, newEntry, type SpanEntry } from '../../src/processor/span-entry.js';
import { TraceMode, TraceState } from '../../src/processor/trace-state.js';

const tracer = new BasicTracerProvider().getTracer('trace-state-test');

/** A real SDK span, started under `parent` (or as a root). */
function span(name: string, parent?: ReadableSpan): ReadableSpan {
  const ctx =
    parent === undefined ? context.active() : trace.setSpanContext(context.active(), parent.spanContext());
  return tracer.startSpan(name, {}, ctx) as unknown as ReadableSpan;
}

/** A followed (out-of-sample) trace and its agent spans, each started under the one before. */
function sampledOut(names: string[]): { state: TraceState; agents: SpanEntry[] } {
  const state = new TraceState('t', TraceMode.SAMPLED_OUT, false, 0, performance.now());
  const agents: SpanEntry[] = [];
  let above: SpanEntry | undefined;
  for (const name of names) {
    const s = span(name, above?.span);
    const entry = followedAgent(s, s.spanContext().spanId, above?.spanId, above);
    state.hold(entry, 0);
    state.followAgent(s, entry);
    agents.push(entry);
    above = entry;
  }
  return { state, agents };
}

describe('TraceState', () => {
  it('out of the sample, the open agent above takes the place of the last agent when it ends', () => {
    const { state, agents } = sampledOut(['outer', 'inner']);
    const [outer, inner] = agents as [SpanEntry, SpanEntry];
    expect(state.lastAgent).toBe(inner);
    state.close(inner);
    state.followedAgentEnded(inner);
    expect(state.lastAgent).toBe(outer);
  });

  it('skips agents above that have already ended (a member returned before its child)', () => {
    const { state, agents } = sampledOut(['outer', 'middle', 'inner']);
    const [outer, middle, inner] = agents as [SpanEntry, SpanEntry, SpanEntry];
    state.close(middle);
    state.followedAgentEnded(middle);
    // `middle` was not the last agent started: `inner` still is.
    expect(state.lastAgent).toBe(inner);
    state.close(inner);
    state.followedAgentEnded(inner);
    expect(state.lastAgent).toBe(outer);
    state.close(outer);
    state.followedAgentEnded(outer);
    expect(state.lastAgent).toBeUndefined();
    expect(state.openCount).toBe(0);
  });

  it('counts each held entry once and forgets it once', () => {
    const state = new TraceState('t', TraceMode.JUDGED, false, 0, performance.now());
    const s = span('tool');
    const entry = newEntry(s, s.spanContext().spanId, undefined, SpanRole.TOOL);
    state.hold(entry, 3);
    expect([state.held, state.openCount, state.looseCalls, state.hasCalls, state.activeEpoch]).toEqual([
      1,
      1,
      1,
      true,
      3,
    ]);
    state.close(entry);
    state.close(entry);
    expect(state.openCount).toBe(0);
    expect(state.forget(entry.spanId)).toBe(true);
    expect(state.forget(entry.spanId)).toBe(false);
    expect([state.held, state.spans.size]).toEqual([0, 0]);
  });

  it('an ordinary span taken to be adopted stays counted, one forgotten does not', () => {
    const state = new TraceState('t', TraceMode.JUDGED, false, 0, performance.now());
    const kept = span('kept');
    const gone = span('gone');
    state.holdOrdinary('a', kept, 1);
    state.holdOrdinary('b', gone, 1);
    expect(state.takeOrdinary('a')).toBe(kept);
    expect(state.forgetOrdinary('b')).toBe(true);
    expect(state.forgetOrdinary('b')).toBe(false);
    expect([state.held, state.ordinary.size]).toEqual([1, 0]);
  });

  it('counts late runs queued to be judged until their microtask comes', () => {
    const state = new TraceState('t', TraceMode.JUDGED, false, 0, performance.now());
    state.lateQueued();
    state.lateQueued();
    state.lateFinished();
    expect(state.finishing).toBe(1);
  });
});
