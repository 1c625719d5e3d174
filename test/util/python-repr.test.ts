import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PyFloat } from '../../src/util/python-json.js';
import { pythonRepr, pythonStrRepr } from '../../src/util/python-repr.js';

describe('pythonRepr', () => {
  // Expected text printed by CPython 3 repr() of the same dict.
  it('matches CPython for scalars, containers and quoting', () => {
    const v = {
      a: true,
      b: null,
      c: 1.5,
      d: [1, 'x'],
      e: { k: "it's" },
      f: 'say "hi"',
      g: 'both \' and "',
      h: '\x7f\n\té\u200b😀\u{e0001}',
      i: new PyFloat(1),
      j: new PyFloat(1e16),
      k: new PyFloat(-0),
    };
    expect(pythonRepr(v)).toBe(
      `{'a': True, 'b': None, 'c': 1.5, 'd': [1, 'x'], 'e': {'k': "it's"}, 'f': 'say "hi"', 'g': 'both \\' and "', 'h': '\\x7f\\n\\té\\u200b😀\\U000e0001', 'i': 1.0, 'j': 1e+16, 'k': -0.0}`,
    );
    expect(pythonRepr([])).toBe('[]');
    expect(pythonRepr({})).toBe('{}');
    expect(pythonStrRepr('')).toBe("''");
    expect(pythonStrRepr('a\\b')).toBe("'a\\\\b'");
  });

  it('never loops on a self-containing value', () => {
    const a: unknown[] = [1];
    a.push(a);
    expect(pythonRepr(a)).toBe('[1, [...]]');
  });
});

const python = (() => {
  try {
    execFileSync('python3', ['-c', 'pass'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe.runIf(python)('pythonStrRepr against CPython repr(str)', () => {
  it('matches on random strings (printable and not, astral, quotes)', () => {
    const samples = fc.sample(
      fc.oneof(
        fc.string({ unit: 'grapheme' }),
        fc.string({
          unit: fc.constantFrom("'", '"', '\\', '\n', '\x00', '\x7f', '\u00a0', '\u2028', 'é', '😀', ' '),
        }),
        fc.string({ unit: 'binary-ascii' }),
      ),
      { numRuns: 300, seed: 11 },
    );
    // Python and Node ship different Unicode versions: a character newly assigned in one is
    // "unassigned" (non-printable) in the other. Such samples are compared only when both agree.
    const script =
      'import json,sys,unicodedata\nfor s in json.load(sys.stdin): print(json.dumps([repr(s), any(unicodedata.category(c) == "Cn" for c in s)]))';
    const out = execFileSync('python3', ['-c', script], { input: JSON.stringify(samples), encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.length > 0)
      .map((l) => JSON.parse(l) as [string, boolean]);
    expect(out.length).toBe(samples.length);
    const unassigned = /\p{Cn}/u;
    let compared = 0;
    samples.forEach((s, i) => {
      const [expected, pyUnassigned] = out[i]!;
      if (pyUnassigned !== unassigned.test(s)) return;
      compared++;
      expect(pythonStrRepr(s)).toBe(expected);
    });
    expect(compared).toBeGreaterThan(250);
  });
});
