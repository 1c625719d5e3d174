import type { PrometheusRegistry } from './prometheus-registry.js';

export type Transport = 'http' | 'grpc';

/**
 * Request body bytes held at once by every export call being received or decoded, over HTTP
 * and gRPC together: one budget, like the Collector's memory_limiter (one per process, whatever
 * the receiver), so `--max-in-flight-bytes` is what the gateway's bodies can take, not that
 * much per transport. Each transport has its own gauge; their sum never passes `max`.
 */
export class BodyBudget {
  /** The delay a refused sender is told to wait (Retry-After, gRPC RetryInfo). */
  readonly retryAfterMs = 1000;
  private _used = 0;
  private readonly _gauges: Record<Transport, (labels?: Record<string, string>, value?: number) => void>;
  private readonly _requests: (labels?: Record<string, string>, value?: number) => void;

  constructor(
    readonly max: number,
    registry: PrometheusRegistry,
  ) {
    this._gauges = {
      http: registry.upDown(
        'toolwatch_gateway_http_body_bytes',
        'HTTP request body bytes held by requests being received or decoded.',
      ),
      grpc: registry.upDown(
        'toolwatch_gateway_grpc_body_bytes',
        'gRPC message bytes held by Export calls being received or decoded.',
      ),
    };
    this._requests = registry.counter(
      'toolwatch_gateway_requests_total',
      'Export requests, by transport and outcome.',
    );
    // Zero series, so a dashboard shows both gauges before the first request.
    this._gauges.http({}, 0);
    this._gauges.grpc({}, 0);
  }

  /** Bytes held now, both transports. */
  get used(): number {
    return this._used;
  }

  /** Takes `n` bytes if they fit; false (nothing taken) if they would pass `max`. */
  take(n: number, transport: Transport): boolean {
    if (this._used + n > this.max) return false;
    this._used += n;
    this._gauges[transport]({}, n);
    return true;
  }

  give(n: number, transport: Transport): void {
    if (n === 0) return;
    this._used -= n;
    this._gauges[transport]({}, -n);
  }

  /** Counts a call refused for want of budget (`requests_total{outcome="in_flight_full"}`). */
  refused(transport: Transport): void {
    this._requests({ transport, outcome: 'in_flight_full' });
  }

  busyMessage(): string {
    return `gateway busy: request bodies in flight over ${this.max} bytes; retry later`;
  }
}
