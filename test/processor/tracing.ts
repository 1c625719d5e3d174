import type { Attributes, Context, Span, Tracer, TracerProvider } from '@opentelemetry/api';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import type { ReadableSpan, Sampler, SpanLimits, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import {
  ToolwatchSpanProcessor,
  type ToolwatchSpanProcessorOptions,
} from '../../src/processor/toolwatch-span-processor.js';

export interface PipelineOptions extends Omit<ToolwatchSpanProcessorOptions, 'tracerProvider'> {
  /** Where toolwatch sits relative to the exporting processor. Default `before`. */
  order?: 'before' | 'after';
  exporting?: 'simple' | 'batch';
  /** Wrapping mode as an SDK without `onEnding` drives it. */
  wrapping?: boolean;
  sampler?: Sampler;
  /** The provider's span limits (attribute and event counts). */
  spanLimits?: SpanLimits;
}

/** A real provider with toolwatch and an in-memory exporter. */
export function pipeline(options: PipelineOptions) {
  const exporter = new InMemorySpanExporter();
  const exporting =
    options.exporting === 'batch'
      ? new BatchSpanProcessor(exporter, { scheduledDelayMillis: 3_600_000 })
      : new SimpleSpanProcessor(exporter);
  let provider: BasicTracerProvider | undefined;
  // Lazy: the processor exists before the provider that it needs for `evaluate` spans.
  const tracerProvider = {
    getTracer: (name: string, version?: string) => provider!.getTracer(name, version),
    forceFlush: () => provider!.forceFlush(),
  } as TracerProvider;
  const processor = new ToolwatchSpanProcessor({
    ...options,
    tracerProvider,
    ...(options.wrapping ? { next: exporting } : {}),
  });
  let spanProcessors: SpanProcessor[];
  if (options.wrapping) {
    // sdk-trace-base 1.x has no onEnding: hide it.
    spanProcessors = [
      {
        onStart: (span, ctx) => processor.onStart(span, ctx),
        onEnd: (span) => processor.onEnd(span),
        forceFlush: () => processor.forceFlush(),
        shutdown: () => processor.shutdown(),
      },
    ];
  } else {
    spanProcessors = options.order === 'after' ? [exporting, processor] : [processor, exporting];
  }
  provider = new BasicTracerProvider({
    spanProcessors,
    ...(options.sampler ? { sampler: options.sampler } : {}),
    ...(options.spanLimits ? { spanLimits: options.spanLimits } : {}),
  });
  const tracer = provider.getTracer('test');
  return {
    provider,
    processor,
    exporter,
    tracer,
    async flush(): Promise<ReadableSpan[]> {
      await provider!.forceFlush();
      return exporter.getFinishedSpans();
    },
  };
}

export function inside(parent: Span | undefined): Context {
  return parent ? trace.setSpan(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
}

export function startAgent(tracer: Tracer, name: string, parent?: Span, attributes: Attributes = {}): Span {
  return tracer.startSpan(
    `invoke_agent ${name}`,
    { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': name, ...attributes } },
    inside(parent),
  );
}

let callCounter = 0;

export function startTool(tracer: Tracer, name: string, parent: Span, args: unknown = {}): Span {
  callCounter++;
  return tracer.startSpan(
    `execute_tool ${name}`,
    {
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': name,
        'gen_ai.tool.call.id': `call_${callCounter}`,
        'gen_ai.tool.call.arguments': JSON.stringify(args),
      },
    },
    inside(parent),
  );
}

export function tool(tracer: Tracer, name: string, parent: Span, args: unknown = {}): void {
  const span = startTool(tracer, name, parent, args);
  span.setAttribute('gen_ai.tool.call.result', '{"ok":true}');
  span.end();
}

export function startPlain(tracer: Tracer, name: string, parent?: Span): Span {
  return tracer.startSpan(name, { attributes: { 'http.request.method': 'GET' } }, inside(parent));
}

export function byName(spans: ReadableSpan[], name: string): ReadableSpan {
  const found = spans.find((s) => s.name === name);
  if (!found) throw new Error(`no span named ${name} in [${spans.map((s) => s.name).join(', ')}]`);
  return found;
}

export function evaluationEvents(span: ReadableSpan) {
  return span.events.filter((e) => e.name === 'gen_ai.evaluation.result');
}
