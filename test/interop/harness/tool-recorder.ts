/** One call that really reached a tool function. */
export interface RecordedCall {
  agent: string;
  name: string;
  args: unknown;
  threw: boolean;
  error?: string;
}

/**
 * Records, independently of any span, which tool functions ran, for which agent, with which
 * arguments, and whether they threw. Ground truth is built from this log.
 */
export class ToolRecorder {
  readonly calls: RecordedCall[] = [];

  /** Wraps a tool body so every invocation is logged before the result (or error) escapes. */
  wrap<A, R>(agent: string, name: string, fn: (args: A) => R | Promise<R>): (args: A) => Promise<R> {
    return async (args: A) => {
      const entry: RecordedCall = { agent, name, args: structuredClone(args), threw: false };
      this.calls.push(entry);
      try {
        return await fn(args);
      } catch (err) {
        entry.threw = true;
        entry.error = err instanceof Error ? err.message : String(err);
        throw err;
      }
    };
  }

  /** Forgets every recorded call (see `Script.forgetServed`). */
  forget(): void {
    this.calls.length = 0;
  }

  /** Records a call the framework itself performs (e.g. an OpenAI Agents handoff). */
  record(agent: string, name: string, args: unknown): void {
    this.calls.push({ agent, name, args: structuredClone(args), threw: false });
  }
}
