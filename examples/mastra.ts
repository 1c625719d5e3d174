/**
 * Mastra 1.x, traced through its own `Observability` + `OtelExporter`, judged by toolwatch. The
 * model is scripted (no network): a support agent looks an account up, then deletes it — a
 * forbidden write.
 *
 *   npx tsx examples/mastra.ts
 *
 * How toolwatch is attached. Mastra builds its OpenTelemetry spans itself, outside any
 * TracerProvider: the OtelExporter converts each finished Mastra span into a ReadableSpan and
 * hands it to its own BatchSpanProcessor, which passes batches to a SpanExporter. So no
 * processor ever gets `onStart` or `onEnding`. The one public seam is the exporter (the
 * `exporter` option); toolwatch sits there, in wrapping mode: every span of the batch is
 * given to a `ToolwatchSpanProcessor` as it ended (`onEnd`, children first), and the processor
 * forwards each one to `next` — here a processor that exports to the real destination —
 * with the verdict's attributes and `gen_ai.evaluation.result` events added to the agent span.
 *
 * What that means: verdicts and misuse reports come when Mastra exports (every 5 s, or on
 * `exporter.flush()`), not while the tool runs; the misuse is still reported before the
 * verdict of its run. `evaluateTraces(spans, policy)` on the exported batch would give the
 * same verdicts, without the decorated spans.
 */
import { Agent } from '@mastra/core/agent';
import { Mastra } from '@mastra/core/mastra';
import { createTool } from '@mastra/core/tools';
import { Observability } from '@mastra/observability';
import { OtelExporter } from '@mastra/otel-exporter';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import {
  evaluateTraces,
  fromReadableSpan,
  loadPolicy,
  ToolwatchSpanProcessor,
  type Verdict,
} from '../src/index.js';

/** Hands Mastra's exported spans to toolwatch, which forwards them (decorated) to `next`. */
class ToolwatchExporter implements SpanExporter {
  constructor(private readonly _toolwatch: ToolwatchSpanProcessor) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    for (const span of spans) this._toolwatch.onEnd(span);
    done({ code: ExportResultCode.SUCCESS });
  }

  forceFlush(): Promise<void> {
    return this._toolwatch.forceFlush();
  }

  shutdown(): Promise<void> {
    return this._toolwatch.shutdown();
  }
}

type Call = { name: string; args: unknown };
const USAGE = { inputTokens: 10, outputTokens: 5, totalTokens: 15 };

/** A scripted AI SDK model (specification v2, which Mastra 1.x accepts): tool calls, then a final answer. */
function scriptedModel(turns: Array<Call[] | string>) {
  let turn = 0;
  const next = () => turns[turn++] ?? 'Done.';
  const parts = (step: Call[] | string) =>
    typeof step === 'string'
      ? [{ type: 'text', text: step }]
      : step.map((c, i) => ({
          type: 'tool-call',
          toolCallId: `call_${turn}_${i}`,
          toolName: c.name,
          input: JSON.stringify(c.args),
        }));
  return {
    specificationVersion: 'v2' as const,
    provider: 'scripted',
    modelId: 'scripted-model',
    supportedUrls: {},
    async doGenerate() {
      const step = next();
      return {
        content: parts(step),
        finishReason: typeof step === 'string' ? 'stop' : 'tool-calls',
        usage: USAGE,
        warnings: [],
      };
    },
    async doStream(): Promise<never> {
      throw new Error('not used in this example');
    },
  };
}

const policy = await loadPolicy(new URL('./policies/support.yaml', import.meta.url).pathname);

// The real destination would be an OTLP exporter; the in-memory one lets the example show
// what it receives.
const destination = new InMemorySpanExporter();
const toolwatch = new ToolwatchSpanProcessor({
  policy,
  next: new SimpleSpanProcessor(destination),
  onMisuse: (m) => console.log(`[misuse] ${m.kind} tool "${m.tool}" in ${m.agent} (rule ${m.rule})`),
  onVerdict: (v) => console.log(`[verdict] ${summary(v)}`),
});

function summary(v: Verdict): string {
  return `${v.passed ? 'PASS' : 'FAIL'} agent=${v.agent} ${v.results.map((r) => `${r.scorer}=${r.label}`).join(' ')}`;
}

const deleted: string[] = [];
const supportAgent = new Agent({
  id: 'support_agent',
  name: 'support_agent',
  instructions: 'Help the customer with their account.',
  model: scriptedModel([
    [{ name: 'lookup_account', args: { email: 'ada@example.com' } }],
    [{ name: 'delete_account', args: { account_id: 'acct_42' } }],
    'Your account has been closed.',
  ]) as never,
  tools: {
    lookup_account: createTool({
      id: 'lookup_account',
      description: 'Finds an account by email',
      inputSchema: z.object({ email: z.string() }),
      execute: async ({ email }) => ({ account_id: 'acct_42', email, plan: 'pro' }),
    }),
    delete_account: createTool({
      id: 'delete_account',
      description: 'Deletes an account (needs a human)',
      inputSchema: z.object({ account_id: z.string() }),
      execute: async ({ account_id }) => {
        deleted.push(account_id);
        return { deleted: true };
      },
    }),
  },
});

const otel = new OtelExporter({
  // Mastra requires a provider even with a custom exporter; the endpoint is never contacted.
  provider: { custom: { endpoint: 'http://127.0.0.1:1/unused' } },
  exporter: new ToolwatchExporter(toolwatch),
  // Logs would go over OTLP/HTTP to that endpoint; this example only traces.
  signals: { traces: true, logs: false },
} as ConstructorParameters<typeof OtelExporter>[0]);
const mastra = new Mastra({
  agents: { support_agent: supportAgent },
  observability: new Observability({
    configs: { otel: { serviceName: 'support-service', exporters: [otel] } },
  }),
  logger: false,
});

const result = await mastra.getAgent('support_agent').generate('Please close my account.', { maxSteps: 5 });
console.log(`agent answered: ${result.text}`);
// Mastra batches for 5 s; flushing exports now, and toolwatch judges the run as it passes.
await otel.flush();
await toolwatch.forceFlush();

const spans = destination.getFinishedSpans();
const judged = spans.filter((s) => s.attributes['toolwatch.evaluation.rule'] !== undefined);
console.log(`exported spans: ${spans.length}; deleted: ${deleted.join(', ')}`);
for (const s of judged) {
  console.log(
    `exported agent span "${s.name}" toolwatch.evaluation.passed=${s.attributes['toolwatch.evaluation.passed']} failed=${JSON.stringify(
      s.attributes['toolwatch.evaluation.failed'],
    )} events=${s.events.filter((e) => e.name === 'gen_ai.evaluation.result').length}`,
  );
}
// The same code path offline: scoring the exported spans gives the same verdict.
for (const v of await evaluateTraces(spans.map(fromReadableSpan), policy)) {
  console.log(`[offline] ${summary(v)}`);
}
