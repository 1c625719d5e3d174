/**
 * `npm run demo`: a refund agent built with the Vercel AI SDK, driven by the SDK's own mock
 * model (no network, no keys), with toolwatch attached to its tracer. Three customers ask
 * for a refund; the scripted model behaves well once, then hallucinates an order id, then
 * fires a forbidden write. toolwatch judges each run as its agent span ends and raises the
 * forbidden call the moment the tool span starts.
 */
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { loadPolicy, ToolwatchSpanProcessor, type Verdict } from '../src/index.js';
import { runRefundAgent, scriptedJudge, scripts } from './refund-agent.js';

function printVerdict(v: Verdict): void {
  const mark = v.passed ? 'PASS' : 'FAIL';
  console.log(`\n[verdict] ${mark}  agent=${v.agent} rule=${v.rule} trace=${v.trace_id.slice(0, 8)}…`);
  for (const r of v.results) {
    const reason = r.reason ? `  ${r.reason.split('\n')[0]!.slice(0, 110)}` : '';
    console.log(`   ${r.label.padEnd(7)} ${r.scorer.padEnd(12)} score=${r.score.toFixed(2)}${reason}`);
  }
}

async function main(): Promise<void> {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const policy = await loadPolicy(new URL('./policies/refunds.yaml', import.meta.url).pathname);
  const exporter = new InMemorySpanExporter();
  const toolwatch = new ToolwatchSpanProcessor({
    policy,
    judges: { default: scriptedJudge },
    onVerdict: printVerdict,
    onMisuse: (m) =>
      console.log(`\n[misuse]  LIVE ${m.kind} tool "${m.tool}" in ${m.agent} (rule ${m.rule})`),
  });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'refund-service', 'deployment.environment': 'prod' }),
    spanProcessors: [toolwatch, new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('refund-demo');

  for (const { customer, turns } of scripts) {
    console.log(`\n=== ${customer} ===`);
    console.log(`agent answered: ${await runRefundAgent(tracer, turns)}`);
    await toolwatch.forceFlush();
  }
  // The verdict travels with the span: any exporter sees it. (Read before shutdown: the
  // in-memory exporter forgets its spans when it shuts down.)
  const agentSpans = exporter.getFinishedSpans().filter((s) => s.attributes['toolwatch.evaluation.rule']);
  console.log(`\nexported agent spans carrying a verdict: ${agentSpans.length}`);
  for (const s of agentSpans) {
    console.log(
      `  ${s.name}  toolwatch.evaluation.passed=${s.attributes['toolwatch.evaluation.passed']}  failed=${JSON.stringify(
        s.attributes['toolwatch.evaluation.failed'],
      )}  events=${s.events.filter((e) => e.name === 'gen_ai.evaluation.result').length}`,
    );
  }
  await provider.shutdown();
}

await main();
