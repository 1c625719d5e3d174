import { describe, expect, it } from 'vitest';
import { bearerTokenMatches } from '../../src/gateway/bearer-token.js';

describe('bearerTokenMatches', () => {
  it('reads the scheme case-insensitively, as HTTP defines it (a lower-case `bearer` was refused)', () => {
    for (const header of ['Bearer tok-123', 'bearer tok-123', 'BEARER tok-123', 'Bearer  tok-123 '])
      expect(bearerTokenMatches(header, 'tok-123'), header).toBe(true);
  });

  it('refuses a wrong, empty or missing token, and other schemes', () => {
    for (const header of [
      undefined,
      '',
      'Bearer',
      'Bearer ',
      'Bearer tok-12',
      'Basic tok-123',
      'Bearertok-123',
      'tok-123',
    ])
      expect(bearerTokenMatches(header, 'tok-123'), String(header)).toBe(false);
  });
});
