import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Checks `Authorization: Bearer <token>` in constant time: both sides are hashed first, so
 * neither the token's length nor a matching prefix shows in the comparison time.
 */
export function bearerTokenMatches(header: string | undefined, token: string): boolean {
  const presented = header?.startsWith('Bearer ') ? header.slice(7).trim() : '';
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(token).digest();
  return timingSafeEqual(a, b) && presented.length > 0;
}
