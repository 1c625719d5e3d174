/**
 * The processor (live, span by span, with its buffer, releases and late waits) against
 * `evaluateTraces` on the same exported spans (offline, whole traces): seeded random traces
 * of GenAI spans — agents nested in agents, workflows and HTTP spans, tool calls with errors,
 * model calls requesting tools (some never run), children that end after their agent,
 * names set after start, several traces interleaved — must get the same verdicts.
 */
import type { Tracer } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluateTraces } from '../../src/evaluation/evaluate-traces.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { parsePolicyText } from '../../src/policy/load-policy.js';
import {
  ToolwatchSpanProcessor,
  type ToolwatchSpanProcessorOptions,
} from '../../src/processor/toolwatch-span-processor.js';
import { policyArgumentsRead } from '../../src/scorers/arguments-read.js';
import { trajectory } from '../../src/scorers/trajectory.js';
import type { Policy, Verdict } from '../../src/types.js';
import {
  type Convention,
  conventions as conventionsOf,
  DIFFERENTIAL_POLICY,
  hasLooseCalls,
  implicitRunAroundAgents,
  interleaving,
  type Node,
  Program,
  trees as randomTrees,
  runInterleaved,
} from '../helpers/random-traces.js';
import { spansToOtlpJson } from '../interop/harness/spans-to-otlp-json.js';

/** `sampled`: half the traces out of the sample, and a rule for one agent name only (the other traces followed without their spans). */
function policy(sampled = false) {
  if (sampled) {
    return definePolicy({
      sampling: { ratio: 0.5 },
      rules: [
        {
          name: 'billing',
          match: { agent: 'billing' },
          scorers: [trajectory({ expectedTools: ['lookup'], forbiddenTools: ['delete'], maxCalls: 3 })],
        },
      ],
    });
  }
  return parsePolicyText(DIFFERENTIAL_POLICY);
}

const key = (v: Verdict) => `${v.trace_id}\u0000${v.span_id}\u0000${v.rule}`;
const sorted = (verdicts: readonly Verdict[]) =>
  [...verdicts].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));

/**
 * Runs the programs until the SDK recorded their spans' starts without a stall (`clocksAgree`),
 * on a fresh provider and processor each time: a stall between the SDK's two clock readings
 * makes the exported spans say another order than the one that ran, and the processor, on the
 * high-resolution clock, rightly disagrees with offline evaluation of them. A few stalls at
 * most, even on a loaded machine: more is a fault of the test.
 */
async function liveAndOffline(...args: Parameters<typeof runOnce>) {
  for (let attempt = 1; ; attempt++) {
    const result = await runOnce(...args);
    if (result.clocksAgree) return result;
    if (attempt === 10)
      throw new Error('the SDK recorded displaced span starts in 10 runs of the same programs');
  }
}

/** `wrapping`: the SDK-1.x mode, every hook forwarded to the exporting processor and no `onEnding`. */
async function runOnce(
  trees: Node[],
  order: number[],
  wrapping = false,
  sampled = false,
  conventions: Convention[] = [],
  limits: Partial<ToolwatchSpanProcessorOptions> = {},
  given?: Policy,
) {
  const exporter = new InMemorySpanExporter();
  const live: Verdict[] = [];
  const p = given ?? policy(sampled);
  const exporting = new SimpleSpanProcessor(exporter);
  const processor = new ToolwatchSpanProcessor({
    ...limits,
    policy: p,
    // Out-of-sample runs' records, compared with evaluateTraces' (off by default).
    sampledOutVerdicts: true,
    onVerdict: (v) => live.push(v),
    ...(wrapping ? { next: exporting } : {}),
  });
  const spanProcessors: SpanProcessor[] = wrapping
    ? [
        {
          onStart: (span, context) => processor.onStart(span, context),
          onEnd: (span) => processor.onEnd(span),
          forceFlush: () => processor.forceFlush(),
          shutdown: () => processor.shutdown(),
        },
      ]
    : [processor, exporting];
  const provider = new BasicTracerProvider({ spanProcessors });
  const program = new Program(provider.getTracer('fuzz'));
  runInterleaved(program, trees, order, conventions);
  await processor.forceFlush();
  const spans = [...exporter.getFinishedSpans()];
  await provider.shutdown();
  const offline = await evaluateTraces(spansToOtlpJson(spans), p);
  return {
    live: sorted(live),
    offline: sorted(offline),
    traceIds: program.traceIds,
    clocksAgree: program.clocksAgree,
  };
}

describe('live and offline verdicts agree on random traces', () => {
  it('gives every run the verdict offline evaluation gives it', { timeout: 300_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(randomTrees, interleaving, async (trees, order) => {
        fc.pre(!trees.some(implicitRunAroundAgents));
        const { live, offline } = await liveAndOffline(trees, order);
        const brief = (vs: Verdict[]) =>
          vs.map(
            (v) =>
              `${v.trace_id.slice(0, 4)} ${v.span_id.slice(0, 4)} ${v.agent} ${v.rule} ${v.results.map((r) => `${r.scorer}:${r.label}:${r.reason ?? ''}`).join(' | ')}`,
          );
        expect(brief(live)).toEqual(brief(offline));
        expect(live).toEqual(offline);
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 100), seed: Number(process.env.FUZZ_SEED ?? 20261202) },
    );
  });

  it('gives the same verdicts in wrapping mode (SDKs without onEnding)', { timeout: 300_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(randomTrees, interleaving, async (trees, order) => {
        fc.pre(!trees.some(implicitRunAroundAgents));
        const { live, offline } = await liveAndOffline(trees, order, true);
        expect(live).toEqual(offline);
      }),
      { numRuns: 60, seed: 20261203 },
    );
  });

  it('gives the same verdicts and sampled_out records with a sample and a rule for one agent', {
    timeout: 300_000,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(randomTrees, interleaving, async (trees, order) => {
        fc.pre(!trees.some(implicitRunAroundAgents));
        const { live, offline } = await liveAndOffline(trees, order, false, true);
        expect(live).toEqual(offline);
      }),
      { numRuns: 80, seed: 20261204 },
    );
  });

  it('gives the same verdicts for AI SDK and OpenInference spans', { timeout: 300_000 }, async () => {
    // Traces of each convention that got verdicts: the property must not hold vacuously.
    const judged: Record<Convention, number> = { gen_ai: 0, ai_sdk: 0, openinference: 0 };
    await fc.assert(
      fc.asyncProperty(randomTrees, interleaving, conventionsOf, async (trees, order, conventions) => {
        fc.pre(!trees.some(implicitRunAroundAgents));
        const { live, offline, traceIds } = await liveAndOffline(trees, order, false, false, conventions);
        expect(live).toEqual(offline);
        traceIds.forEach((id, i) => {
          if (live.some((v) => v.trace_id === id)) judged[conventions[i]!]++;
        });
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 100), seed: Number(process.env.FUZZ_SEED ?? 20261205) },
    );
    expect(Object.values(judged).every((n) => n >= 10)).toBe(true);
  });

  it("gives the same verdicts when scorers read only some tools' arguments (the others left unread)", {
    timeout: 300_000,
  }, async () => {
    // No identical-call limit, argument rules for two tools: the processor parses no other
    // tool's arguments nor any result, unless a trace's model calls carry messages.
    const partial = parsePolicyText(
      DIFFERENTIAL_POLICY.replace('        max_repeats: 1\n', '').replace(
        '        allow_additional_tool_calls: true\n',
        '        allow_additional_tool_calls: true\n        expected_tool_call_arguments: { reply: { id: 2 } }\n',
      ),
    );
    expect([...policyArgumentsRead(partial)!].sort()).toEqual(['lookup', 'reply']);
    let judged = 0;
    await fc.assert(
      fc.asyncProperty(randomTrees, interleaving, conventionsOf, async (trees, order, conventions) => {
        fc.pre(!trees.some(implicitRunAroundAgents));
        const { live, offline } = await liveAndOffline(trees, order, false, false, conventions, {}, partial);
        expect(live).toEqual(offline);
        judged += live.filter((v) => v.results.some((r) => r.label !== 'skipped')).length;
      }),
      { numRuns: 60, seed: 20261207 },
    );
    expect(judged).toBeGreaterThan(60);
  });

  it('under tight limits, gives every run its offline verdict or an incomplete record, never another verdict', {
    timeout: 300_000,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(
        randomTrees,
        interleaving,
        fc.record({
          maxTraces: fc.integer({ min: 1, max: 3 }),
          maxSpansPerTrace: fc.integer({ min: 2, max: 30 }),
          maxBufferedSpans: fc.integer({ min: 2, max: 60 }),
          maxBufferedBytes: fc.integer({ min: 600, max: 20_000 }),
        }),
        async (trees, order, limits) => {
          // Implicit runs (calls outside every agent) under span limits are a known gap (docs/processor.md).
          fc.pre(!trees.some(hasLooseCalls));
          const { live, offline } = await liveAndOffline(trees, order, false, false, [], limits);
          const incomplete = (v: Verdict) =>
            v.results.every((r) => r.label === 'skipped' && r.reason === 'incomplete_trace');
          const offlineByKey = new Map(offline.map((v) => [key(v), v]));
          // Nothing judged on part of a run: a run's verdict is offline's, or a record saying it was not judged.
          for (const v of live) {
            const reference = offlineByKey.get(key(v));
            expect(reference, `live verdict for a run offline does not have: ${key(v)}`).toBeDefined();
            if (!incomplete(v)) expect(v).toEqual(reference);
          }
          // No run lost without a word: every run offline judges gets a verdict or a record live.
          const liveKeys = new Set(live.map(key));
          for (const v of offline)
            expect(liveKeys.has(key(v)), `no verdict or record live for ${key(v)}`).toBe(true);
        },
      ),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 100), seed: Number(process.env.FUZZ_SEED ?? 20261206) },
    );
  });
});

describe('the random programs the differentials run', () => {
  const tool = (name: number): Node => ({
    kind: 'tool',
    name,
    value: 1,
    flag: false,
    late: false,
    children: [],
  });
  const agent: Node = {
    kind: 'agent',
    name: 0,
    value: 0,
    flag: false,
    late: false,
    children: [{ kind: 'llm', name: 0, value: 1, flag: false, late: false, children: [] }, tool(0), tool(1)],
  };
  /** A tracer whose `startSpan` runs `around` the SDK's. */
  const tracerWith = (
    around: (start: () => ReturnType<Tracer['startSpan']>) => ReturnType<Tracer['startSpan']>,
  ) => {
    const exporter = new InMemorySpanExporter();
    const inner = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer(
      'fuzz',
    );
    const tracer = {
      startSpan: (...args: Parameters<Tracer['startSpan']>) => around(() => inner.startSpan(...args)),
    } as unknown as Tracer;
    return { tracer, exporter };
  };
  /** Every start and end, on the high-resolution clock the processor reads. */
  const highResolutionTimes = (spans: readonly ReadableSpan[]) =>
    spans
      .flatMap((s) => {
        const start =
          performance.timeOrigin + (s as unknown as { _performanceStartTime: number })._performanceStartTime;
        return [start, start + s.duration[0] * 1000 + s.duration[1] / 1e6];
      })
      .sort((a, b) => a - b);

  it('keeps its steps more than a millisecond apart when a step stalls before the SDK reads the clock', () => {
    // A loaded machine preempting the process inside a step: the next step must still wait.
    const { tracer, exporter } = tracerWith((start) => {
      const until = performance.now() + 3;
      while (performance.now() < until) {}
      return start();
    });
    const program = new Program(tracer);
    runInterleaved(program, [agent], []);
    const times = highResolutionTimes(exporter.getFinishedSpans());
    expect(times).toHaveLength(8);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThan(1);
  });

  it('tells when the SDK recorded a span start displaced from its high-resolution start', () => {
    // A stall between the SDK's `Date.now()` and `performance.now()` readings, as the second span starts.
    let starts = 0;
    const { tracer } = tracerWith((start) => {
      if (++starts !== 2) return start();
      const now = Date.now;
      Date.now = () => now() - 3;
      try {
        return start();
      } finally {
        Date.now = now;
      }
    });
    const program = new Program(tracer);
    runInterleaved(program, [agent], []);
    expect(program.clocksAgree).toBe(false);
  });
});
