import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { protobufOf, recordRun, type Sink, startSink, until } from './helpers.js';

const root = new URL('../../', import.meta.url).pathname;
let sink: Sink;

beforeEach(async () => {
  sink = await startSink();
});
afterEach(async () => {
  await sink.close();
});

function serve(args: string[]) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += String(d);
  });
  return { child, stderr: () => stderr };
}

describe('toolwatch serve', () => {
  it('on SIGTERM stops accepting, judges what is pending, flushes and exits 0', async () => {
    const { child, stderr } = serve([
      '--policy',
      'examples/policies/support.yaml',
      '--http',
      '127.0.0.1:0',
      '--grpc',
      'off',
      '--metrics',
      'off',
      '--forward',
      sink.url,
      '--decision-wait',
      '600000',
    ]);
    const port = (await until(
      'listening',
      () => /listening http 127\.0\.0\.1:(\d+)/.exec(stderr())?.[1],
      20_000,
    ))!;
    expect(stderr()).toMatch(/policy examples\/policies\/support\.yaml digest [0-9a-f]{64}/);
    const spans = recordRun(['lookup_account', 'delete_account']);
    const res = await fetch(`http://127.0.0.1:${port}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body: protobufOf(spans),
    });
    expect(res.status).toBe(200);
    expect(sink.bodies).toHaveLength(0); // a ten-minute decision wait: nothing judged yet
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
    expect(sink.spans()).toHaveLength(spans.length);
    const agent = sink.decoded().find((s) => s.name.startsWith('invoke_agent'))!;
    expect(agent.attributes['toolwatch.keep']).toBe(true);
    expect(stderr()).toMatch(/spans received 4, forwarded 4, dead-lettered 0, dropped 0/);
  });

  it('--token-env requires the bearer token; the listeners default to 127.0.0.1', async () => {
    process.env.TOOLWATCH_TEST_TOKEN = 'cli-secret';
    const { child, stderr } = serve([
      '--policy',
      'examples/policies/support.yaml',
      '--http',
      ':0',
      '--grpc',
      'off',
      '--metrics',
      'off',
      '--token-env',
      'TOOLWATCH_TEST_TOKEN',
    ]);
    try {
      const port = (await until(
        'listening',
        () => /listening http 127\.0\.0\.1:(\d+)/.exec(stderr())?.[1],
        20_000,
      ))!;
      const post = (headers: Record<string, string>) =>
        fetch(`http://127.0.0.1:${port}/v1/traces`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-protobuf', ...headers },
          body: protobufOf(recordRun(['lookup_account'])),
        });
      expect((await post({})).status).toBe(401);
      expect((await post({ authorization: 'Bearer cli-secret' })).status).toBe(200);
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
      delete process.env.TOOLWATCH_TEST_TOKEN;
    }
  });

  it('refuses bad flags with every problem listed (exit 2)', async () => {
    const { child, stderr } = serve(['--http', 'nope', '--forward', 'ftp://x', '--max-wait', 'soon']);
    const [code] = await once(child, 'exit');
    expect(code).toBe(2);
    expect(stderr()).toContain('--http: expected HOST:PORT or off');
    expect(stderr()).toContain('--forward: not an http(s) URL');
    expect(stderr()).toContain('--max-wait: expected a whole number');
    expect(stderr()).toContain('--policy is required');
  });
});
