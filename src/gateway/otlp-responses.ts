import { ProtoWriter } from '../otlp/protobuf-wire.js';

/** gRPC status codes the gateway answers with (also `google.rpc.Status.code` over HTTP). */
export const RpcCode = {
  INVALID_ARGUMENT: 3,
  RESOURCE_EXHAUSTED: 8,
  UNAUTHENTICATED: 16,
  UNAVAILABLE: 14,
  INTERNAL: 13,
} as const;

/**
 * `ExportTraceServiceResponse`: empty on full success, else `partial_success` with the
 * number of rejected spans and why (OTLP's way to refuse part of a request).
 */
export function exportResponse(rejectedSpans: number, message: string): Uint8Array {
  if (rejectedSpans === 0) return new Uint8Array(0);
  const w = new ProtoWriter();
  w.message(1, (p) => {
    p.tag(1, 0).uint(rejectedSpans);
    if (message) p.string(2, message);
  });
  return w.finish();
}

export function exportResponseJson(rejectedSpans: number, message: string): string {
  if (rejectedSpans === 0) return '{}';
  return JSON.stringify({ partialSuccess: { rejectedSpans: String(rejectedSpans), errorMessage: message } });
}

/**
 * `google.rpc.Status`, with a `google.rpc.RetryInfo` detail when `retryAfterMs` is given:
 * the Collector's OTLP exporters retry RESOURCE_EXHAUSTED only when RetryInfo is present,
 * and wait the delay it names.
 */
export function rpcStatus(code: number, message: string, retryAfterMs?: number): Uint8Array {
  const w = new ProtoWriter();
  w.tag(1, 0).uint(code);
  w.string(2, message);
  if (retryAfterMs !== undefined) {
    w.message(3, (any) => {
      any.string(1, 'type.googleapis.com/google.rpc.RetryInfo');
      any.message(2, (info) =>
        info.message(1, (duration) => {
          duration.tag(1, 0).uint(Math.floor(retryAfterMs / 1000));
          duration.tag(2, 0).uint((retryAfterMs % 1000) * 1_000_000);
        }),
      );
    });
  }
  return w.finish();
}

export function rpcStatusJson(code: number, message: string, retryAfterMs?: number): string {
  const status: Record<string, unknown> = { code, message };
  if (retryAfterMs !== undefined) {
    status.details = [
      {
        '@type': 'type.googleapis.com/google.rpc.RetryInfo',
        retryDelay: `${(retryAfterMs / 1000).toFixed(3)}s`,
      },
    ];
  }
  return JSON.stringify(status);
}
