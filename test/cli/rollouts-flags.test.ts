import { describe, expect, it } from 'vitest';
import { rolloutsCommand } from '../../src/cli/commands/rollouts.js';
import { capturedStderr } from '../helpers/captured-io.js';

describe('rollouts: numeric flags at their edges', () => {
  it('rollouts --timeout-ms beyond 2^31 - 1 is a usage error (Node fired it after 1 ms: every rollout timed out)', async () => {
    const { io, err } = capturedStderr();
    const code = await rolloutsCommand(
      ['--cases', 'no-such-cases.yaml', '--agent', './no-such-agent.mjs', '--timeout-ms', '3000000000'],
      io,
    );
    expect(code).toBe(2);
    expect(err()).toContain('--timeout-ms must be at most 2147483647 (24.8 days)');
  });
});
