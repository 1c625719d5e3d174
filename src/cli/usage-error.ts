import type { CliIo } from './cli-io.js';

/**
 * A usage error as Unix tools print it: the one line that says what is wrong, then where the
 * help is — not the whole help text, under which the line was lost. Returns exit status 2.
 */
export function usageError(io: CliIo, command: string, message: string): number {
  io.stderr(`toolwatch ${command}: ${message}\nrun \`toolwatch ${command} --help\` for the options\n`);
  return 2;
}
