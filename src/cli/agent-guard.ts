/**
 * Keeps a user's agent module from ending or crashing `toolwatch rollouts` while it runs:
 * without it, an agent that calls `process.exit(0)` ends the grid with exit 0 and nothing
 * printed (green in CI, nothing run), and an error thrown from one of its timers or a promise
 * it never awaits kills the process with a stack trace, whatever the rollouts found. Test
 * runners do the same for the code under test.
 *
 * While guarded, `process.exit` throws instead (inside a rollout, that rollout fails with the
 * message), and uncaught exceptions and unhandled rejections are handed to `onError` instead
 * of ending the process. `release()` puts everything back.
 */
export function guardAgentProcess(onError: (message: string) => void): { release: () => void } {
  const exit = process.exit;
  const guardedExit = ((code?: number | string | null) => {
    throw new Error(`the agent called process.exit(${code ?? ''})`);
  }) as typeof process.exit;
  const uncaught = (error: unknown) => onError(messageOf(error));
  const unhandled = (reason: unknown) => onError(`unhandled rejection: ${messageOf(reason)}`);
  process.exit = guardedExit;
  process.on('uncaughtException', uncaught);
  process.on('unhandledRejection', unhandled);
  return {
    release: () => {
      if (process.exit === guardedExit) process.exit = exit;
      process.off('uncaughtException', uncaught);
      process.off('unhandledRejection', unhandled);
    },
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
