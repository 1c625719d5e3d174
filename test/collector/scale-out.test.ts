import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { spansFromOtlpJson } from '../../src/conventions/from-otlp-json.js';
import type { SpanLike } from '../../src/types.js';
import { emitAgentRun } from '../gateway/helpers.js';
import {
  collectorBinary,
  configDir,
  freePort,
  metricValue,
  type Proc,
  startCollector,
  startGatewayProcess,
  until,
} from './harness.js';

const binary = collectorBinary();
const describeCollector = binary ? describe : describe.skip;
const SPANS_PER_TRACE = 6; // root, agent, 2 tools, 2 db spans

/**
 * The app: a real SDK with the OTLP/HTTP exporter pointed at the load-balancing tier, and
 * export batches of 4 spans, so most traces reach the Collector in several requests.
 */
function app(endpoint: string) {
  const provider = new BasicTracerProvider({
    spanProcessors: [
      new BatchSpanProcessor(
        new OTLPTraceExporter({ url: `http://${endpoint}/v1/traces`, concurrencyLimit: 1000 }),
        {
          maxExportBatchSize: 4,
          scheduledDelayMillis: 20,
          maxQueueSize: 100_000,
        },
      ),
    ],
  });
  const tracer = provider.getTracer('scale-out-app');
  /** One agent run; `forbidden` makes it call delete_account. Returns the trace id. */
  const run = (forbidden: boolean): string =>
    emitAgentRun(tracer, ['lookup_account', forbidden ? 'delete_account' : 'send_reply'], 2);
  return { provider, run };
}

interface Topology {
  lb: Proc;
  sampler: Proc;
  gateways: Awaited<ReturnType<typeof startGatewayProcess>>[];
  lbHttp: string;
  out: string;
  gatewayGrpcPorts: number[];
}

const procs: Proc[] = [];
const dir = mkdtempSync(join(tmpdir(), 'toolwatch-scale-out-'));
afterEach(async () => {
  for (const p of procs.splice(0).reverse()) await p.stop();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function gateway(grpcPort: number, samplerHttp: string, decisionWaitMs: number, extra: string[] = []) {
  const g = await startGatewayProcess([
    '--policy',
    'examples/policies/support.yaml',
    '--http',
    '127.0.0.1:0',
    '--grpc',
    `127.0.0.1:${grpcPort}`,
    '--metrics',
    '127.0.0.1:0',
    '--forward',
    `http://${samplerHttp}`,
    '--decision-wait',
    String(decisionWaitMs),
    ...extra,
  ]);
  procs.push(g);
  return g;
}

/** Sampler first, then the gateways, then the load balancer (each waits for the next tier). */
async function topology(name: string, decisionWaitMs: number, gatewayArgs: string[] = []): Promise<Topology> {
  const out = join(dir, `${name}.jsonl`);
  const samplerHttp = `127.0.0.1:${await freePort()}`;
  const sampler = await startCollector(
    binary!,
    [
      `${configDir}scale-out/sampler.yaml`,
      // The shipped config, with its backend replaced by a file the test reads.
      `yaml:exporters::file::path: ${out}`,
      'yaml:service::pipelines::traces::exporters: [file]',
    ],
    {
      OTLP_HTTP_ENDPOINT: samplerHttp,
      OTLP_GRPC_ENDPOINT: `127.0.0.1:${await freePort()}`,
      HEALTH_ENDPOINT: `127.0.0.1:${await freePort()}`,
      SAMPLE_PCT: '0',
      DECISION_WAIT: '2s',
    },
  );
  procs.push(sampler);
  const gatewayGrpcPorts = [await freePort(), await freePort()];
  const gateways = [];
  for (const port of gatewayGrpcPorts)
    gateways.push(await gateway(port, samplerHttp, decisionWaitMs, gatewayArgs));
  const lbHttp = `127.0.0.1:${await freePort()}`;
  const lb = await startCollector(binary!, [`${configDir}scale-out/load-balancer.yaml`], {
    OTLP_HTTP_ENDPOINT: lbHttp,
    OTLP_GRPC_ENDPOINT: `127.0.0.1:${await freePort()}`,
    HEALTH_ENDPOINT: `127.0.0.1:${await freePort()}`,
    GATEWAY_1: `127.0.0.1:${gatewayGrpcPorts[0]}`,
    GATEWAY_2: `127.0.0.1:${gatewayGrpcPorts[1]}`,
  });
  procs.push(lb);
  return { lb, sampler, gateways, lbHttp, out, gatewayGrpcPorts };
}

async function metricsOf(g: { metrics: string }): Promise<string> {
  return (await fetch(`http://${g.metrics}/metrics`)).text();
}

function readOutput(path: string): SpanLike[] {
  // JSON Lines: one ExportTraceServiceRequest per line, as the file exporter writes.
  return spansFromOtlpJson(readFileSync(path, 'utf8'));
}

function byTrace(spans: SpanLike[]): Map<string, SpanLike[]> {
  const out = new Map<string, SpanLike[]>();
  for (const s of spans) out.set(s.traceId, [...(out.get(s.traceId) ?? []), s]);
  return out;
}

describeCollector(
  'scale-out on loopback: app → Collector (load_balancing) → 2 gateways → Collector (tail_sampling) → file',
  () => {
    it('judges every trace exactly once, by one gateway, with all its spans; keeps every flagged trace; drops nothing', async () => {
      const t = await topology('steady', 1000);
      const { provider, run } = app(t.lbHttp);
      const flagged = new Set<string>();
      const clean = new Set<string>();
      const TRACES = 120;
      for (let i = 0; i < TRACES; i++) {
        const forbidden = i % 3 === 0;
        (forbidden ? flagged : clean).add(run(forbidden));
      }
      await provider.forceFlush();
      const total = TRACES * SPANS_PER_TRACE;
      await until(
        'gateways received every span',
        async () => {
          const pages = await Promise.all(t.gateways.map(metricsOf));
          return (
            pages.reduce((n, p) => n + metricValue(p, 'toolwatch_gateway_spans_received_total'), 0) ===
              total || undefined
          );
        },
        60_000,
      );
      await until(
        'gateways forwarded every span',
        async () => {
          const pages = await Promise.all(t.gateways.map(metricsOf));
          return (
            pages.reduce((n, p) => n + metricValue(p, 'toolwatch_gateway_spans_forwarded_total'), 0) ===
              total || undefined
          );
        },
        60_000,
      );
      const pages = await Promise.all(t.gateways.map(metricsOf));
      // Both gateways took a share; each trace was judged once (a split trace would count twice).
      const judged = pages.map((p) => metricValue(p, 'toolwatch_gateway_traces_judged_total'));
      expect(judged.every((n) => n > 0)).toBe(true);
      expect(judged[0]! + judged[1]!).toBe(TRACES);
      expect(
        pages.reduce(
          (n, p) => n + metricValue(p, 'toolwatch_gateway_traces_judged_total', { completion: 'quiet' }),
          0,
        ),
      ).toBe(TRACES);
      expect(pages.reduce((n, p) => n + metricValue(p, 'toolwatch_gateway_verdicts_total'), 0)).toBe(TRACES);
      for (const p of pages) {
        expect(metricValue(p, 'toolwatch_gateway_spans_dead_lettered_total')).toBe(0);
        expect(metricValue(p, 'toolwatch_gateway_spans_dropped_total')).toBe(0);
        expect(metricValue(p, 'toolwatch_gateway_late_spans_total')).toBe(0);
        expect(metricValue(p, 'toolwatch_gateway_spans_received_total') % SPANS_PER_TRACE).toBe(0);
      }
      // Let the sampler decide (decision_wait 2 s), then stop it: SIGTERM flushes the file.
      await new Promise((r) => setTimeout(r, 3500));
      expect(await t.sampler.stop()).toBe(0);
      const kept = byTrace(readOutput(t.out));
      // Sampling share 0: exactly the flagged traces are kept, each complete, judged once.
      expect(new Set(kept.keys())).toEqual(flagged);
      for (const [, spans] of kept) {
        expect(spans).toHaveLength(SPANS_PER_TRACE);
        const agent = spans.find((s) => s.name.startsWith('invoke_agent'))!;
        expect(agent.attributes['toolwatch.keep']).toBe(true);
        expect(agent.attributes['toolwatch.evaluation.failed']).toEqual(['trajectory']);
        // One verdict: two results, not four (judged twice) — and reliability passed, which
        // needs the lookup_account span: the gateway had all the spans.
        expect(
          agent.events.map((e) => [
            e.attributes['gen_ai.evaluation.name'],
            e.attributes['gen_ai.evaluation.score.label'],
          ]),
        ).toEqual([
          ['reliability', 'pass'],
          ['trajectory', 'fail'],
        ]);
      }
      await provider.shutdown();
    }, 180_000);

    it('full gateways answer RESOURCE_EXHAUSTED with RetryInfo; the real Collector backs off and retries, and nothing is lost', async () => {
      // Gateways that hold at most 48 spans: a burst of 600 cannot all be accepted at once.
      const t = await topology('exhausted', 200, ['--max-held-spans', '48']);
      const { provider, run } = app(t.lbHttp);
      const traces = new Set<string>();
      for (let i = 0; i < 100; i++) traces.add(run(true));
      await provider.forceFlush();
      const total = traces.size * SPANS_PER_TRACE;
      await until(
        'every span forwarded after the Collector retried',
        async () => {
          const pages = await Promise.all(t.gateways.map(metricsOf));
          return (
            pages.reduce((n, p) => n + metricValue(p, 'toolwatch_gateway_spans_forwarded_total'), 0) ===
              total || undefined
          );
        },
        120_000,
      );
      const pages = await Promise.all(t.gateways.map(metricsOf));
      const refused = pages.reduce(
        (n, p) => n + metricValue(p, 'toolwatch_gateway_spans_rejected_total', { reason: 'buffer_full' }),
        0,
      );
      expect(refused).toBeGreaterThan(0);
      expect(pages.reduce((n, p) => n + metricValue(p, 'toolwatch_gateway_spans_received_total'), 0)).toBe(
        total,
      );
      await new Promise((r) => setTimeout(r, 3500));
      expect(await t.sampler.stop()).toBe(0);
      const kept = byTrace(readOutput(t.out));
      expect(new Set(kept.keys())).toEqual(traces);
      for (const [, spans] of kept) expect(spans).toHaveLength(SPANS_PER_TRACE);
      console.log(
        `exhausted test: ${refused} spans refused with RESOURCE_EXHAUSTED and retried by the Collector; all ${total} delivered`,
      );
      await provider.shutdown();
    }, 180_000);

    it('a gateway killed mid-stream loses the traces it held; the Collector retries the rest until it is back', async () => {
      // A long decision wait: a killed gateway surely holds what it was sent.
      const t = await topology('kill', 2500);
      const { provider, run } = app(t.lbHttp);
      const before = new Set<string>();
      for (let i = 0; i < 60; i++) before.add(run(true));
      await provider.forceFlush();
      await until(
        'both gateways hold their share',
        async () => {
          const pages = await Promise.all(t.gateways.map(metricsOf));
          return (
            pages.reduce((n, p) => n + metricValue(p, 'toolwatch_gateway_spans_received_total'), 0) ===
              60 * SPANS_PER_TRACE || undefined
          );
        },
        60_000,
      );
      const victim = t.gateways[1]!;
      const heldByVictim = metricValue(await metricsOf(victim), 'toolwatch_gateway_spans_held');
      expect(heldByVictim).toBeGreaterThan(0);
      victim.child.kill('SIGKILL');
      await until(
        'victim gone',
        () => victim.child.exitCode !== null || victim.child.signalCode !== null || undefined,
        10_000,
      );

      // Traffic while it is down: its share is refused at the connection and retried by the Collector.
      const during = new Set<string>();
      for (let i = 0; i < 60; i++) during.add(run(true));
      await provider.forceFlush();
      await new Promise((r) => setTimeout(r, 2000));
      // Back on the same address (as a restarted pod would be).
      await gateway(t.gatewayGrpcPorts[1]!, samplerOf(t), 2500);
      const g1 = t.gateways[0]!;
      await until(
        'survivor and restarted gateway forwarded what they received',
        async () => {
          const [a, b] = await Promise.all([metricsOf(g1), metricsOf(procs.at(-1) as never)]);
          const held =
            metricValue(a, 'toolwatch_gateway_spans_held') + metricValue(b, 'toolwatch_gateway_spans_held');
          const received =
            metricValue(a, 'toolwatch_gateway_spans_received_total') +
            metricValue(b, 'toolwatch_gateway_spans_received_total');
          return (held === 0 && received === 120 * SPANS_PER_TRACE - heldByVictim) || undefined;
        },
        90_000,
      );
      await new Promise((r) => setTimeout(r, 3500));
      expect(await t.sampler.stop()).toBe(0);
      const kept = byTrace(readOutput(t.out));
      // The guarantee: every trace sent while the gateway was down arrives, complete, judged.
      for (const id of during) expect(kept.get(id)?.length, id).toBe(SPANS_PER_TRACE);
      // What the killed gateway held is lost (it was in its memory only), and nothing else.
      const lostBefore = [...before].filter((id) => !kept.has(id));
      expect(lostBefore.length * SPANS_PER_TRACE).toBe(heldByVictim);
      for (const id of before) if (kept.has(id)) expect(kept.get(id)).toHaveLength(SPANS_PER_TRACE);
      console.log(
        `kill test: victim held ${heldByVictim} spans (${lostBefore.length} traces) at SIGKILL — lost; ${during.size} traces sent while it was down all delivered after restart`,
      );
      await provider.shutdown();
    }, 240_000);
  },
);

function samplerOf(t: Topology): string {
  return /--forward http:\/\/(\S+)/.exec(t.gateways[0]!.child.spawnargs.join(' '))![1]!;
}
