/**
 * `--out F` appears whole or not at all. Three `toolwatch score --out F` runs at once used to
 * truncate and write F each at its own offsets: all exited 0 and F mixed the runs, with torn
 * lines (17 across 3 runs in one attempt). Each run now writes a temporary file beside F and
 * renames it into place, so F is one run's output, complete; a run that stops early leaves
 * no F, and one that fails removes its temporary file.
 */
import { spawn } from 'node:child_process';
import { access, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openOutput } from '../../src/cli/verdict-output.js';
import { parsePolicyText } from '../../src/policy/load-policy.js';
import type { Verdict } from '../../src/types.js';
import { capturedStderr } from '../helpers/captured-io.js';
import { TraceBuilder } from '../helpers/trace-builder.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const main = join(root, 'src/cli/main.ts');
const loader = pathToFileURL(join(root, 'node_modules/tsx/dist/loader.mjs')).href;
const POLICY =
  'version: 1\nrules:\n  - name: refunds\n    scorers:\n      - kind: trajectory\n        expected_tools: [get_order_detail]\n';
const RUNS = 8000;
const WRITERS = 3;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwatch-out-atomic-'));
  await writeFile(join(dir, 'policy.yaml'), POLICY);
  // One trace file per writer, its trace ids starting with the writer's number, its lines of
  // a length of their own (a region written by two runs then cuts a line).
  for (let w = 0; w < WRITERS; w++) {
    const lines: string[] = [];
    for (let i = 1; i <= RUNS; i++) {
      const t = new TraceBuilder({ traceId: `${w}${i.toString(16).padStart(31, '0')}` });
      t.agent(`refund-agent${'-'.repeat(w * 7)}`).tool('get_order_detail', { args: { order_id: `A${i}` } });
      lines.push(JSON.stringify(t.toOtlp()));
    }
    await writeFile(join(dir, `traces${w}.jsonl`), `${lines.join('\n')}\n`);
  }
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function score(args: string[]) {
  // Node itself, not the tsx launcher, which relays signals to a child process of its own.
  const child = spawn(process.execPath, ['--import', loader, main, 'score', ...args], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  const exit = new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.on('exit', (code) => resolve({ code, stderr })),
  );
  return { child, exit };
}

describe('--out F with concurrent writers', () => {
  it('F is one whole run, never a mix of runs or torn lines', { timeout: 180_000 }, async () => {
    const runs = Array.from({ length: WRITERS }, (_, w) =>
      score([`traces${w}.jsonl`, '--policy', 'policy.yaml', '--out', 'shared.jsonl']),
    );
    for (const { exit } of runs) expect((await exit).code).toBe(0);
    const lines = (await readFile(join(dir, 'shared.jsonl'), 'utf8')).split('\n');
    expect(lines.pop()).toBe('');
    const torn = lines.filter((line) => {
      try {
        JSON.parse(line);
        return false;
      } catch {
        return true;
      }
    });
    expect(torn).toEqual([]);
    const verdicts = lines.map((line) => JSON.parse(line) as Verdict);
    expect(verdicts).toHaveLength(RUNS);
    // Every verdict from the same writer's traces.
    expect(new Set(verdicts.map((v) => v.trace_id[0])).size).toBe(1);
    expect((await readdir(dir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  /** Resolves once the run has written verdicts to its output (the temporary file, or F itself). */
  function written(name: string): Promise<void> {
    return new Promise<void>((resolve) => {
      const poll = setInterval(async () => {
        const files = await readdir(dir);
        const temp = files.find((f) => f.startsWith(`.${name}.`) && f.endsWith('.tmp'));
        const direct = files.includes(name) ? (await readFile(join(dir, name))).length : 0;
        if ((temp && (await readFile(join(dir, temp))).length > 0) || direct > 0) {
          clearInterval(poll);
          resolve();
        }
      }, 5);
    });
  }

  it.each(['SIGKILL', 'SIGTERM', 'SIGINT'] as const)(
    'a run ended by %s leaves no F (it left F cut mid-run)',
    async (signal) => {
      const name = `killed-${signal}.jsonl`;
      const { child, exit } = score(['traces0.jsonl', '--policy', 'policy.yaml', '--out', name]);
      await Promise.race([written(name), exit.then(({ stderr }) => Promise.reject(new Error(stderr)))]);
      child.kill(signal);
      await exit;
      await expect(access(join(dir, name))).rejects.toThrow(/ENOENT/);
      // SIGTERM and SIGINT remove the temporary file too; SIGKILL cannot be caught.
      if (signal !== 'SIGKILL')
        expect((await readdir(dir)).filter((f) => f.startsWith(`.${name}.`))).toEqual([]);
    },
    180_000,
  );
});

describe('an output abandoned by a failing run', () => {
  const verdict: Verdict = {
    trace_id: 't',
    span_id: 's',
    agent: 'a',
    rule: 'r',
    passed: true,
    policy_digest: 'd',
    sampled: true,
    results: [],
  };

  it.each(['json', 'table', 'junit'] as const)(
    '%s: F keeps what it held, the temporary file is removed',
    async (format) => {
      const path = join(dir, `abandoned.${format}`);
      await writeFile(path, 'the previous report\n');
      const output = await openOutput(format, path, capturedStderr().io, { policy: parsePolicyText(POLICY) });
      for (let i = 0; i < 5000; i++) await output.add({ ...verdict, span_id: `s${i}` });
      await output.abort();
      expect(await readFile(path, 'utf8')).toBe('the previous report\n');
      expect((await readdir(dir)).filter((f) => f.startsWith(`.abandoned.${format}.`))).toEqual([]);
    },
  );

  it('a finished output replaces F whole', async () => {
    const path = join(dir, 'finished.jsonl');
    await writeFile(path, 'the previous report\n');
    const output = await openOutput('json', path, capturedStderr().io, { policy: parsePolicyText(POLICY) });
    await output.add(verdict);
    await output.finish();
    expect(await readFile(path, 'utf8')).toBe(`${JSON.stringify(verdict)}\n`);
  });
});
