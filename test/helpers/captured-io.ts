import type { CliIo } from '../../src/cli/cli-io.js';

/** A `CliIo` that drops stdout and keeps what the command writes to stderr. */
export function capturedStderr(): { io: CliIo; err: () => string } {
  let err = '';
  return {
    io: {
      stdout: () => undefined,
      stderr: (t) => {
        err += t;
      },
    },
    err: () => err,
  };
}
