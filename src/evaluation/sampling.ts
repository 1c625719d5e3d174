/**
 * Deterministic trace sampling (docs/policy.md): the low 56 bits of the trace id as a fraction
 * of 2^56. Every process (SDK, gateway, CLI) agrees, and samples are nested: a run in the
 * 0.1 sample is in the 0.2 sample. 56 bits fit a double exactly, so no precision is lost.
 */
export function isSampled(traceId: string, ratio: number): boolean {
  if (!(ratio > 0)) return false;
  if (ratio >= 1) return true;
  const value = Number.parseInt(traceId.slice(-14), 16);
  // A malformed id cannot be placed in the sample space; treat it as outside every partial sample.
  if (Number.isNaN(value)) return false;
  return value / 2 ** 56 < ratio;
}
