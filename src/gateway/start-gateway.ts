import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Server as GrpcServer } from '@grpc/grpc-js';
import { BodyBudget } from './body-budget.js';
import { answerClientErrorsInTurn } from './client-errors.js';
import { limitConnections } from './connection-limit.js';
import { httpHandler, serveProbes } from './http-receiver.js';
import { loadGrpcReceiver } from './load-grpc-receiver.js';
import { ToolwatchGateway, type ToolwatchGatewayOptions } from './toolwatch-gateway.js';

export interface Listen {
  /** Default 127.0.0.1: the gateway is reachable from other hosts only when told so. */
  host?: string;
  /** 0 picks a free port. */
  port: number;
}

export interface StartGatewayOptions extends ToolwatchGatewayOptions {
  /** OTLP/HTTP listener (`/v1/traces`, also `/v1/guard`, `/metrics`, `/healthz`, `/readyz`). Default none. */
  http?: Listen;
  /**
   * OTLP/gRPC listener. Default none. It needs `@grpc/grpc-js`, an optional peer dependency
   * (`npm install @grpc/grpc-js`): without it, `startGateway` rejects with an error saying so.
   */
  grpc?: Listen;
  /** A separate listener for `/metrics`, `/healthz`, `/readyz`. Default none. */
  metrics?: Listen;
  /** Bearer token required on HTTP and gRPC export calls and on guard requests. Default none. */
  token?: string;
  /** PEM certificate chain and key paths: HTTPS and gRPC over TLS. Default plaintext. */
  tls?: { cert: string; key: string };
  /** Largest request as sent. Default 16 MiB. */
  maxRequestBytes?: number;
  /** Largest gzip-decompressed HTTP body. Default 64 MiB. */
  maxDecompressedBytes?: number;
  /**
   * Request bytes (as received, and after decompression) held at once by every export call
   * being received or decoded, HTTP and gRPC together; beyond, 429 + Retry-After or
   * RESOURCE_EXHAUSTED with RetryInfo. Default 256 MiB.
   */
  maxInFlightBytes?: number;
  /**
   * Open connections each HTTP listener (OTLP/HTTP, metrics) keeps; one more is closed on
   * arrival (`toolwatch_gateway_connections_refused_total{reason="max_connections"}`). gRPC
   * connections are not capped: grpc-js has no such setting. Default 4,096.
   */
  maxConnections?: number;
  /**
   * Open connections each HTTP listener keeps from one client address; one more is closed on
   * arrival (`toolwatch_gateway_connections_refused_total{reason="per_client"}`), so a client
   * holding its whole share (slow headers, slow bodies) leaves the rest to the others. Senders
   * behind one NAT or proxy address are one client. Default a quarter of `maxConnections`
   * (1,024), at least 1; `maxConnections` turns the share off.
   */
  maxConnectionsPerClient?: number;
  /**
   * Longest a request may take to arrive whole: HTTP answers 408 (Node's `requestTimeout`),
   * gRPC DEADLINE_EXCEEDED with the stream reset. Default 300,000 ms.
   */
  requestTimeoutMs?: number;
  /**
   * Longest an HTTP client may take to send a request's headers, counted from its connection
   * (or from the first byte of a request on a kept-alive connection); beyond, 408 and the
   * connection closed (Node's `headersTimeout`). A connection that sends nothing is held to it
   * too. Default 60,000 ms, the Collector's OTLP/HTTP receiver's `read_header_timeout`; at
   * most `requestTimeoutMs`.
   */
  headersTimeoutMs?: number;
  /**
   * How long an HTTP connection may sit idle between requests before it is closed (Node's
   * `keepAliveTimeout`), and a gRPC connection with no call in progress (GOAWAY). Default 60,000 ms, the Collector's OTLP/HTTP receiver's
   * `keepalive.idle_timeout`: Node's own 5 s is shorter than the idle timeouts of the clients
   * that export here (the Collector's exporters keep connections 90 s), so a connection
   * closed as an export was written to it failed that export.
   */
  idleTimeoutMs?: number;
  /** How long `close()` waits for forwarding before dead-lettering the rest. Default 30,000 ms. */
  drainTimeoutMs?: number;
}

export interface RunningGateway {
  gateway: ToolwatchGateway;
  /** `host:port` of each listener that was asked for. */
  addresses: { http?: string; grpc?: string; metrics?: string };
  /** Stop accepting, judge what is pending, flush forwarding, close listeners. */
  close(): Promise<void>;
}

/** Starts the gateway and its listeners; what `toolwatch serve` runs. */
export async function startGateway(options: StartGatewayOptions): Promise<RunningGateway> {
  // First: without @grpc/grpc-js, fail before a port is bound or a trace accepted.
  const grpcReceiver = options.grpc ? await loadGrpcReceiver() : undefined;
  const gateway = new ToolwatchGateway(options);
  const tls = options.tls
    ? { cert: readFileSync(options.tls.cert), key: readFileSync(options.tls.key) }
    : undefined;
  const servers: HttpServer[] = [];
  const addresses: RunningGateway['addresses'] = {};
  let rpc: GrpcServer | undefined;
  // One budget for both transports: the limit is the memory bodies may take, not that much twice.
  const budget = new BodyBudget(options.maxInFlightBytes ?? 256 * 1024 * 1024, gateway.registry);
  const maxConnections = options.maxConnections ?? 4096;
  const connections = {
    max: maxConnections,
    perClient: options.maxConnectionsPerClient ?? Math.max(1, Math.floor(maxConnections / 4)),
  };
  const timeouts = {
    ...requestTimeouts(options.requestTimeoutMs ?? 300_000, options.headersTimeoutMs ?? 60_000),
    keepAliveTimeout: options.idleTimeoutMs ?? 60_000,
  };
  try {
    if (options.http) {
      const handler = httpHandler(gateway, {
        ...(options.token !== undefined ? { token: options.token } : {}),
        ...(options.maxRequestBytes !== undefined ? { maxRequestBytes: options.maxRequestBytes } : {}),
        ...(options.maxDecompressedBytes !== undefined
          ? { maxDecompressedBytes: options.maxDecompressedBytes }
          : {}),
        budget,
      });
      const server = tls
        ? createHttpsServer({ ...tls, ...timeouts }, handler)
        : createHttpServer(timeouts, handler);
      limitConnections(server, 'http', connections, gateway.registry);
      answerClientErrorsInTurn(server);
      addresses.http = await listen(server, options.http);
      servers.push(server);
    }
    if (options.metrics) {
      const server = createHttpServer(timeouts, (req, res) => {
        if (!serveProbes(gateway, req, res)) {
          res.writeHead(404, { 'content-type': 'text/plain' });
          res.end('not found\n');
        }
      });
      limitConnections(server, 'metrics', connections, gateway.registry);
      answerClientErrorsInTurn(server);
      addresses.metrics = await listen(server, options.metrics);
      servers.push(server);
    }
    if (options.grpc && grpcReceiver) {
      const { bindGrpc, grpcServer } = grpcReceiver;
      rpc = grpcServer(gateway, {
        ...(options.token !== undefined ? { token: options.token } : {}),
        ...(options.maxRequestBytes !== undefined ? { maxRequestBytes: options.maxRequestBytes } : {}),
        budget,
        ...(options.requestTimeoutMs !== undefined ? { receiveTimeoutMs: options.requestTimeoutMs } : {}),
        ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
      });
      const host = options.grpc.host ?? '127.0.0.1';
      const port = await bindGrpc(rpc, host, options.grpc.port, tls);
      addresses.grpc = `${host}:${port}`;
    }
  } catch (err) {
    // A listener that cannot start (a port in use) must not leave the others running: the
    // process would stay up, half serving, after reporting that it could not start.
    for (const s of servers) {
      s.close();
      s.closeAllConnections();
    }
    rpc?.forceShutdown();
    await gateway.close(0);
    throw err;
  }
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      // Stop taking new connections first; in-flight requests finish (or get 503 while draining).
      const stopped = servers.map((s) => new Promise<void>((r) => s.close(() => r())));
      const rpcStopped = rpc ? new Promise<void>((r) => rpc!.tryShutdown(() => r())) : Promise.resolve();
      await gateway.close(options.drainTimeoutMs ?? 30_000);
      for (const s of servers) s.closeAllConnections();
      await Promise.all([...stopped, rpcStopped]);
    })();
    return closing;
  };
  return { gateway, addresses, close };
}

function listen(server: HttpServer, where: Listen): Promise<string> {
  const host = where.host ?? '127.0.0.1';
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(where.port, host, () => {
      server.off('error', reject);
      const port = (server.address() as AddressInfo).port;
      resolve(`${host}:${port}`);
    });
  });
}

/**
 * Node's HTTP timeouts for a request deadline of `requestMs` and a headers deadline of
 * `headersMs` (Node refuses a headers deadline past the request's). Node checks deadlines only
 * every `connectionsCheckingInterval`, 30 s by its default, so a deadline could be passed by
 * that much (a 1 s request deadline answered after 30 s, a 60 s headers deadline held a slow
 * client's connections for 90 s): checking four times per headers deadline holds both within
 * a quarter of it.
 */
function requestTimeouts(
  requestMs: number,
  headersMs: number,
): { requestTimeout: number; headersTimeout: number; connectionsCheckingInterval: number } {
  const headersTimeout = Math.min(headersMs, requestMs);
  return {
    requestTimeout: requestMs,
    headersTimeout,
    connectionsCheckingInterval: Math.min(30_000, Math.max(250, Math.floor(headersTimeout / 4))),
  };
}
