import { type FileHandle, open } from 'node:fs/promises';
import { PolicyError } from './policy-error.js';
import { DEFAULT_POLICY_LIMITS } from './policy-limits.js';

/** Bytes read per call: the limit is checked after each. */
const CHUNK = 64 * 1024;

/**
 * The text of a policy file, read up to `maxBytes` bytes and refused past them. The file is
 * read, not measured: a pipe, a device (`/dev/zero`) or a file still growing has no size to
 * trust, so reading stops at the first byte over the limit.
 */
export async function readPolicyFile(
  path: string,
  maxBytes: number = DEFAULT_POLICY_LIMITS.maxBytes,
): Promise<string> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(path, 'r');
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      // One byte past the limit tells a file of exactly `maxBytes` from a larger one.
      const room = maxBytes + 1 - total;
      const buffer = Buffer.allocUnsafe(Math.min(CHUNK, room));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > maxBytes) {
        throw new PolicyError(
          [
            {
              path: '',
              message: `the file is larger than ${maxBytes} bytes, the limit for a policy (raise it with --max-policy-bytes, or the maxBytes option of loadPolicy)`,
            },
          ],
          path,
        );
      }
      chunks.push(bytesRead === buffer.length ? buffer : buffer.subarray(0, bytesRead));
    }
    return Buffer.concat(chunks, total).toString('utf8');
  } catch (err) {
    if (err instanceof PolicyError) throw err;
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message;
    throw new PolicyError([{ path: '', message: `cannot read policy file ${path}: ${reason}` }]);
  } finally {
    await handle?.close().catch(() => {});
  }
}
