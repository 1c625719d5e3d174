import { isJudged } from '../evaluation/is-judged.js';
import { terminalText } from '../input/printable.js';
import type { Verdict } from '../types.js';

/** Verdicts judged by no scorer (only `skipped` results), counted by their reason, for a summary line. */
export class UnjudgedTally {
  private readonly byReason = new Map<string, number>();
  private count = 0;

  /** Counts `verdict` when no scorer judged it; returns whether it was judged. */
  add(verdict: Verdict): boolean {
    if (isJudged(verdict)) return true;
    const reason = verdict.results[0]?.reason ?? 'skipped';
    this.byReason.set(reason, (this.byReason.get(reason) ?? 0) + 1);
    this.count++;
    return false;
  }

  /** The counts by reason, to be merged into another tally (`toolwatch score --jobs`). */
  entries(): Array<[string, number]> {
    return [...this.byReason];
  }

  merge(entries: ReadonlyArray<readonly [string, number]>): void {
    for (const [reason, n] of entries) {
      this.byReason.set(reason, (this.byReason.get(reason) ?? 0) + n);
      this.count += n;
    }
  }

  get total(): number {
    return this.count;
  }

  has(reason: string): boolean {
    return this.byReason.has(reason);
  }

  /** `sampled_out ×8, incomplete_trace ×1` (reasons escaped: a custom scorer writes its own). */
  reasons(): string {
    return [...this.byReason].map(([reason, n]) => `${terminalText(reason)} ×${n}`).join(', ');
  }
}
