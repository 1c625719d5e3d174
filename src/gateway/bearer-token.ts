import { createHash, timingSafeEqual } from 'node:crypto';

/** The scheme is case-insensitive (RFC 9110 §11.1): `bearer x` and `BEARER x` are `Bearer x`. */
const BEARER = /^bearer[ \t]+/i;

/**
 * Checks `Authorization: Bearer <token>` in constant time: both sides are hashed first, so
 * neither the token's length nor a matching prefix shows in the comparison time.
 */
export function bearerTokenMatches(header: string | undefined, token: string): boolean {
  const scheme = header === undefined ? null : BEARER.exec(header);
  const presented = header && scheme ? header.slice(scheme[0].length).trim() : '';
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(token).digest();
  return timingSafeEqual(a, b) && presented.length > 0;
}
