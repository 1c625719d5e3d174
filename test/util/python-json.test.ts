import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  clonePythonValue,
  compareCodePoints,
  PyFloat,
  pythonFloatRepr,
  pythonJsonDumps,
} from '../../src/util/python-json.js';

// Expected strings below were produced by CPython 3 `json.dumps(v, sort_keys=True,
// ensure_ascii=True, separators=(",", ":"))`.
describe('pythonJsonDumps', () => {
  it('prints floats as Python repr does', () => {
    const v = {
      a: new PyFloat(1),
      b: 1e-7,
      c: new PyFloat(1e16),
      d: new PyFloat(-0),
      e: Number.POSITIVE_INFINITY,
      f: Number.NEGATIVE_INFINITY,
      g: Number.NaN,
      h: 0.1,
      i: 5e-324,
      j: 1.7976931348623157e308,
      k: 123.456,
      l: new PyFloat(1e22),
      m: 0.00012,
      n: 1e-5,
    };
    expect(pythonJsonDumps(v)).toBe(
      '{"a":1.0,"b":1e-07,"c":1e+16,"d":-0.0,"e":Infinity,"f":-Infinity,"g":NaN,"h":0.1,"i":5e-324,"j":1.7976931348623157e+308,"k":123.456,"l":1e+22,"m":0.00012,"n":1e-05}',
    );
  });

  it('escapes non-ASCII, controls and DEL; sorts keys by code point (astral after U+FFFF)', () => {
    const v = { é: 'ü', '😀': '😀', '\uffff': 'x', z: '\x7f\x00\x1f\n\r\t\b\f"\\/' };
    expect(pythonJsonDumps(v)).toBe(
      '{"z":"\\u007f\\u0000\\u001f\\n\\r\\t\\b\\f\\"\\\\/","\\u00e9":"\\u00fc","\\uffff":"x","\\ud83d\\ude00":"\\ud83d\\ude00"}',
    );
  });

  it('nests lists and dicts, true/false/null, ints of any size', () => {
    expect(pythonJsonDumps({ b: [1, 2, { y: null, x: true }], a: false })).toBe(
      '{"a":false,"b":[1,2,{"x":true,"y":null}]}',
    );
    expect(pythonJsonDumps(10n ** 21n)).toBe('1000000000000000000000');
    // Past 2**53 a number has lost its integer digits: it is the float it was written as.
    expect(pythonJsonDumps(1e21)).toBe('1e+21');
    expect(pythonJsonDumps(2 ** 53 - 1)).toBe('9007199254740991');
    expect(pythonJsonDumps(12345678901234567890n)).toBe('12345678901234567890');
    expect(pythonJsonDumps(-0)).toBe('0');
    expect(pythonJsonDumps(undefined)).toBe('null');
    expect(pythonJsonDumps({ a: undefined, b: 1 })).toBe('{"b":1}');
    expect(pythonJsonDumps([undefined])).toBe('[null]');
  });

  it('clonePythonValue copies containers deeply and keeps PyFloat', () => {
    const f = new PyFloat(1);
    const v = { a: [1, { b: f }], c: 'x' };
    const c = clonePythonValue(v);
    expect(c).toEqual(v);
    expect(c.a).not.toBe(v.a);
    expect((c.a[1] as { b: PyFloat }).b).toBe(f);
    expect(pythonJsonDumps(c)).toBe('{"a":[1,{"b":1.0}],"c":"x"}');
  });

  it('keeps insertion order with sortKeys: false', () => {
    expect(pythonJsonDumps({ b: 1, a: { d: new PyFloat(2), c: 3 } }, { sortKeys: false })).toBe(
      '{"b":1,"a":{"d":2.0,"c":3}}',
    );
  });

  it('refuses what Python json refuses', () => {
    expect(() => pythonJsonDumps(new Set([1]))).toThrow('Object of type Set is not JSON serializable');
    const cyc: Record<string, unknown> = {};
    cyc.self = cyc;
    expect(() => pythonJsonDumps(cyc)).toThrow('Circular reference detected');
    expect(() => pythonJsonDumps(() => 1)).toThrow(TypeError);
    // The same object twice without a cycle is fine.
    const shared = { x: 1 };
    expect(pythonJsonDumps([shared, shared])).toBe('[{"x":1},{"x":1}]');
  });

  it('float repr switches notation where Python does', () => {
    expect(pythonFloatRepr(1e15)).toBe('1000000000000000.0');
    expect(pythonFloatRepr(1e16)).toBe('1e+16');
    expect(pythonFloatRepr(0.0001)).toBe('0.0001');
    expect(pythonFloatRepr(0.00001)).toBe('1e-05');
    expect(pythonFloatRepr(1.2345678901234568e17)).toBe('1.2345678901234568e+17');
    expect(pythonFloatRepr(1.5e300)).toBe('1.5e+300');
    expect(pythonFloatRepr(-2.5)).toBe('-2.5');
  });

  it('compares strings by code point', () => {
    expect(compareCodePoints('\uffff', '😀')).toBeLessThan(0);
    expect(compareCodePoints('a', 'b')).toBeLessThan(0);
    expect(compareCodePoints('ab', 'a')).toBeGreaterThan(0);
    expect(compareCodePoints('😀', '😁')).toBeLessThan(0);
    expect(compareCodePoints('x', 'x')).toBe(0);
  });

  it('key order of the input never changes the output', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue()), (d) => {
        const reversed = Object.fromEntries(Object.entries(d).reverse());
        expect(pythonJsonDumps(reversed)).toBe(pythonJsonDumps(d));
      }),
    );
  });
});

// Differential check against CPython, when a python3 is on PATH.
const python = (() => {
  try {
    execFileSync('python3', ['-c', 'import json'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe.runIf(python)('pythonJsonDumps against CPython json.dumps', () => {
  it('matches on random JSON values, floats and astral keys', () => {
    const floatArb = fc.oneof(fc.double(), fc.integer({ min: -1e6, max: 1e6 })).map((x) => ({ f: x }));
    const samples = fc.sample(
      fc.oneof(
        fc.jsonValue(),
        fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue()),
        fc.array(floatArb),
      ),
      { numRuns: 300, seed: 7 },
    );
    // Hand values to Python as JSON in which every number that is a float on our side
    // (not a safe integer, or a PyFloat) travels as a string marker Python turns into float.
    const input = samples.map((s) =>
      JSON.stringify(wrapFloats(s), function (this: Record<string, unknown>, k, v) {
        // `this[k]` is the value before PyFloat.toJSON ran.
        if (this[k] instanceof PyFloat) return `__f__${(this[k] as PyFloat).value}`;
        return typeof v === 'number' && !Number.isSafeInteger(v) ? `__f__${v}` : v;
      }),
    );
    const script = [
      'import json, sys',
      'def fix(v):',
      '  if isinstance(v, str) and v.startswith("__f__"): return float(v[5:].replace("Infinity","inf"))',
      '  if isinstance(v, list): return [fix(x) for x in v]',
      '  if isinstance(v, dict): return {k: fix(x) for k, x in v.items()}',
      '  return v',
      'for line in sys.stdin.read().split("\\n"):',
      '  if line: print(json.dumps(fix(json.loads(line)), sort_keys=True, ensure_ascii=True, separators=(",", ":")))',
    ].join('\n');
    const out = execFileSync('python3', ['-c', script], { input: input.join('\n'), encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.length > 0);
    expect(out.length).toBe(samples.length);
    samples.forEach((s, i) => {
      const mine = pythonJsonDumps(wrapFloats(s));
      expect(mine).toBe(out[i]);
    });
  });
});

function wrapFloats(v: unknown): unknown {
  if (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 1 && 'f' in v) {
    const f = (v as { f: number }).f;
    return { f: new PyFloat(f) };
  }
  if (Array.isArray(v)) return v.map(wrapFloats);
  return v;
}
