/**
 * `npm run demo`: a refund agent built with the Vercel AI SDK, driven by the SDK's own mock
 * model (no network, no keys), with toolwatch attached to its tracer. Three customers ask
 * for a refund; the scripted model behaves well once, then hallucinates an order id, then
 * fires a forbidden write. toolwatch judges each run as its agent span ends and raises the
 * forbidden call the moment the tool span starts.
 */
import { readFile } from 'node:fs/promises';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { parse } from 'yaml';
import { loadPolicy, ToolwatchSpanProcessor, type Verdict } from '../src/index.js';
import { runRefundAgent, scriptedJudge, scripts } from './refund-agent.js';

/** Scorer names that differ from their kind (the policy names its `tool_calls` scorer `grounded`). */
function scorerLabel(r: Verdict['results'][number]): string {
  return r.scorer === r.kind ? r.scorer : `${r.scorer} (${r.kind})`;
}

/** A reason in full, wrapped under its result line. */
function wrap(text: string, indent: string, width = 96): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line && line.length + word.length + 1 > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines.map((l) => indent + l).join('\n');
}

/** Result names of every verdict, by trace (one run per trace here): which results reached the telemetry, and where. */
const verdicts = new Map<string, string[]>();

function printVerdict(v: Verdict): void {
  verdicts.set(
    v.trace_id,
    v.results.map((r) => r.scorer),
  );
  const mark = v.passed ? 'PASS' : 'FAIL';
  console.log(`\n[verdict] ${mark}  agent=${v.agent} rule=${v.rule} trace=${v.trace_id.slice(0, 8)}…`);
  for (const r of v.results) {
    console.log(`   ${r.label.padEnd(7)} ${scorerLabel(r).padEnd(24)} score=${r.score.toFixed(2)}`);
    if (r.reason) console.log(wrap(r.reason, '             '));
  }
}

/**
 * Where each result landed in the exported telemetry: results known when the agent span ends
 * ride on it; a judge that answers later gets its own `evaluate {agent}` span in the same
 * trace, parented to the agent span.
 */
function printExported(spans: ReadableSpan[]): void {
  const results = (s: ReadableSpan) =>
    s.events
      .filter((e) => e.name === 'gen_ai.evaluation.result')
      .map((e) => String(e.attributes?.['gen_ai.evaluation.name']));
  const judged = new Set(
    spans
      .filter((s) => s.attributes['toolwatch.evaluation.rule'] !== undefined)
      .map((s) => s.spanContext().spanId),
  );
  // The agent span carries the verdict; an `evaluate` span under it carries it again for late results.
  const agentSpans = spans.filter(
    (s) => judged.has(s.spanContext().spanId) && !judged.has(s.parentSpanContext?.spanId ?? ''),
  );
  console.log(`\nexported agent spans carrying a verdict: ${agentSpans.length}`);
  console.log(
    '(an LLM judge answers after the agent span has ended and gone to the exporters, so its result goes on an `evaluate` span, a child of the agent span in the same trace)',
  );
  for (const agent of agentSpans) {
    const { traceId, spanId } = agent.spanContext();
    const passed = agent.attributes['toolwatch.evaluation.passed'];
    const failed = JSON.stringify(agent.attributes['toolwatch.evaluation.failed']);
    console.log(
      `  trace ${traceId.slice(0, 8)}…  ${agent.name}  toolwatch.evaluation.passed=${passed}  failed=${failed}`,
    );
    console.log(`    on the agent span (${results(agent).length} events): ${results(agent).join(', ')}`);
    const seen = new Set(results(agent));
    for (const s of spans) {
      if (s === agent || s.spanContext().traceId !== traceId || results(s).length === 0) continue;
      const where =
        s.parentSpanContext?.spanId === spanId ? 'a child of the agent span' : 'in the same trace';
      console.log(`    after the agent span ended, on span "${s.name}" (${where}): ${results(s).join(', ')}`);
      for (const name of results(s)) seen.add(name);
    }
    const missing = (verdicts.get(traceId) ?? []).filter((name) => !seen.has(name));
    if (missing.length > 0) console.log(`    not in the exported spans: ${missing.join(', ')}`);
  }
}

async function main(): Promise<void> {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  // The judge compares order ids and results, so it must see values: the example policy
  // redacts them to their keys (the default, for privacy); the demo turns that off.
  const file = parse(await readFile(new URL('./policies/refunds.yaml', import.meta.url), 'utf8'));
  const policy = await loadPolicy({ ...file, redact: { values: false } });
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
  // Results that arrive after an agent span ended (the LLM judge here) go on an
  // `evaluate {agent}` span made by the global provider (or the `tracerProvider` option).
  trace.setGlobalTracerProvider(provider);
  const tracer = provider.getTracer('refund-demo');

  for (const { customer, turns } of scripts) {
    console.log(`\n=== ${customer} ===`);
    console.log(`agent answered: ${await runRefundAgent(tracer, turns)}`);
    await toolwatch.forceFlush();
  }
  // The verdict travels with the spans: any exporter sees it. (Read before shutdown: the
  // in-memory exporter forgets its spans when it shuts down.)
  printExported(exporter.getFinishedSpans());
  await provider.shutdown();
}

await main();
