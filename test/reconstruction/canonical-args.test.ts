import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalArgs } from '../../src/reconstruction/canonical-args.js';

describe('canonicalArgs', () => {
  it('sorts keys at every depth', () => {
    expect(canonicalArgs({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}',
    );
    expect(canonicalArgs({ b: 2, a: 1 })).toBe(canonicalArgs({ a: 1, b: 2 }));
  });

  it('tells values apart that JSON tells apart, and prints non-JSON values without throwing', () => {
    expect(canonicalArgs({ a: 1 })).not.toBe(canonicalArgs({ a: '1' }));
    expect(canonicalArgs({ a: true })).not.toBe(canonicalArgs({ a: 1 }));
    expect(canonicalArgs([1, undefined])).toBe('[1,null]');
    expect(canonicalArgs({ a: undefined, b: 1 })).toBe('{"b":1}');
    expect(canonicalArgs(Number.NaN)).toBe('NaN');
    expect(canonicalArgs(10n)).toBe('10');
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic['self'] = cyclic;
    expect(canonicalArgs(cyclic)).toBe('{"a":1,"self":"[cycle]"}');
  });

  it('does not overflow on 10,000-deep values', () => {
    let v: unknown = 'leaf';
    for (let i = 0; i < 10_000; i++) v = { k: v };
    expect(() => canonicalArgs(v)).not.toThrow();
  });

  it('round-trips JSON data and ignores key insertion order', () => {
    const reverseKeys = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(reverseKeys)
        : v && typeof v === 'object'
          ? Object.fromEntries(
              Object.keys(v)
                .reverse()
                .map((k) => [k, reverseKeys((v as Record<string, unknown>)[k])]),
            )
          : v;
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalArgs(value);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
        expect(canonicalArgs(reverseKeys(value))).toBe(text);
      }),
    );
  });
});
