/**
 * Budgets for judge calls (the policy's `judge`): at most `maxPerMinute` calls started in any
 * sliding 60-second window and at most `maxConcurrent` in flight. A refused call is never
 * queued; the caller records `skipped: budget`, so a burst cannot build an unbounded backlog.
 */
export class JudgeLimiter {
  private readonly _starts: number[] = [];
  private _active = 0;

  constructor(
    private readonly _budget: { maxPerMinute: number; maxConcurrent: number },
    private readonly _now: () => number = Date.now,
  ) {}

  /** Takes a slot when both budgets allow it; pair every `true` with one `release()`. */
  tryAcquire(): boolean {
    const now = this._now();
    while (this._starts.length > 0 && this._starts[0]! <= now - 60_000) this._starts.shift();
    if (this._active >= this._budget.maxConcurrent) return false;
    if (this._starts.length >= this._budget.maxPerMinute) return false;
    this._starts.push(now);
    this._active++;
    return true;
  }

  release(): void {
    if (this._active > 0) this._active--;
  }

  /** Calls in flight. */
  get active(): number {
    return this._active;
  }
}
