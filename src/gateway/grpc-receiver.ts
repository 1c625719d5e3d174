import * as grpc from '@grpc/grpc-js';
import { bearerTokenMatches } from './bearer-token.js';
import { exportResponse, RpcCode, rpcStatus } from './otlp-responses.js';
import type { ToolwatchGateway } from './toolwatch-gateway.js';

const identity = (b: Buffer): Buffer => b;

/**
 * `opentelemetry.proto.collector.trace.v1.TraceService`, with raw bytes in and out: the
 * gateway's own codec reads the request, so no .proto loading is needed.
 */
const TRACE_SERVICE: grpc.ServiceDefinition = {
  Export: {
    path: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
    requestStream: false,
    responseStream: false,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  },
};

export interface GrpcReceiverOptions {
  token?: string;
  /** Largest message after decompression, else RESOURCE_EXHAUSTED from grpc-js. Default 16 MiB. */
  maxRequestBytes?: number;
}

export function grpcServer(gateway: ToolwatchGateway, options: GrpcReceiverOptions = {}): grpc.Server {
  const server = new grpc.Server({
    'grpc.max_receive_message_length': options.maxRequestBytes ?? 16 * 1024 * 1024,
  });
  server.addService(TRACE_SERVICE, {
    Export: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
      try {
        if (options.token !== undefined) {
          const header = call.metadata.get('authorization')[0];
          if (!bearerTokenMatches(typeof header === 'string' ? header : undefined, options.token)) {
            callback(statusError(grpc.status.UNAUTHENTICATED, 'missing or wrong bearer token'));
            return;
          }
        }
        const result = gateway.ingest(call.request, 'grpc');
        switch (result.kind) {
          case 'accepted':
            callback(null, Buffer.from(exportResponse(result.rejectedSpans, result.message)));
            return;
          case 'exhausted':
            callback(statusError(grpc.status.RESOURCE_EXHAUSTED, result.message, result.retryAfterMs));
            return;
          case 'unavailable':
            callback(statusError(grpc.status.UNAVAILABLE, result.message));
            return;
          case 'invalid':
            callback(statusError(grpc.status.INVALID_ARGUMENT, result.message));
            return;
        }
      } catch {
        callback(statusError(grpc.status.INTERNAL, 'internal error'));
      }
    },
  });
  return server;
}

/**
 * A gRPC error with `grpc-status-details-bin` (a `google.rpc.Status`), carrying RetryInfo
 * when the sender should come back later: the Collector retries RESOURCE_EXHAUSTED only then.
 */
function statusError(code: grpc.status, message: string, retryAfterMs?: number): Partial<grpc.StatusObject> {
  const metadata = new grpc.Metadata();
  const rpcCode = code === grpc.status.RESOURCE_EXHAUSTED ? RpcCode.RESOURCE_EXHAUSTED : code;
  metadata.set('grpc-status-details-bin', Buffer.from(rpcStatus(rpcCode, message, retryAfterMs)));
  return { code, details: message, metadata };
}
