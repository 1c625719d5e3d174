import type { IncomingMessage, ServerResponse } from 'node:http';
import { otlpProtobufFromJson } from '../otlp/otlp-protobuf-from-json.js';
import { bearerTokenMatches } from './bearer-token.js';
import { BodyBudget } from './body-budget.js';
import { serveGuard } from './guard-route.js';
import { exportResponse, exportResponseJson, RpcCode, rpcStatus, rpcStatusJson } from './otlp-responses.js';
import { gunzipLimited, readBody } from './read-body.js';
import type { ToolwatchGateway } from './toolwatch-gateway.js';

export interface HttpReceiverOptions {
  /** Required bearer token for `POST /v1/traces`. Default none (no auth). */
  token?: string;
  /** Largest request body as sent (compressed), else 413. Default 16 MiB. */
  maxRequestBytes?: number;
  /** Largest body after gunzip, else 413 (gzip bombs). Default 64 MiB. */
  maxDecompressedBytes?: number;
  /**
   * Body bytes (as received, and after gunzip) held at once by every request being received
   * or decoded; a request that would pass it gets 429 + Retry-After. Without it, many
   * concurrent or slowly sent bodies each below the request limit add up without bound.
   * Default 256 MiB. Ignored when `budget` is given.
   */
  maxInFlightBytes?: number;
  /** A budget shared with the gRPC receiver (`startGateway` passes one). Default its own. */
  budget?: BodyBudget;
}

type Encoding = 'protobuf' | 'json';

/**
 * `POST /v1/traces` (OTLP/HTTP, protobuf or JSON, gzip or not) plus `GET /metrics`,
 * `/healthz` and `/readyz`, and `POST /v1/guard` (`serveGuard`). Failures answer with a
 * reason (a `google.rpc.Status` in the request's encoding), never a stack trace.
 */
export function httpHandler(gateway: ToolwatchGateway, options: HttpReceiverOptions = {}) {
  const maxRequest = options.maxRequestBytes ?? 16 * 1024 * 1024;
  const maxDecompressed = options.maxDecompressedBytes ?? 64 * 1024 * 1024;
  const budget =
    options.budget ?? new BodyBudget(options.maxInFlightBytes ?? 256 * 1024 * 1024, gateway.registry);
  return (req: IncomingMessage, res: ServerResponse): void => {
    const held = { bytes: 0 };
    handle(gateway, req, res, options.token, maxRequest, maxDecompressed, budget, held)
      .catch(() => {
        if (!res.headersSent) plain(res, 500, 'internal error');
        else res.destroy();
      })
      .finally(() => budget.give(held.bytes, 'http'));
  };
}

export function serveProbes(gateway: ToolwatchGateway, req: IncomingMessage, res: ServerResponse): boolean {
  const path = (req.url ?? '').split('?')[0];
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  if (path === '/metrics') {
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
    res.end(gateway.registry.text());
  } else if (path === '/healthz') plain(res, 200, 'ok');
  else if (path === '/readyz') plain(res, gateway.ready ? 200 : 503, gateway.ready ? 'ready' : 'not ready');
  else return false;
  return true;
}

async function handle(
  gateway: ToolwatchGateway,
  req: IncomingMessage,
  res: ServerResponse,
  token: string | undefined,
  maxRequest: number,
  maxDecompressed: number,
  budget: BodyBudget,
  held: { bytes: number },
): Promise<void> {
  if (serveProbes(gateway, req, res)) return;
  const path = (req.url ?? '').split('?')[0];
  if (path === '/v1/guard')
    return serveGuard(gateway, req, res, { token, maxRequest, maxDecompressed, budget, held });
  if (path !== '/v1/traces') return refuse(req, res, 404, 'not found');
  if (req.method !== 'POST') return refuse(req, res, 405, 'use POST');
  const encoding = encodingOf(req.headers['content-type']);
  if (token !== undefined && !bearerTokenMatches(req.headers.authorization, token)) {
    res.setHeader('www-authenticate', 'Bearer');
    return fail(req, res, encoding ?? 'json', 401, RpcCode.UNAUTHENTICATED, 'missing or wrong bearer token');
  }
  if (!encoding) {
    return refuse(req, res, 415, 'content-type must be application/x-protobuf or application/json');
  }
  const contentEncoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase().trim();
  if (contentEncoding !== 'gzip' && contentEncoding !== 'identity') {
    return refuse(req, res, 415, 'content-encoding must be gzip or identity');
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxRequest) {
    return refuse(req, res, 413, `request body over ${maxRequest} bytes`);
  }
  const busy = () => {
    budget.refused('http');
    res.setHeader('retry-after', String(Math.ceil(budget.retryAfterMs / 1000)));
    const message = budget.busyMessage();
    return fail(req, res, encoding, 429, RpcCode.RESOURCE_EXHAUSTED, message, budget.retryAfterMs);
  };
  const body = await readBody(req, maxRequest, budget, held);
  if (body === 'too_large') return refuse(req, res, 413, `request body over ${maxRequest} bytes`);
  if (body === 'busy') return busy();
  if (body === 'aborted') return;
  let payload: Buffer = body;
  if (contentEncoding === 'gzip') {
    try {
      payload = await gunzipLimited(body, maxDecompressed);
      if (!budget.take(payload.length, 'http')) return busy();
      held.bytes += payload.length;
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
        return fail(
          req,
          res,
          encoding,
          413,
          RpcCode.INVALID_ARGUMENT,
          `decompressed body over ${maxDecompressed} bytes`,
        );
      }
      return fail(req, res, encoding, 400, RpcCode.INVALID_ARGUMENT, 'body is not valid gzip');
    }
  }
  let protobuf: Uint8Array;
  if (encoding === 'json') {
    try {
      protobuf = otlpProtobufFromJson(JSON.parse(payload.toString('utf8')));
    } catch (err) {
      const reason =
        err instanceof SyntaxError ? 'body is not JSON' : `invalid OTLP/JSON: ${(err as Error).message}`;
      return fail(req, res, encoding, 400, RpcCode.INVALID_ARGUMENT, reason);
    }
  } else protobuf = payload;
  const result = gateway.ingest(protobuf, 'http');
  switch (result.kind) {
    case 'accepted':
      if (encoding === 'json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(exportResponseJson(result.rejectedSpans, result.message));
      } else {
        res.writeHead(200, { 'content-type': 'application/x-protobuf' });
        res.end(exportResponse(result.rejectedSpans, result.message));
      }
      return;
    case 'exhausted':
      res.setHeader('retry-after', String(Math.max(1, Math.ceil(result.retryAfterMs / 1000))));
      return fail(req, res, encoding, 429, RpcCode.RESOURCE_EXHAUSTED, result.message, result.retryAfterMs);
    case 'unavailable':
      res.setHeader('retry-after', '1');
      return fail(req, res, encoding, 503, RpcCode.UNAVAILABLE, result.message);
    case 'invalid':
      return fail(req, res, encoding, 400, RpcCode.INVALID_ARGUMENT, result.message);
  }
}

function encodingOf(header: string | undefined): Encoding | undefined {
  const type = (header ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/x-protobuf' || type === 'application/protobuf') return 'protobuf';
  if (type === 'application/json') return 'json';
  return undefined;
}

function fail(
  req: IncomingMessage,
  res: ServerResponse,
  encoding: Encoding,
  httpStatus: number,
  code: number,
  message: string,
  retryAfterMs?: number,
): void {
  drain(req, res);
  if (encoding === 'json') {
    res.writeHead(httpStatus, { 'content-type': 'application/json' });
    res.end(rpcStatusJson(code, message, retryAfterMs));
  } else {
    res.writeHead(httpStatus, { 'content-type': 'application/x-protobuf' });
    res.end(rpcStatus(code, message, retryAfterMs));
  }
}

function refuse(req: IncomingMessage, res: ServerResponse, status: number, message: string): void {
  drain(req, res);
  plain(res, status, message);
}

/** An unread body is discarded and the connection closed, so a client cannot stream on. */
function drain(req: IncomingMessage, res: ServerResponse): void {
  if (!req.complete) {
    res.setHeader('connection', 'close');
    req.resume();
  }
}

function plain(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(`${message}\n`);
}
