/**
 * toolwatch's metrics scraped by Prometheus through `@opentelemetry/exporter-prometheus`.
 *
 *   npx tsx examples/prometheus-metrics.ts [port]       # default 9464; 0 picks a free port
 *   curl -s 127.0.0.1:9464/metrics                      # toolwatch_* series, zero-initialised
 *   curl -s -X POST 127.0.0.1:9464/run/2                # run script 2 (the forbidden write)
 *
 * Point Prometheus at it with collector-config/prometheus.yml and the alert rules in
 * collector-config/toolwatch-alerts.yml: the forbidden call fires `ToolwatchToolMisuse`
 * within seconds. The test in test/examples does exactly that with a real Prometheus.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { loadPolicy, ToolwatchSpanProcessor } from '../src/index.js';
import { runRefundAgent, scriptedJudge, scripts } from './refund-agent.js';

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const resource = resourceFromAttributes({
  'service.name': 'refund-service',
  'deployment.environment': 'prod',
});

// The exporter is a metric reader; it serves the text format from our own HTTP server.
const prometheus = new PrometheusExporter({ preventServerStart: true });
const meterProvider = new MeterProvider({ resource, readers: [prometheus] });

const toolwatch = new ToolwatchSpanProcessor({
  policy: await loadPolicy(new URL('./policies/refunds.yaml', import.meta.url).pathname),
  meterProvider,
  judges: { default: scriptedJudge },
  onMisuse: (m) => console.log(`misuse ${m.kind} ${m.tool} ${m.agent}`),
  onVerdict: (v) => console.log(`verdict ${v.passed ? 'pass' : 'fail'} ${v.agent} ${v.trace_id}`),
});
const tracerProvider = new BasicTracerProvider({ resource, spanProcessors: [toolwatch] });
const tracer = tracerProvider.getTracer('refund-demo');

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/metrics') {
    prometheus.getMetricsRequestHandler(req, res);
    return;
  }
  const run = req.method === 'POST' ? /^\/run\/(\d+)$/.exec(req.url ?? '') : null;
  const script = run ? scripts[Number(run[1])] : undefined;
  if (!script) {
    res.writeHead(404).end();
    return;
  }
  runRefundAgent(tracer, script.turns)
    .then(async (text) => {
      await toolwatch.forceFlush();
      res.writeHead(200, { 'content-type': 'text/plain' }).end(text);
    })
    .catch((error: unknown) => res.writeHead(500).end(String(error)));
});

const port = Number(process.argv[2] ?? 9464);
server.listen(port, '127.0.0.1', () => {
  console.log(`listening on 127.0.0.1:${(server.address() as AddressInfo).port}`);
});

const stop = () => {
  server.close();
  void Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]).finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
