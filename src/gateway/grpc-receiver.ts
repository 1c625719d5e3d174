import * as http2 from 'node:http2';
import { Duplex } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import { bearerTokenMatches } from './bearer-token.js';
import { BodyBudget } from './body-budget.js';
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
  /**
   * Message bytes (as received, and after decompression) held at once by every Export call
   * being received or decoded; a call that would pass it gets RESOURCE_EXHAUSTED with a
   * RetryInfo detail. grpc-js bounds each message, not their sum over concurrent calls.
   * Default 256 MiB. Ignored when `budget` is given.
   */
  maxInFlightBytes?: number;
  /** A budget shared with the HTTP receiver (`startGateway` passes one). Default its own. */
  budget?: BodyBudget;
  /**
   * Longest a call's message may take to arrive whole, else DEADLINE_EXCEEDED and the stream
   * reset: without it, a sender that sends part of a message and goes quiet, with no deadline
   * of its own, holds its share of the budget for as long as its connection lives. Default
   * 300,000 ms (Node's HTTP `requestTimeout`).
   */
  receiveTimeoutMs?: number;
  /**
   * How long a connection with no call in progress is kept before it is closed (GOAWAY).
   * gRPC connections are not capped (grpc-js has no setting), and grpc-js's own default is
   * about 24 days: idle connections from many addresses could take every file descriptor.
   * Default 60,000 ms, the HTTP listener's idle timeout.
   */
  idleTimeoutMs?: number;
}

export function grpcServer(gateway: ToolwatchGateway, options: GrpcReceiverOptions = {}): grpc.Server {
  const budget =
    options.budget ?? new BodyBudget(options.maxInFlightBytes ?? 256 * 1024 * 1024, gateway.registry);
  const counted = inFlightBytes(budget, options.receiveTimeoutMs ?? 300_000);
  const server = new grpc.Server({
    'grpc.max_receive_message_length': options.maxRequestBytes ?? 16 * 1024 * 1024,
    'grpc.max_connection_idle_ms': options.idleTimeoutMs ?? 60_000,
    // The token is checked on the call's metadata, before grpc-js reads any of its message.
    interceptors: options.token !== undefined ? [bearerToken(options.token), counted] : [counted],
  });
  server.addService(TRACE_SERVICE, {
    Export: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
      try {
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
 * Refuses a call without the bearer token when its metadata (the HEADERS frame) is read,
 * before any of its message is: a caller without the token never holds a byte of the budget
 * the authenticated senders share, whatever message it declares. Refused, the call's stream
 * is reset (see `inFlightBytes`), so what it goes on sending is discarded.
 */
export function bearerToken(token: string): grpc.ServerInterceptor {
  return (_method, call) =>
    new grpc.ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, pass) => {
            const header = metadata.get('authorization')[0];
            if (bearerTokenMatches(typeof header === 'string' ? header : undefined, token)) pass(metadata);
            else call.sendStatus(statusError(grpc.status.UNAUTHENTICATED, 'missing or wrong bearer token'));
          },
        }),
    });
}

/**
 * Counts an Export call's bytes against the budget as its data frames arrive, before grpc-js
 * has the whole message (a message is handed over only once complete, so counting there
 * would let any number of slow senders each hold up to the message limit), plus the message
 * after decompression. Over the budget the call is refused at once. The bytes are given back
 * when the call's stream closes: answered, refused, cancelled, timed out or its connection
 * lost. grpc-js reads no data frame before its handler has the call's metadata, so a call
 * `bearerToken` refuses on its metadata is never counted; the frames it flushes afterwards are
 * discarded as any answered call's are.
 */
export function inFlightBytes(budget: BodyBudget, receiveTimeoutMs: number): grpc.ServerInterceptor {
  return (_method, call) => {
    const stream = http2StreamOf(call);
    const timer = setTimeout(() => {
      call.sendStatus({
        code: grpc.status.DEADLINE_EXCEEDED,
        details: `message not received whole within ${receiveTimeoutMs} ms`,
      });
    }, receiveTimeoutMs);
    timer.unref();
    let held = 0;
    const release = () => {
      clearTimeout(timer);
      budget.give(held, 'grpc');
      held = 0;
    };
    let compressed: boolean | undefined;
    let refused = false;
    const take = (n: number): boolean => {
      if (refused) return false;
      if (!budget.take(n, 'grpc')) {
        refused = true;
        budget.refused('grpc');
        call.sendStatus(
          statusError(grpc.status.RESOURCE_EXHAUSTED, budget.busyMessage(), budget.retryAfterMs),
        );
        return false;
      }
      held += n;
      return true;
    };
    if (stream) {
      // Before grpc-js's own listener: a refused chunk never reaches its decoder.
      stream.prependListener('data', (chunk: Buffer) => {
        // Answered already (unauthenticated, refused, too large, past its deadline): grpc-js
        // discards the rest.
        if (stream.headersSent) return;
        compressed ??= chunk[0] === 1;
        take(chunk.length);
      });
      // Answered before the sender finished: reset the stream (the status is queued before
      // the reset), so a sender that goes on, or goes quiet, does not keep what it sent held.
      stream.once('finish', () => {
        if (!stream.readableEnded && !stream.closed) stream.close(http2.constants.NGHTTP2_NO_ERROR);
      });
      stream.once('close', release);
    }
    return new grpc.ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMessage: (message: Buffer, pass) => {
            clearTimeout(timer);
            // A compressed message is held twice: as received and inflated. Without the
            // stream (another grpc-js layout) the message is all that can be counted.
            if ((compressed === true || !stream) && !take(message.length)) return;
            pass(message);
          },
          // Without the stream, the call's end is all there is to give the bytes back on.
          onCancel: stream ? undefined : release,
        }),
      sendStatus: (status, next) => {
        if (!stream) release();
        next(status);
      },
    });
  };
}

/** The HTTP/2 stream under grpc-js's call (its base call keeps it as `stream`). */
function http2StreamOf(call: grpc.ServerInterceptingCallInterface): http2.ServerHttp2Stream | undefined {
  let layer: unknown = call;
  for (let depth = 0; depth < 16 && layer !== null && typeof layer === 'object'; depth++) {
    const { stream, nextCall } = layer as { stream?: unknown; nextCall?: unknown };
    if (stream instanceof Duplex && typeof (stream as { respond?: unknown }).respond === 'function')
      return stream as http2.ServerHttp2Stream;
    layer = nextCall;
  }
  return undefined;
}

/**
 * Binds `server` to `host:port` (0 picks a free port), over TLS with this PEM pair when given;
 * resolves with the port bound.
 */
export function bindGrpc(
  server: grpc.Server,
  host: string,
  port: number,
  tls?: { cert: Buffer; key: Buffer },
): Promise<number> {
  const credentials = tls
    ? grpc.ServerCredentials.createSsl(null, [{ cert_chain: tls.cert, private_key: tls.key }], false)
    : grpc.ServerCredentials.createInsecure();
  return new Promise((resolve, reject) =>
    server.bindAsync(`${host.includes(':') ? `[${host}]` : host}:${port}`, credentials, (err, bound) =>
      err ? reject(err) : resolve(bound),
    ),
  );
}

/**
 * A gRPC error with `grpc-status-details-bin` (a `google.rpc.Status`), carrying RetryInfo
 * when the sender should come back later: the Collector retries RESOURCE_EXHAUSTED only then.
 */
function statusError(
  code: grpc.status,
  message: string,
  retryAfterMs?: number,
): Pick<grpc.StatusObject, 'code' | 'details' | 'metadata'> {
  const metadata = new grpc.Metadata();
  const rpcCode = code === grpc.status.RESOURCE_EXHAUSTED ? RpcCode.RESOURCE_EXHAUSTED : code;
  metadata.set('grpc-status-details-bin', Buffer.from(rpcStatus(rpcCode, message, retryAfterMs)));
  return { code, details: message, metadata };
}
