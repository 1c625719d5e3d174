import type { CallsSoFar } from './decide-tool-call.js';
import { callKeyOf, rememberCall, repeatsOf } from './live-misuse.js';

/**
 * The calls of one run, kept by whoever sees them when no span does (the gateway's guard
 * endpoint keeps one per trace id and agent): the same counts and repeat keys, under the same
 * bound, as a live agent's in the processor.
 */
export class RunCalls implements CallsSoFar {
  calls = 0;
  repeats: Map<string, number> | undefined = undefined;

  /** One more call of this tool with these arguments (an object or JSON text). */
  record(tool: string, args: unknown): void {
    this.calls++;
    rememberCall(this, callKeyOf(tool, args));
  }

  repeatsOf(tool: string, args: unknown): number {
    return repeatsOf(this, tool, args);
  }
}
