import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningExample, startExample } from './run-example.js';

const configDir = new URL('../../collector-config/', import.meta.url).pathname;
const hasPrometheus = spawnSync('prometheus', ['--version']).status === 0;
// CI installs Prometheus (.ci/run); a developer machine without it skips, loudly.
const describeProm = hasPrometheus || process.env.CI ? describe : describe.skip;
if (!hasPrometheus && !process.env.CI)
  console.warn('prometheus is not installed: skipping the live alert tests');

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

async function getJson(url: string): Promise<any> {
  const res = await fetch(url);
  return res.json();
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describeProm('alert rules (collector-config/toolwatch-alerts.yml)', () => {
  it('pass promtool check and their unit tests', () => {
    const check = spawnSync('promtool', ['check', 'rules', 'toolwatch-alerts.yml'], { cwd: configDir });
    expect(check.status, String(check.stdout) + String(check.stderr)).toBe(0);
    const test = spawnSync('promtool', ['test', 'rules', 'toolwatch-alerts.test.yml'], { cwd: configDir });
    expect(test.status, String(test.stdout) + String(test.stderr)).toBe(0);
  });
});

describeProm('live misuse alert with a real Prometheus', () => {
  let app: RunningExample;
  let prometheus: ChildProcess;
  let dir: string;
  let appPort: number;
  let promUrl: string;

  beforeAll(async () => {
    app = startExample('examples/prometheus-metrics.ts', ['0']);
    appPort = Number((await app.waitFor(/listening on 127\.0\.0\.1:(\d+)/))[1]);

    dir = mkdtempSync(join(tmpdir(), 'toolwatch-prom-'));
    copyFileSync(join(configDir, 'toolwatch-alerts.yml'), join(dir, 'toolwatch-alerts.yml'));
    writeFileSync(
      join(dir, 'prometheus.yml'),
      [
        'global: { scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s }',
        'rule_files: [toolwatch-alerts.yml]',
        'scrape_configs:',
        '  - job_name: toolwatch',
        `    static_configs: [{ targets: ['127.0.0.1:${appPort}'] }]`,
      ].join('\n'),
    );
    const promPort = await freePort();
    promUrl = `http://127.0.0.1:${promPort}`;
    prometheus = spawn(
      'prometheus',
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${promPort}`,
      ],
      { stdio: 'ignore' },
    );
    await until(
      'prometheus ready',
      async () => ((await fetch(`${promUrl}/-/ready`)).ok ? true : undefined),
      30_000,
    );
    await until(
      'the app scraped',
      async () => {
        const q = await getJson(`${promUrl}/api/v1/query?query=toolwatch_tool_misuse_total`);
        return q.data.result.length > 0 ? true : undefined;
      },
      30_000,
    );
  }, 90_000);

  afterAll(async () => {
    await app?.stop();
    if (prometheus && prometheus.exitCode === null) {
      prometheus.kill('SIGTERM');
      await once(prometheus, 'exit');
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('exposes the zero-initialised series before anything happens', async () => {
    const q = await getJson(`${promUrl}/api/v1/query?query=toolwatch_tool_misuse_total`);
    const kinds = q.data.result.map((r: any) => r.metric.toolwatch_misuse_kind).sort();
    expect(kinds).toEqual(['call_budget', 'forbidden', 'repeated_call', 'unexpected']);
    expect(q.data.result.every((r: any) => r.value[1] === '0')).toBe(true);
  });

  it('a clean run fires nothing; a forbidden write fires ToolwatchToolMisuse within seconds', async () => {
    expect((await fetch(`http://127.0.0.1:${appPort}/run/0`, { method: 'POST' })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2500));
    const quiet = await getJson(`${promUrl}/api/v1/alerts`);
    expect(quiet.data.alerts.filter((a: any) => a.labels.alertname === 'ToolwatchToolMisuse')).toEqual([]);

    const t0 = Date.now();
    expect((await fetch(`http://127.0.0.1:${appPort}/run/2`, { method: 'POST' })).status).toBe(200);
    const alert = await until(
      'ToolwatchToolMisuse firing',
      async () => {
        const res = await getJson(`${promUrl}/api/v1/alerts`);
        return res.data.alerts.find(
          (a: any) => a.labels.alertname === 'ToolwatchToolMisuse' && a.state === 'firing',
        );
      },
      20_000,
    );
    const seconds = (Date.now() - t0) / 1000;
    console.log(`ToolwatchToolMisuse firing ${seconds.toFixed(2)} s after the forbidden run`);
    expect(alert.labels).toMatchObject({
      toolwatch_misuse_kind: 'forbidden',
      gen_ai_tool_name: 'submit_refund',
      gen_ai_agent_name: 'refund-agent',
      toolwatch_rule: 'refunds',
      severity: 'page',
    });
    expect(alert.annotations.summary).toBe(
      'forbidden tool call submit_refund by refund-agent (rule refunds)',
    );
  }, 60_000);
});
