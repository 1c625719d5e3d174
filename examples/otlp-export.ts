/**
 * The verdict travels with the span: an AI SDK agent with toolwatch and an OTLP/HTTP trace
 * exporter. Whatever receives the spans (a Collector, Jaeger, Langfuse, Phoenix) sees the
 * `toolwatch.*` attributes and `gen_ai.evaluation.result` events on the agent span.
 *
 *   npx tsx examples/otlp-export.ts [http://127.0.0.1:4318/v1/traces]
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { loadPolicy, ToolwatchSpanProcessor } from '../src/index.js';
import { runRefundAgent, scriptedJudge, scripts } from './refund-agent.js';

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const url = process.argv[2] ?? 'http://127.0.0.1:4318/v1/traces';

const toolwatch = new ToolwatchSpanProcessor({
  policy: await loadPolicy(new URL('./policies/refunds.yaml', import.meta.url).pathname),
  judges: { default: scriptedJudge },
});
const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'refund-service', 'deployment.environment': 'prod' }),
  // Registration order does not matter: toolwatch writes the verdict while the span is ending.
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url })), toolwatch],
});
// Results that arrive after the agent span ended (judges, late spans) go on a new
// `evaluate {agent}` span, made by the global tracer provider unless `tracerProvider` is given.
trace.setGlobalTracerProvider(provider);
const tracer = provider.getTracer('refund-demo');

for (const { customer, turns } of scripts) {
  await runRefundAgent(tracer, turns);
  console.log(`ran: ${customer}`);
}
// Judges finish first (their results go on `evaluate {agent}` spans), then the batch exports.
await toolwatch.forceFlush();
await provider.forceFlush();
await provider.shutdown();
console.log('exported');
