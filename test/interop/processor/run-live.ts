import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { evaluateTraces } from '../../../src/evaluation/evaluate-traces.js';
import { ToolwatchSpanProcessor } from '../../../src/processor/toolwatch-span-processor.js';
import type { MisuseEvent, Policy, Problem, Verdict } from '../../../src/types.js';
import { runScenario } from '../harness/run-scenario.js';
import { spansToOtlpJson } from '../harness/spans-to-otlp-json.js';
import type { Framework, GroundTruth, ScenarioName } from '../harness/types.js';
import { ParentFirstReplay } from './parent-first.js';

/** Mastra builds its spans outside any TracerProvider; the harness replays them (onStart, then onEnd, no onEnding). */
export const REPLAYED: ReadonlySet<Framework> = new Set<Framework>(['mastra', 'mastra-v1']);

export interface LiveOptions {
  /**
   * Wrapping mode: the processor forwards every span to an exporting processor (`next`) and
   * hands it agent spans decorated with their verdict. Default false (the processor sits
   * beside the harness's exporter).
   */
  wrapping?: boolean;
}

/** What the processor delivered, in delivery order. */
export type Delivery = { type: 'misuse'; misuse: MisuseEvent } | { type: 'verdict'; verdict: Verdict };

export interface LiveRun {
  /** The spans the harness exported for the scenario (one run of the conversation for `history`). */
  spans: ReadableSpan[];
  groundTruth: GroundTruth;
  /** Everything the processor delivered, restricted to the scenario's traces. */
  deliveries: Delivery[];
  /** Verdicts the processor delivered for the scenario's traces. */
  live: Verdict[];
  misuses: MisuseEvent[];
  /** `evaluateTraces` on the OTLP/JSON encoding of `spans`. */
  offline: Verdict[];
  offlineProblems: Problem[];
  /** Wrapping mode only: the spans the processor handed to `next` (agent spans decorated with their verdict). */
  forwarded: ReadableSpan[];
  /** Spans the processor emitted itself (`evaluate {agent}`), through its own tracer provider. */
  emitted: ReadableSpan[];
}

/**
 * Runs a scenario live with a `ToolwatchSpanProcessor` attached, flushes it, then scores the
 * exported spans of the same run offline. `evaluate` spans go to a provider of their own, so
 * the harness's export (the recorded trace) holds exactly what the framework emitted plus the
 * attributes and events the processor wrote in place.
 */
export async function runLive(
  framework: Framework,
  scenario: ScenarioName,
  policy: Policy,
  options: LiveOptions = {},
): Promise<LiveRun> {
  const emittedExporter = new InMemorySpanExporter();
  const forwardedExporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(emittedExporter)],
  });
  const deliveries: Delivery[] = [];
  const processor = new ToolwatchSpanProcessor({
    policy,
    tracerProvider,
    ...(options.wrapping ? { next: new SimpleSpanProcessor(forwardedExporter) } : {}),
    onVerdict: (verdict) => deliveries.push({ type: 'verdict', verdict }),
    onMisuse: (misuse) => deliveries.push({ type: 'misuse', misuse }),
  });
  const attached = REPLAYED.has(framework) ? new ParentFirstReplay(processor) : processor;
  const { spans, groundTruth } = await runScenario(framework, scenario, { spanProcessors: [attached] });
  await processor.forceFlush();
  await tracerProvider.forceFlush();
  // Read before shutdown: shutting the processor down shuts `next` down, which empties its exporter.
  const forwarded = [...forwardedExporter.getFinishedSpans()];
  await processor.shutdown();

  // `history` keeps the second run of the conversation only; its first run is another trace.
  const traces = new Set(spans.map((s) => s.spanContext().traceId));
  const inScope = deliveries.filter((d) =>
    traces.has(d.type === 'verdict' ? d.verdict.trace_id : d.misuse.trace_id),
  );
  const offlineProblems: Problem[] = [];
  const offline = await evaluateTraces(spansToOtlpJson(spans), policy, { problems: offlineProblems });
  return {
    spans,
    groundTruth,
    deliveries: inScope,
    live: inScope.flatMap((d) => (d.type === 'verdict' ? [d.verdict] : [])),
    misuses: inScope.flatMap((d) => (d.type === 'misuse' ? [d.misuse] : [])),
    offline,
    offlineProblems,
    forwarded,
    emitted: [...emittedExporter.getFinishedSpans()].filter((s) => traces.has(s.spanContext().traceId)),
  };
}

/** Verdicts in a fixed order (trace, span, rule), whatever order they were delivered in. */
export function sortVerdicts(verdicts: readonly Verdict[]): Verdict[] {
  const key = (v: Verdict) => `${v.trace_id}\u0000${v.span_id}\u0000${v.rule}`;
  return [...verdicts].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}
