/**
 * The policy limits (1 MiB per file, 100,000 nodes from aliases) are raised from the command
 * line of every command that reads a policy: score (and baseline save), rollouts, serve.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { capturedStderr } from '../helpers/captured-io.js';

let dir: string;
let big: string;
let traces: string;
let cases: string;

const POLICY =
  'version: 1\nrules:\n  - name: r\n    scorers:\n      - kind: tool_order\n        expected_tool: a\n';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwatch-policy-flags-'));
  big = join(dir, 'big.yaml');
  // Just over the default limit: a policy with a long comment.
  await writeFile(big, `${POLICY}#${'x'.repeat(1024 * 1024)}\n`);
  traces = join(dir, 'traces.jsonl');
  await writeFile(traces, '');
  cases = join(dir, 'cases.yaml');
  await writeFile(cases, '- { id: a, input: hi, expected_tools: [t] }\n');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const LIMIT = /larger than 1048576 bytes, the limit for a policy \(raise it with --max-policy-bytes/;

describe('--max-policy-bytes', () => {
  it('score: refuses a policy over 1 MiB by default, reads it when raised', async () => {
    const refused = capturedStderr();
    expect(await main(['score', traces, '--policy', big], refused.io)).toBe(2);
    expect(refused.err()).toMatch(LIMIT);
    const raised = capturedStderr();
    // The policy is read; the empty input then ends the run as nothing readable (exit 1, not
    // the usage and policy errors' 2).
    expect(await main(['score', traces, '--policy', big, '--max-policy-bytes', '2000000'], raised.io)).toBe(
      1,
    );
    expect(raised.err()).not.toMatch(/invalid toolwatch policy/);
    expect(raised.err()).toMatch(/nothing readable was found/);
  });

  it('baseline save takes it too', async () => {
    const { io, err } = capturedStderr();
    const out = join(dir, 'baseline.jsonl');
    expect(await main(['baseline', 'save', traces, '--policy', big, '--out', out], io)).toBe(2);
    expect(err()).toMatch(LIMIT);
  });

  it('rollouts: the policy beside the cases is bounded alike', async () => {
    const { io, err } = capturedStderr();
    const code = await main(
      ['rollouts', '--cases', cases, '--agent', join(dir, 'agent.mjs'), '--policy', big],
      io,
    );
    expect(code).toBe(2);
    expect(err()).toMatch(LIMIT);
  });

  it('serve: refuses the policy before it listens', async () => {
    const { io, err } = capturedStderr();
    const code = await main(
      ['serve', '--policy', big, '--http', 'off', '--grpc', 'off', '--metrics', 'off'],
      io,
    );
    expect(code).toBe(2);
    expect(err()).toMatch(LIMIT);
  });

  it.each(['score', 'rollouts', 'serve'])(
    '%s: a limit that is not a positive integer is a usage error',
    async (command) => {
      for (const flag of ['--max-policy-bytes', '--max-policy-alias-nodes']) {
        const { io, err } = capturedStderr();
        const args =
          command === 'score'
            ? ['score', traces, '--policy', big]
            : command === 'rollouts'
              ? ['rollouts', '--cases', cases, '--agent', 'a.mjs', '--policy', big]
              : ['serve', '--policy', big, '--http', 'off', '--grpc', 'off', '--metrics', 'off'];
        expect(await main([...args, flag, '0'], io)).toBe(2);
        expect(err()).toContain(`${flag} must be a positive integer`);
      }
    },
  );
});

describe('--max-policy-alias-nodes', () => {
  it('score: refuses aliases over the limit given, names the flag', async () => {
    const aliased = join(dir, 'aliased.yaml');
    await writeFile(
      aliased,
      'version: 1\nrules:\n  - name: r\n    scorers:\n      - kind: trajectory\n        expected_tools: &t [a, b]\n        forbidden_tools: *t\n',
    );
    const refused = capturedStderr();
    expect(
      await main(['score', traces, '--policy', aliased, '--max-policy-alias-nodes', '2'], refused.io),
    ).toBe(2);
    expect(refused.err()).toContain(
      'aliases expand to 3 nodes, over the limit of 2 (raise it with --max-policy-alias-nodes',
    );
  });
});
