/**
 * `toolwatch serve` writes the gateway's log to stderr: a line per failing verdict by default,
 * every line a JSON object with `--log-format json`, no verdict lines with `--log-verdicts none`.
 */
import { describe, expect, it } from 'vitest';
import { serveCommand } from '../../src/cli/commands/serve.js';
import { protobufOf, recordRun, until } from '../gateway/helpers.js';
import { capturedStderr } from '../helpers/captured-io.js';

async function serveAndJudge(flags: string[]) {
  const { io, err } = capturedStderr();
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  const exit = serveCommand(
    [
      '--policy',
      'examples/policies/support.yaml',
      '--http',
      '127.0.0.1:0',
      '--grpc',
      'off',
      '--metrics',
      'off',
      '--decision-wait',
      '50',
      ...flags,
    ],
    io,
    stopped,
  );
  const port = await until('listening', () => /"?http"?[ :=]+"?127\.0\.0\.1:(\d+)/.exec(err())?.[1], 20_000);
  for (const tools of [['lookup_account'], ['lookup_account', 'delete_account']]) {
    const res = await fetch(`http://127.0.0.1:${port}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body: protobufOf(recordRun(tools)),
    });
    expect(res.status).toBe(200);
  }
  await until('both traces judged', () => /stopped|verdict/.test(err()) || undefined, 200).catch(
    () => undefined,
  );
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  stop();
  expect(await exit).toBe(0);
  return err();
}

describe('toolwatch serve logging', () => {
  it('--log-format json: every line is one JSON object; one verdict line, for the failing run', async () => {
    const err = await serveAndJudge(['--log-format', 'json']);
    const lines = err.trimEnd().split('\n');
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records.map((r) => r.msg).sort()).toEqual(
      ['policy', 'listening', 'forwarding', 'verdict failed', 'draining', 'stopped'].sort(),
    );
    expect(records.at(-1)!.msg).toBe('stopped');
    const verdict = records.find((r) => r.msg === 'verdict failed')!;
    expect(verdict).toMatchObject({ level: 'warn', agent: 'support_agent', failed_scorers: ['trajectory'] });
    expect(verdict.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(records.at(-1)).toMatchObject({ received: 7, dropped: 7 });
  });

  it('text by default; --log-verdicts all logs the passing run too, none logs no verdict', async () => {
    const text = await serveAndJudge([]);
    expect(text).toMatch(
      /^toolwatch serve: warn verdict failed: trace_id=[0-9a-f]{32} span_id=[0-9a-f]{16} agent=support_agent rule=\S+ failed_scorers=trajectory$/m,
    );
    expect(text).not.toContain('verdict passed');
    const all = await serveAndJudge(['--log-verdicts', 'all']);
    // The two traces are judged independently, so their lines may come in either order.
    expect(all.match(/ verdict (passed|failed): /g)?.sort()).toEqual([
      ' verdict failed: ',
      ' verdict passed: ',
    ]);
    const none = await serveAndJudge(['--log-verdicts', 'none']);
    expect(none).not.toContain('verdict');
  });

  it('refuses unknown values with the valid ones', async () => {
    const { io, err } = capturedStderr();
    const code = await serveCommand(
      ['--policy', 'p.yaml', '--log-format', 'xml', '--log-verdicts', 'some'],
      io,
      Promise.resolve(),
    );
    expect(code).toBe(2);
    expect(err()).toContain('toolwatch serve: --log-format: expected text, json, got "xml"');
    expect(err()).toContain('toolwatch serve: --log-verdicts: expected failing, all, none, got "some"');
  });
});
