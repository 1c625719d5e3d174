import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningExample, startExample } from '../examples/run-example.js';
import { configDir, freePort, type Proc, startGatewayProcess, startProcess, until } from './harness.js';

const hasTools = ['prometheus', 'prometheus-alertmanager', 'promtool', 'amtool'].every(
  (c) => spawnSync('bash', ['-c', `command -v ${c}`]).status === 0,
);
const describeAlerting = hasTools || process.env.CI ? describe : describe.skip;
/** The Python agent's venv (.ci/run creates it: agno + openinference + OTLP/HTTP exporter). */
const python = process.env.TOOLWATCH_PYTHON ?? join(homedir(), '.cache/toolwatch/py-agent/bin/python');

interface Delivery {
  at: number;
  path: string;
  body: { alerts: { status: string; labels: Record<string, string> }[] };
}

/**
 * The shipped files use Prometheus's production intervals; the end-to-end test runs them at 1 s
 * so that an alert fires within seconds.
 */
function testIntervals(config: string): string {
  const production = 'global: { scrape_interval: 15s, scrape_timeout: 10s, evaluation_interval: 15s }';
  if (!config.includes(production)) throw new Error(`expected the production intervals: ${production}`);
  return config.replace(
    production,
    'global: { scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s }',
  );
}

describe('shipped intervals', () => {
  it('are production intervals: rule groups inherit evaluation_interval, Prometheus scrapes every 15 s', () => {
    for (const f of ['toolwatch-alerts.yml', 'toolwatch-gateway-alerts.yml']) {
      const rules = readFileSync(join(configDir, f), 'utf8');
      // A group's own `interval:` overrides Prometheus's; a test value (1s) must not ship.
      expect(rules, f).not.toMatch(/^\s+interval:/m);
    }
    for (const f of ['prometheus.yml', 'prometheus-gateways.yml']) {
      const config = readFileSync(join(configDir, f), 'utf8');
      expect(config, f).toMatch(/scrape_interval: 15s, scrape_timeout: 10s, evaluation_interval: 15s/);
      expect(config, f).not.toMatch(/_interval: 1s/);
    }
  });
});

describe('alerting configuration (promtool, amtool)', () => {
  it.skipIf(!hasTools)(
    'prometheus-gateways.yml, the rules and alertmanager.yml pass the real checkers',
    () => {
      for (const [cmd, args] of [
        ['promtool', ['check', 'config', 'prometheus-gateways.yml']],
        ['promtool', ['check', 'rules', 'toolwatch-alerts.yml', 'toolwatch-gateway-alerts.yml']],
        ['promtool', ['test', 'rules', 'toolwatch-alerts.test.yml']],
        ['promtool', ['test', 'rules', 'toolwatch-gateway-alerts.test.yml']],
        ['amtool', ['check-config', 'alertmanager.yml']],
      ] as const) {
        const r = spawnSync(cmd, args, { cwd: configDir, encoding: 'utf8' });
        expect(r.status, `${cmd} ${args.join(' ')}\n${r.stdout}${r.stderr}`).toBe(0);
      }
    },
  );
});

describeAlerting('misuse → Prometheus → Alertmanager → webhook, with 1 s scrape and evaluation', () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolwatch-alerting-'));
  const deliveries: Delivery[] = [];
  let webhook: Server;
  let prometheus: Proc;
  let alertmanager: Proc;
  let app: RunningExample;
  let gateway: Awaited<ReturnType<typeof startGatewayProcess>>;
  let promUrl: string;

  beforeAll(async () => {
    webhook = createServer(async (req, res) => {
      let text = '';
      for await (const c of req) text += String(c);
      deliveries.push({ at: Date.now(), path: req.url ?? '', body: JSON.parse(text) });
      res.writeHead(200).end();
    });
    webhook.listen(0, '127.0.0.1');
    await once(webhook, 'listening');
    const hook = `http://127.0.0.1:${(webhook.address() as { port: number }).port}`;

    // Alertmanager with the shipped routing, its webhook URLs pointed at the test's receiver.
    const amPort = await freePort();
    writeFileSync(
      join(dir, 'alertmanager.yml'),
      readFileSync(join(configDir, 'alertmanager.yml'), 'utf8').replaceAll('http://127.0.0.1:5001', hook),
    );
    alertmanager = startProcess('prometheus-alertmanager', [
      `--config.file=${join(dir, 'alertmanager.yml')}`,
      `--storage.path=${join(dir, 'am')}`,
      `--web.listen-address=127.0.0.1:${amPort}`,
      '--cluster.listen-address=',
    ]);
    await until(
      'alertmanager ready',
      async () => (await fetch(`http://127.0.0.1:${amPort}/-/ready`)).ok || undefined,
      30_000,
      alertmanager,
    );

    // The in-process processor (examples/prometheus-metrics.ts) and a gateway, both scraped.
    app = startExample('examples/prometheus-metrics.ts', ['0']);
    const appPort = Number((await app.waitFor(/listening on 127\.0\.0\.1:(\d+)/))[1]);
    gateway = await startGatewayProcess([
      '--policy',
      'examples/policies/support.yaml',
      '--http',
      '127.0.0.1:0',
      '--grpc',
      'off',
      '--metrics',
      '127.0.0.1:0',
      '--decision-wait',
      '300',
    ]);

    // The shipped Prometheus config, with the test's targets and Alertmanager port.
    const promPort = await freePort();
    promUrl = `http://127.0.0.1:${promPort}`;
    for (const f of ['toolwatch-alerts.yml', 'toolwatch-gateway-alerts.yml'])
      writeFileSync(join(dir, f), readFileSync(join(configDir, f)));
    writeFileSync(
      join(dir, 'prometheus.yml'),
      testIntervals(readFileSync(join(configDir, 'prometheus-gateways.yml'), 'utf8'))
        .replace("targets: ['127.0.0.1:9093']", `targets: ['127.0.0.1:${amPort}']`)
        .replace("targets: ['127.0.0.1:9464']", `targets: ['${gateway.metrics}', '127.0.0.1:${appPort}']`),
    );
    prometheus = startProcess('prometheus', [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${promPort}`,
    ]);
    await until(
      'both targets up',
      async () => {
        const q = (await (await fetch(`${promUrl}/api/v1/query?query=up`)).json()) as any;
        return (
          (q.data.result.length === 2 &&
            q.data.result.every((r: { value: string[] }) => r.value[1] === '1')) ||
          undefined
        );
      },
      30_000,
      prometheus,
    );
    // The zero series exist before anything happens (so increase() sees the first misuse).
    await until(
      'zero series scraped',
      async () => {
        const q = (await (
          await fetch(`${promUrl}/api/v1/query?query=toolwatch_tool_misuse_total`)
        ).json()) as any;
        return q.data.result.length >= 8 || undefined;
      },
      30_000,
    );
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
    await gateway?.stop();
    await prometheus?.stop();
    await alertmanager?.stop();
    webhook?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function fired(tool: string, t0: number) {
    const alert = await until(
      'alert firing',
      async () => {
        const res = (await (await fetch(`${promUrl}/api/v1/alerts`)).json()) as any;
        return res.data.alerts.find(
          (a: { labels: Record<string, string>; state: string }) =>
            a.labels.alertname === 'ToolwatchToolMisuse' &&
            a.labels.gen_ai_tool_name === tool &&
            a.state === 'firing',
        );
      },
      30_000,
    );
    // for: 0s, so the alert fires when it becomes active (Prometheus' own timestamp).
    const firedAt = Date.parse(alert.activeAt);
    const delivery = await until(
      'webhook delivery',
      () =>
        deliveries.find((d) =>
          d.body.alerts.some((a) => a.status === 'firing' && a.labels.gen_ai_tool_name === tool),
        ),
      30_000,
    );
    return { alert, delivery, toFiring: (firedAt - t0) / 1000, toDelivery: (delivery.at - t0) / 1000 };
  }

  it('in process: the processor counts the forbidden call; the alert fires and the page webhook receives it', async () => {
    const t0 = Date.now();
    expect(
      (
        await fetch(`http://127.0.0.1:${app.output().match(/listening on 127\.0\.0\.1:(\d+)/)![1]}/run/2`, {
          method: 'POST',
        })
      ).status,
    ).toBe(200);
    const r = await fired('submit_refund', t0);
    expect(r.alert.labels).toMatchObject({
      toolwatch_misuse_kind: 'forbidden',
      gen_ai_agent_name: 'refund-agent',
      severity: 'page',
    });
    expect(r.delivery.path).toBe('/toolwatch/page');
    console.log(
      `in-process processor: tool call → firing ${r.toFiring.toFixed(2)} s, → Alertmanager webhook ${r.toDelivery.toFixed(2)} s`,
    );
  }, 60_000);

  it.skipIf(!existsSync(python) && !process.env.CI)(
    'through the gateway: a Python agno agent calls the forbidden tool; the alert fires and is delivered',
    async () => {
      const run = spawnSync(
        python,
        ['test/gateway/python/forbidden_agent.py', `http://${gateway.http}/v1/traces`],
        {
          cwd: new URL('../../', import.meta.url).pathname,
          encoding: 'utf8',
          timeout: 120_000,
        },
      );
      expect(run.status, run.stderr).toBe(0);
      const t0 = Number(/forbidden_call_at (\d+\.\d+)/.exec(run.stdout)![1]) * 1000;
      const r = await fired('delete_account', t0);
      expect(r.alert.labels).toMatchObject({
        toolwatch_misuse_kind: 'forbidden',
        gen_ai_agent_name: 'support_agent',
        toolwatch_rule: 'support',
        severity: 'page',
      });
      expect(r.delivery.path).toBe('/toolwatch/page');
      console.log(
        `Python agent via gateway (decision wait 0.3 s): tool call → firing ${r.toFiring.toFixed(2)} s, → Alertmanager webhook ${r.toDelivery.toFixed(2)} s`,
      );
    },
    150_000,
  );
});
