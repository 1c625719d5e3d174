import type { Tracer } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { evaluateTraces } from '../../src/evaluation/evaluate-traces.js';
import {
  ToolwatchSpanProcessor,
  type ToolwatchSpanProcessorOptions,
} from '../../src/processor/toolwatch-span-processor.js';
import type { Policy, Verdict } from '../../src/types.js';
import { spansToOtlpJson } from '../interop/harness/spans-to-otlp-json.js';

/**
 * The processor's verdicts for the spans `program` makes (a real provider, toolwatch before an
 * exporter), and offline evaluation's of the same exported spans.
 */
export async function liveAndOffline(
  policy: Policy,
  program: (tracer: Tracer) => void,
  options: Partial<ToolwatchSpanProcessorOptions> = {},
): Promise<{ live: Verdict[]; offline: Verdict[]; spans: ReadableSpan[] }> {
  const exporter = new InMemorySpanExporter();
  const live: Verdict[] = [];
  const processor = new ToolwatchSpanProcessor({
    ...options,
    policy,
    onVerdict: (v) => live.push(v),
  });
  const provider = new BasicTracerProvider({
    spanProcessors: [processor, new SimpleSpanProcessor(exporter)],
  });
  program(provider.getTracer('test'));
  await processor.forceFlush();
  const spans = [...exporter.getFinishedSpans()];
  await provider.shutdown();
  const offline = await evaluateTraces(spansToOtlpJson(spans), policy);
  return { live, offline, spans };
}
