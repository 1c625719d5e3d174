/** 10 ** 0 … 10 ** 15, each exact. */
const POWERS_OF_TEN = Array.from({ length: 16 }, (_, i) => 10 ** i);

/**
 * Python's `round(x, digits)`: the nearest value with `digits` decimals, ties (exact in
 * binary) to even, so scores equal the seed evaluator's.
 */
export function roundHalfEven(x: number, digits: number): number {
  if (!Number.isFinite(x)) return x;
  const negative = x < 0;
  // Fast path, far from a tie: the scaled value's rounding error (< 1e-6 for these magnitudes)
  // cannot move it across a half, and k / 10**digits is the double nearest to the decimal
  // (division is correctly rounded), which is what the exact path returns.
  if (digits >= 0 && digits <= 15 && Number.isInteger(digits)) {
    // 0 and 1 are most scores and ratios; the path below returns them too (-0 as 0).
    if (x === 0 || x === 1) return x === 0 ? 0 : 1;
    const scale = POWERS_OF_TEN[digits]!;
    const scaled = Math.abs(x) * scale;
    if (scaled < 1e9) {
      const floor = Math.floor(scaled);
      const fraction = scaled - floor;
      if (Math.abs(fraction - 0.5) > 1e-6) {
        const k = fraction < 0.5 ? floor : floor + 1;
        return (negative ? -k : k) / scale;
      }
    }
  }
  // toFixed(100) is exact for every double ≥ 2**-48, far below any tie that matters here.
  const exact = Math.abs(x).toFixed(100);
  const dot = exact.indexOf('.');
  const kept = exact.slice(0, dot + 1 + digits);
  const rest = exact.slice(dot + 1 + digits);
  let up: boolean;
  if (rest[0]! > '5') up = true;
  else if (rest[0]! < '5') up = false;
  else if (/[1-9]/.test(rest.slice(1))) up = true;
  else up = Number(kept[kept.length - 1]) % 2 === 1;
  let result = Number(kept);
  if (up) result = Number((result + 10 ** -digits).toFixed(digits));
  return negative ? -result : result;
}
