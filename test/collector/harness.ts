import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';

export const configDir = new URL('../../collector-config/', import.meta.url).pathname;
const root = new URL('../../', import.meta.url).pathname;

/**
 * The Collector binary built from collector-config/build (cached by source hash). Undefined
 * only off CI on a machine without Go: CI must build it (`.ci/run` runs the script first).
 */
export function collectorBinary(): string | undefined {
  const hasGo = spawnSync('bash', ['-c', 'PATH=/usr/local/go/bin:$PATH go version']).status === 0;
  if (!hasGo && !process.env.CI) return undefined;
  const build = spawnSync('bash', [`${configDir}build/build.sh`], { encoding: 'utf8', timeout: 30 * 60_000 });
  if (build.status !== 0) throw new Error(`collector build failed:\n${build.stderr}`);
  return build.stdout.trim();
}

export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

export interface Proc {
  child: ChildProcess;
  output: () => string;
  /** SIGTERM and the exit code. */
  stop(): Promise<number | null>;
}

export function startProcess(command: string, args: string[], env: Record<string, string> = {}): Proc {
  const child = spawn(command, args, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => {
    output += String(d);
  });
  child.stderr!.on('data', (d) => {
    output += String(d);
  });
  return {
    child,
    output: () => output,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      return code as number | null;
    },
  };
}

export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
  proc?: Proc,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await Promise.resolve()
      .then(probe)
      .catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    if (proc && proc.child.exitCode !== null)
      throw new Error(`${what}: process exited ${proc.child.exitCode}\n${proc.output()}`);
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${proc ? `\n${proc.output()}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts a Collector and waits for its health_check to answer 200. */
export async function startCollector(
  binary: string,
  configs: string[],
  env: Record<string, string>,
): Promise<Proc> {
  const proc = startProcess(
    binary,
    configs.flatMap((c) => ['--config', c]),
    env,
  );
  await until(
    'collector health',
    async () => (await fetch(`http://${env.HEALTH_ENDPOINT}/`)).status === 200 || undefined,
    20_000,
    proc,
  );
  return proc;
}

/** `toolwatch serve` as a separate process; resolves once it listens. */
export async function startGatewayProcess(
  args: string[],
): Promise<Proc & { http: string; grpc: string; metrics: string }> {
  const proc = startProcess(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', ...args]);
  const line = await until('gateway listening', () => /listening.*\n/.exec(proc.output())?.[0], 30_000, proc);
  const address = (name: string) => new RegExp(`${name} (\\S+)`).exec(line)?.[1] ?? '';
  return Object.assign(proc, { http: address('http'), grpc: address('grpc'), metrics: address('metrics') });
}

/** One counter/gauge value from a Prometheus text page (sum over series matching `labels`). */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}
