import { printable } from '../input/printable.js';

/**
 * Problems printed on stderr with a per-kind cap: the first `perKind` of each kind are
 * shown, the rest counted and summed up at the end, so a bad file cannot flood a CI log.
 */
export class ProblemLog {
  private readonly shown = new Map<string, number>();
  private readonly hidden = new Map<string, number>();

  constructor(
    private readonly write: (text: string) => void,
    private readonly prefix: string,
    private readonly perKind = 20,
  ) {}

  report(kind: string, where: string, message: string): void {
    const n = this.shown.get(kind) ?? 0;
    if (n >= this.perKind) {
      this.hidden.set(kind, (this.hidden.get(kind) ?? 0) + 1);
      return;
    }
    this.shown.set(kind, n + 1);
    this.write(`${this.prefix}: ${where ? `${printable(where, 200)}: ` : ''}${printable(message, 300)}\n`);
  }

  /** One line per kind whose messages were cut. */
  finish(): void {
    for (const [kind, n] of this.hidden)
      this.write(`${this.prefix}: … and ${n} more ${kind} problems not shown\n`);
  }
}
