import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';

/**
 * The harness replays Mastra's finished spans as every `onStart` in start order, then every
 * `onEnd`. Starts are whole milliseconds, and ties keep the export order (children end, so are
 * exported, first), so a child can be started before its parent — which no TracerProvider
 * does. This adapter holds the replayed starts until the first `onEnd` and hands them on
 * parents first (otherwise in the replay's order), as a provider would have.
 */
export class ParentFirstReplay implements SpanProcessor {
  private _starts: Array<[Span, Context]> = [];

  constructor(private readonly _inner: SpanProcessor) {}

  onStart(span: Span, parentContext: Context): void {
    this._starts.push([span, parentContext]);
  }

  onEnd(span: ReadableSpan): void {
    this._release();
    this._inner.onEnd(span);
  }

  async forceFlush(): Promise<void> {
    this._release();
    await this._inner.forceFlush();
  }

  async shutdown(): Promise<void> {
    this._release();
    await this._inner.shutdown();
  }

  private _release(): void {
    if (this._starts.length === 0) return;
    const pending = this._starts;
    this._starts = [];
    const waiting = new Set(pending.map(([span]) => span.spanContext().spanId));
    const started = new Set<string>();
    while (started.size < pending.length) {
      for (const [span, parentContext] of pending) {
        const id = span.spanContext().spanId;
        if (started.has(id)) continue;
        const parent = span.parentSpanContext?.spanId;
        if (parent !== undefined && waiting.has(parent) && !started.has(parent)) continue;
        started.add(id);
        this._inner.onStart(span, parentContext);
        // Restart the scan: a span started now may free an earlier, tied child.
        break;
      }
    }
  }
}
