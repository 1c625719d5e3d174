import type { IncomingMessage, ServerResponse } from 'node:http';
import { bearerTokenMatches } from './bearer-token.js';
import type { BodyBudget } from './body-budget.js';
import { guardAnswerJson } from './guard-service.js';
import { RpcCode, rpcStatusJson } from './otlp-responses.js';
import { gunzipLimited, readBody } from './read-body.js';
import type { ToolwatchGateway } from './toolwatch-gateway.js';

export interface GuardRouteLimits {
  token: string | undefined;
  maxRequest: number;
  maxDecompressed: number;
  budget: BodyBudget;
  /** Bytes this request holds in `budget`, given back by the caller when it is done. */
  held: { bytes: number };
}

/**
 * `POST /v1/guard`: JSON in, the decision out (see `GuardService`). Under the same bearer
 * token, body limits and in-flight budget as `/v1/traces`; failures are JSON
 * `google.rpc.Status` objects (`code`, `message`) with the HTTP status that fits.
 */
export async function serveGuard(
  gateway: ToolwatchGateway,
  req: IncomingMessage,
  res: ServerResponse,
  limits: GuardRouteLimits,
): Promise<void> {
  if (req.method !== 'POST') return fail(req, res, 405, RpcCode.INVALID_ARGUMENT, 'use POST');
  if (limits.token !== undefined && !bearerTokenMatches(req.headers.authorization, limits.token)) {
    res.setHeader('www-authenticate', 'Bearer');
    return fail(req, res, 401, RpcCode.UNAUTHENTICATED, 'missing or wrong bearer token');
  }
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json')
    return fail(req, res, 415, RpcCode.INVALID_ARGUMENT, 'content-type must be application/json');
  const contentEncoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase().trim();
  if (contentEncoding !== 'gzip' && contentEncoding !== 'identity') {
    return fail(req, res, 415, RpcCode.INVALID_ARGUMENT, 'content-encoding must be gzip or identity');
  }
  const tooLarge = `request body over ${limits.maxRequest} bytes`;
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limits.maxRequest) {
    return fail(req, res, 413, RpcCode.INVALID_ARGUMENT, tooLarge);
  }
  const busy = () => {
    limits.budget.refused('http');
    res.setHeader('retry-after', String(Math.ceil(limits.budget.retryAfterMs / 1000)));
    return fail(req, res, 429, RpcCode.RESOURCE_EXHAUSTED, limits.budget.busyMessage());
  };
  const body = await readBody(req, limits.maxRequest, limits.budget, limits.held);
  if (body === 'too_large') return fail(req, res, 413, RpcCode.INVALID_ARGUMENT, tooLarge);
  if (body === 'busy') return busy();
  if (body === 'aborted') return;
  let payload = body;
  if (contentEncoding === 'gzip') {
    try {
      payload = await gunzipLimited(body, limits.maxDecompressed);
    } catch (err) {
      const over = (err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE';
      const message = over
        ? `decompressed body over ${limits.maxDecompressed} bytes`
        : 'body is not valid gzip';
      return fail(req, res, over ? 413 : 400, RpcCode.INVALID_ARGUMENT, message);
    }
    if (!limits.budget.take(payload.length, 'http')) return busy();
    limits.held.bytes += payload.length;
  }
  // Answered while the gateway drains too: agents still running need their decisions.
  const answer = gateway.guard.answer(payload.toString('utf8'));
  if (answer.kind === 'invalid') return fail(req, res, 400, RpcCode.INVALID_ARGUMENT, answer.message);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(guardAnswerJson(answer.decision));
}

function fail(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
): void {
  if (!req.complete) {
    res.setHeader('connection', 'close');
    req.resume();
  }
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(rpcStatusJson(code, message));
}
