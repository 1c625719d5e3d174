import { diag } from '@opentelemetry/api';
import type { ToolwatchMetrics } from '../emission/metrics.js';

/**
 * What goes wrong inside the processor: each kind is logged through `diag` once, then only
 * counted (hooks run for every span); dropped spans also go to the `spans_dropped` counter.
 */
export class ProblemLog {
  private readonly _counts = new Map<string, number>();

  constructor(private readonly _metrics: ToolwatchMetrics) {}

  report(kind: string, message: string, error?: unknown): void {
    const seen = this._counts.get(kind) ?? 0;
    this._counts.set(kind, seen + 1);
    if (seen === 0) diag.warn(`toolwatch: ${message}`, ...(error === undefined ? [] : [error]));
  }

  /** `count` spans were not held (refused, or held and then given up) for `reason`. */
  dropped(reason: string, message: string, count = 1): void {
    if (count <= 0) return;
    this._metrics.recordSpansDropped(reason, count);
    this.report(`dropped_${reason}`, `dropping spans: ${message}`);
  }

  /** How often each kind happened, when more than once: said once at shutdown. */
  summarize(): void {
    for (const [kind, count] of this._counts) {
      if (count > 1) diag.warn(`toolwatch: ${kind} happened ${count} times`);
    }
  }
}
