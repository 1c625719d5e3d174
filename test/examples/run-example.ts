import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';

export interface RunningExample {
  child: ChildProcess;
  output: () => string;
  /** Resolves with the first match of `pattern` in stdout (waits for it). */
  waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<RegExpExecArray>;
  stop: () => Promise<void>;
}

/** Starts `npx tsx <file> ...args` from the repository root and collects its output. */
export function startExample(file: string, args: string[] = []): RunningExample {
  const child = spawn(process.execPath, ['--import', 'tsx', file, ...args], {
    cwd: new URL('../../', import.meta.url).pathname,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const waitFor = async (pattern: RegExp, timeoutMs = 60_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = pattern.exec(out);
      if (m) return m;
      if (child.exitCode !== null)
        throw new Error(`example exited (${child.exitCode}) before ${pattern}:\n${out}`);
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}:\n${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  };
  return { child, output: () => out, waitFor, stop };
}

/** Runs an example to completion; resolves with its exit code and output. */
export async function runExample(
  file: string,
  args: string[] = [],
): Promise<{ code: number | null; output: string }> {
  const running = startExample(file, args);
  const [code] = (await once(running.child, 'exit')) as [number | null];
  return { code, output: running.output() };
}
