import { cappedName } from '../emission/capped-name.js';

/** Distinct names a tally keeps a count for; the rest are counted together. */
export const MAX_TALLIED_NAMES = 1000;

/**
 * Counts by name (the agents of runs no rule matched) in memory bounded by
 * `MAX_TALLIED_NAMES` names of at most `MAX_NAME_LENGTH` characters, whatever the input holds:
 * beyond that, runs are counted in `others`.
 */
export class NameTally {
  private readonly counts = new Map<string, number>();
  private sum = 0;
  private rest = 0;

  add(name: string, n = 1): void {
    this.sum += n;
    const key = cappedName(name);
    const seen = this.counts.get(key);
    if (seen !== undefined) this.counts.set(key, seen + n);
    else if (this.counts.size < MAX_TALLIED_NAMES) this.counts.set(key, n);
    else this.rest += n;
  }

  get total(): number {
    return this.sum;
  }

  /** Counted runs whose name was not kept (past `MAX_TALLIED_NAMES` names). */
  get others(): number {
    return this.rest;
  }

  /** The `n` most frequent names with their counts, most frequent first, then by name. */
  top(n: number): Array<[string, number]> {
    return [...this.counts]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .slice(0, n);
  }

  get size(): number {
    return this.counts.size;
  }

  /** For merging into another tally (`toolwatch score --jobs`). */
  entries(): { names: Array<[string, number]>; others: number } {
    return { names: [...this.counts], others: this.rest };
  }

  merge(from: { names: ReadonlyArray<readonly [string, number]>; others: number }): void {
    for (const [name, n] of from.names) this.add(name, n);
    this.sum += from.others;
    this.rest += from.others;
  }
}
