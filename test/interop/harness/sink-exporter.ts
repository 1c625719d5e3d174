import type { ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

/** Hands every exported batch to `sink`. Its shutdown is a no-op (see capture notes). */
export class SinkExporter implements SpanExporter {
  constructor(private readonly sink: (spans: ReadableSpan[]) => void) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.sink(spans);
    done({ code: 0 });
  }

  async shutdown(): Promise<void> {}

  async forceFlush(): Promise<void> {}
}
