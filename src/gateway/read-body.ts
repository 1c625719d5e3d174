import type { IncomingMessage } from 'node:http';
import { gunzip } from 'node:zlib';
import type { BodyBudget } from './body-budget.js';

/**
 * Reading a request body under the gateway's bounds (its size, the shared byte budget), for
 * every HTTP route (OTLP export and the guard).
 */

/** The body, or why it was not read: over `max`, over the shared budget, or the request went away. */
export function readBody(
  req: IncomingMessage,
  max: number,
  budget: BodyBudget,
  held: { bytes: number },
): Promise<Buffer | 'too_large' | 'busy' | 'aborted'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > max) {
        done = true;
        chunks.length = 0;
        resolve('too_large');
        return;
      }
      if (!budget.take(chunk.length, 'http')) {
        done = true;
        chunks.length = 0;
        resolve('busy');
        return;
      }
      held.bytes += chunk.length;
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!done) resolve(Buffer.concat(chunks));
      done = true;
    });
    req.on('error', () => {
      if (!done) resolve('aborted');
      done = true;
    });
    req.on('close', () => {
      if (!done) resolve('aborted');
      done = true;
    });
  });
}

/** Gunzips at most `max` bytes (a larger output rejects: gzip bombs). */
export function gunzipLimited(body: Buffer, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    gunzip(body, { maxOutputLength: max }, (err, out) => (err ? reject(err) : resolve(out))),
  );
}
