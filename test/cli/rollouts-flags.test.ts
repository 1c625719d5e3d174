import { describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/cli-io.js';
import { rolloutsCommand } from '../../src/cli/commands/rollouts.js';

function capture(): { io: CliIo; err: () => string } {
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

describe('rollouts: numeric flags at their edges', () => {
  it('rollouts --timeout-ms beyond 2^31 - 1 is a usage error (Node fired it after 1 ms: every rollout timed out)', async () => {
    const { io, err } = capture();
    const code = await rolloutsCommand(
      ['--cases', 'no-such-cases.yaml', '--agent', './no-such-agent.mjs', '--timeout-ms', '3000000000'],
      io,
    );
    expect(code).toBe(2);
    expect(err()).toContain('--timeout-ms must be at most 2147483647 (24.8 days)');
  });
});
