import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';

let contextManagerSet = false;

/** The AI SDK parents spans through the active context: without this every span is its own trace. */
export function ensureContextManager(): void {
  if (contextManagerSet) return;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  contextManagerSet = true;
}

export interface Capture {
  provider: BasicTracerProvider;
  exporter: InMemorySpanExporter;
  /** Flushes every processor and returns the finished spans in end order. */
  finish(): Promise<ReadableSpan[]>;
}

/** A real provider whose spans land in memory, plus the caller's extra processors. */
export function createCapture(extra: SpanProcessor[] = []): Capture {
  ensureContextManager();
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    spanProcessors: [...extra, new SimpleSpanProcessor(exporter)],
  });
  return {
    provider,
    exporter,
    async finish() {
      await provider.forceFlush();
      return [...exporter.getFinishedSpans()];
    },
  };
}

/** Lets spans that end after the awaited result (AI SDK stream roots, Mastra events) close. */
export async function settle(ms = 20): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}
