import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSampled } from '../../src/evaluation/sampling.js';
import { traceIdAt } from './helpers.js';

const traceId = fc.stringMatching(/^[0-9a-f]{32}$/);
const ratio = fc.double({ min: 0, max: 1, noNaN: true });

describe('isSampled', () => {
  it('uses the low 56 bits of the trace id as a fraction of 2^56', () => {
    expect(isSampled(traceIdAt(0.25), 0.3)).toBe(true);
    expect(isSampled(traceIdAt(0.25), 0.2)).toBe(false);
    // The boundary is exclusive: value / 2^56 < ratio.
    expect(isSampled(traceIdAt(0.5), 0.5)).toBe(false);
    // High bits do not matter.
    expect(isSampled('ffffffffffffffff' + '00' + '0'.repeat(14), 0.000001)).toBe(true);
  });

  it('samples everything at 1 and nothing at 0', () => {
    fc.assert(
      fc.property(traceId, (id) => {
        expect(isSampled(id, 1)).toBe(true);
        expect(isSampled(id, 0)).toBe(false);
      }),
    );
  });

  it('matches the documented formula and is deterministic', () => {
    fc.assert(
      fc.property(traceId, ratio, (id, r) => {
        const expected = Number.parseInt(id.slice(-14), 16) / 2 ** 56 < r;
        expect(isSampled(id, r)).toBe(expected || r >= 1);
        expect(isSampled(id, r)).toBe(isSampled(id, r));
      }),
    );
  });

  it('is nested: a run in the smaller sample is in every larger one', () => {
    fc.assert(
      fc.property(traceId, ratio, ratio, (id, a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        if (isSampled(id, lo)) expect(isSampled(id, hi)).toBe(true);
      }),
    );
  });

  it('selects about the ratio of random trace ids', () => {
    let n = 0;
    fc.assert(
      fc.property(traceId, (id) => {
        if (isSampled(id, 0.2)) n++;
      }),
      { numRuns: 5000, seed: 42 },
    );
    expect(n / 5000).toBeGreaterThan(0.17);
    expect(n / 5000).toBeLessThan(0.23);
  });

  it('treats a malformed id as outside every partial sample', () => {
    expect(isSampled('not-hex-at-all', 0.99)).toBe(false);
    expect(isSampled('not-hex-at-all', 1)).toBe(true);
  });
});
