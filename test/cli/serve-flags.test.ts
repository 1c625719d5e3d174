import { describe, expect, it } from 'vitest';
import { serveCommand } from '../../src/cli/commands/serve.js';
import { capturedStderr } from '../helpers/captured-io.js';

describe('serve: numeric flags at their edges', () => {
  it.each([
    'max-held-spans',
    'max-request-bytes',
    'max-decompressed-bytes',
    'max-in-flight-bytes',
    'max-held-bytes',
    'max-connections',
    'max-connections-per-client',
    'request-timeout',
    // Node's headersTimeout of 0 waits for headers for ever.
    'headers-timeout',
    // Node's keepAliveTimeout of 0 keeps idle connections for ever.
    'idle-timeout',
  ])(
    'serve --%s 0 is a usage error (it refused every request for as long as the gateway ran)',
    async (flag) => {
      const { io, err } = capturedStderr();
      // Nothing listens: the flags are checked before the policy is read or a port is bound.
      const code = await serveCommand(
        [
          '--policy',
          'no-such-policy.yaml',
          `--${flag}`,
          '0',
          '--http',
          'off',
          '--grpc',
          'off',
          '--metrics',
          'off',
        ],
        io,
        Promise.resolve(),
      );
      expect(code).toBe(2);
      expect(err()).toContain(`toolwatch serve: --${flag}: must be at least 1, got 0`);
    },
  );
});

describe('serve: a usage error', () => {
  it('is its one line and where the help is, not the whole help', async () => {
    const { io, err } = capturedStderr();
    const code = await serveCommand(['--max-connections', '0', '--http', 'off'], io, Promise.resolve());
    expect(code).toBe(2);
    expect(err()).toBe(
      'toolwatch serve: --max-connections: must be at least 1, got 0\n' +
        'toolwatch serve: --policy is required\n' +
        'run `toolwatch serve --help` for the options\n',
    );
    const unknown = capturedStderr();
    expect(await serveCommand(['--no-such-flag'], unknown.io, Promise.resolve())).toBe(2);
    expect(unknown.err()).toMatch(
      /^toolwatch serve: .*no-such-flag.*\nrun `toolwatch serve --help` for the options\n$/,
    );
  });
});
