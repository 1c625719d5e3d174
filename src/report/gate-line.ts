import type { GateOutcome } from '../evaluation/check-gates.js';

function num(value: number): string {
  return Number(value.toFixed(4)).toString();
}

/** `gate NAME: VALUE [baseline B] (OP LIMIT) held|FAILED|skipped[ — note]`. */
export function gateLine(g: GateOutcome): string {
  const [[op, limit]] = Object.entries(g.threshold) as [[string, number]];
  const status = g.status === 'failed' ? 'FAILED' : g.status;
  const suffix = g.note ? ` — ${g.note}` : '';
  if (g.status === 'skipped' || g.value === null)
    return `gate ${g.gate}: ${status}${suffix} (${op} ${limit})`;
  const base = typeof g.baseline === 'number' ? ` baseline ${num(g.baseline)}` : '';
  return `gate ${g.gate}: ${num(g.value)}${base} (${op} ${limit}) ${status}${suffix}`;
}
