// The implementation as of dd40200, kept verbatim (imports aside) as the oracle of
// scorers-differential.test.ts: the optimised code must give byte-identical results.

import { PyFloat } from '../../../src/util/python-json.js';

/**
 * Python `==` on JSON-like values, as agno compares arguments: `True == 1`, `1 == 1.0`,
 * `False == 0` (a `PyFloat` is its number), containers compared element-wise, no string↔number coercion, `None` only
 * equals `None`. Iterative, so deeply nested values cannot overflow the stack.
 */
export function pythonEquals(a: unknown, b: unknown): boolean {
  // Fast path for the common scalar comparisons (no stack allocation).
  if (typeof a === 'string' || typeof b === 'string') return a === b;
  if (typeof a === 'number' && typeof b === 'number') return a === b;
  const stack: Array<[unknown, unknown]> = [[a, b]];
  while (stack.length > 0) {
    const [x, y] = stack.pop()!;
    if (!equalsShallow(x, y, stack)) return false;
  }
  return true;
}

function numeric(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (v instanceof PyFloat) return v.value;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'bigint') return Number(v);
  return undefined;
}

function equalsShallow(x: unknown, y: unknown, stack: Array<[unknown, unknown]>): boolean {
  const nx = numeric(x);
  const ny = numeric(y);
  if (nx !== undefined || ny !== undefined) {
    // NaN != NaN in Python too.
    return nx !== undefined && ny !== undefined && nx === ny;
  }
  if (x === null || x === undefined || y === null || y === undefined) {
    return (x === null || x === undefined) && (y === null || y === undefined);
  }
  if (typeof x === 'string' || typeof y === 'string') return x === y;
  if (Array.isArray(x) || Array.isArray(y)) {
    if (!Array.isArray(x) || !Array.isArray(y) || x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) stack.push([x[i], y[i]]);
    return true;
  }
  if (typeof x === 'object' && typeof y === 'object') {
    const kx = Object.keys(x as object);
    const ky = Object.keys(y as object);
    if (kx.length !== ky.length) return false;
    for (const k of kx) {
      if (!Object.hasOwn(y as object, k)) return false;
      stack.push([(x as Record<string, unknown>)[k], (y as Record<string, unknown>)[k]]);
    }
    return true;
  }
  return x === y;
}
