import { createHash } from 'node:crypto';
import { pythonJsonDumps } from './python-json.js';

/** SHA-256 of the UTF-8 bytes of `text`, lowercase hex. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * sha256 of the Python-canonical JSON of `config` (`json.dumps(sort_keys=True,
 * ensure_ascii=True, separators=(",", ":"))`), so a digest computed here equals agno's for
 * the same payload. Throws what `pythonJsonDumps` throws for values JSON cannot hold.
 */
export function configDigest(config: unknown): string {
  return sha256Hex(pythonJsonDumps(config));
}
