import { type ClientRequest, type IncomingMessage, request } from 'node:http';
import { type ClientHttp2Session, type ClientHttp2Stream, connect } from 'node:http2';
import { connect as connectTcp } from 'node:net';

export const EXPORT = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';

/** Every HTTP/2 session `slowCall` opened, for the test to destroy. */
export const sessions: ClientHttp2Session[] = [];
/** Every request `slowPost` opened, for the test to destroy. */
export const posts: ClientRequest[] = [];

/** Ends every slow sender still open. */
export function destroySlowSenders(): void {
  for (const s of sessions.splice(0)) s.destroy();
  for (const p of posts.splice(0)) p.destroy();
}

export interface Answer {
  status?: number;
  details?: Buffer;
  message?: string;
}

/**
 * A gRPC Export call over a raw HTTP/2 stream whose message declares `length` bytes and
 * sends only `sent` of them (that many zeros, or these bytes), holding the rest back: a slow
 * (or hostile) sender, which a grpc-js client cannot be made into.
 */
export function slowCall(
  address: string,
  length: number,
  sent: number | Buffer,
  headers: Record<string, string> = {},
): { stream: ClientHttp2Stream; answer: Answer } {
  const session = connect(`http://${address}`);
  session.on('error', () => undefined);
  sessions.push(session);
  const stream = session.request({
    ':method': 'POST',
    ':path': EXPORT,
    'content-type': 'application/grpc',
    te: 'trailers',
    ...headers,
  });
  stream.on('error', () => undefined);
  const answer: Answer = {};
  const read = (headers: Record<string, unknown>) => {
    if (headers['grpc-status'] === undefined) return;
    answer.status = Number(headers['grpc-status']);
    answer.message = decodeURIComponent(String(headers['grpc-message'] ?? ''));
    const bin = headers['grpc-status-details-bin'];
    if (typeof bin === 'string') answer.details = Buffer.from(bin, 'base64');
  };
  stream.on('response', read);
  stream.on('trailers', read);
  stream.resume();
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(length, 1);
  stream.write(prefix);
  const body = typeof sent === 'number' ? Buffer.alloc(sent) : sent;
  if (body.length > 0) stream.write(body);
  return { stream, answer };
}

/**
 * A plain HTTP POST to `/v1/traces` at `address` (host:port) that declares `length` bytes
 * and sends `sent` of them (that many zeros, or these bytes); the answer's status and
 * Retry-After are set once it arrives.
 */
export function slowPost(
  address: string,
  length: number,
  sent: number | Buffer,
  headers: Record<string, string> = {},
): { status?: number; retryAfter?: string } {
  const answer: { status?: number; retryAfter?: string } = {};
  const req = request({
    host: address.slice(0, address.lastIndexOf(':')),
    port: Number(address.slice(address.lastIndexOf(':') + 1)),
    method: 'POST',
    path: '/v1/traces',
    headers: { 'content-type': 'application/x-protobuf', 'content-length': String(length), ...headers },
  });
  req.on('error', () => undefined);
  req.on('response', (res: IncomingMessage) => {
    answer.status = res.statusCode;
    answer.retryAfter = res.headers['retry-after'] as string | undefined;
    res.resume();
  });
  req.write(typeof sent === 'number' ? Buffer.alloc(sent) : sent);
  posts.push(req);
  return answer;
}

/** Sends `head` (and `bytes` of a body announced longer), then nothing; resolves with the first answer line. */
export function stall(
  address: string,
  head: string,
  bytes: number,
): Promise<{ line: string; afterMs: number }> {
  const [host, port] = address.split(':');
  return new Promise((resolve, reject) => {
    const socket = connectTcp(Number(port), host);
    const started = performance.now();
    let answer = '';
    socket.on('data', (d) => {
      answer += d.toString('latin1');
      if (answer.includes('\r\n')) {
        resolve({ line: answer.split('\r\n')[0]!, afterMs: performance.now() - started });
        socket.destroy();
      }
    });
    socket.on('error', reject);
    socket.on('close', () =>
      resolve({ line: answer.split('\r\n')[0] ?? '', afterMs: performance.now() - started }),
    );
    socket.write(head);
    if (bytes > 0) socket.write(Buffer.alloc(bytes));
  });
}
