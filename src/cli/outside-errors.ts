import { terminalText } from '../input/printable.js';

/** Messages said one by one; the rest are only counted. */
const MAX_SAID = 20;

/**
 * The errors a `toolwatch rollouts` agent raises outside any rollout (its timers, promises it
 * never awaited): each distinct message said once (the first 20), every one counted. Once the
 * report is out, a further one still fails `--gate`, through the process's exit status: the
 * command owns its process, and the agent's leftover timers may fire after the report.
 */
export class OutsideErrors {
  private readonly said = new Set<string>();
  private raised = 0;
  private reported = false;

  constructor(
    private readonly write: (text: string) => void,
    private readonly gate: boolean,
  ) {}

  /** Errors raised so far. */
  get count(): number {
    return this.raised;
  }

  add(message: string): void {
    this.raised++;
    if (this.reported && this.gate) process.exitCode = 1;
    if (this.said.size >= MAX_SAID || this.said.has(message)) return;
    this.said.add(message);
    this.write(
      `toolwatch rollouts: the agent raised an error ${this.reported ? 'after its rollouts ended' : 'outside its rollouts'}: ${terminalText(message)}\n`,
    );
  }

  /** The report is out: later errors are said as coming after the rollouts, and fail `--gate` from here. */
  reportOut(): void {
    this.reported = true;
  }
}
