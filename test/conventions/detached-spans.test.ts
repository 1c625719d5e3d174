// A missing context manager makes every startActiveSpan a root: the watch must say so once,
// and stay silent when spans nest. Real SDK spans, with and without a context manager.
import { type Context, context, type DiagLogger, DiagLogLevel, diag } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  type ReadableSpan,
  type Span,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { DETACHED_SPANS_WARNING, DetachedSpanWatch } from '../../src/conventions/detached-spans.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { ToolwatchSpanProcessor } from '../../src/processor/toolwatch-span-processor.js';
import { trajectory } from '../../src/scorers/trajectory.js';
import type { Verdict } from '../../src/types.js';

/** What the processor does: feed every agent-related span to the watch as it starts. */
class WatchingProcessor implements SpanProcessor {
  constructor(readonly watch: DetachedSpanWatch) {}
  onStart(span: Span, _parent: Context): void {
    const operation = span.attributes['gen_ai.operation.name'];
    const kind = operation === 'invoke_agent' ? 'agent' : operation === 'execute_tool' ? 'tool' : undefined;
    if (kind) this.watch.observe(kind, span.parentSpanContext !== undefined);
  }
  onEnd(_span: ReadableSpan): void {}
  forceFlush = async () => {};
  shutdown = async () => {};
}

function runAgent(provider: BasicTracerProvider): void {
  const tracer = provider.getTracer('agent');
  tracer.startActiveSpan(
    'invoke_agent a',
    { attributes: { 'gen_ai.operation.name': 'invoke_agent' } },
    (agent) => {
      for (const tool of ['lookup', 'refund']) {
        tracer.startActiveSpan(
          `execute_tool ${tool}`,
          { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tool } },
          (span) => span.end(),
        );
      }
      agent.end();
    },
  );
}

function diagWarnings(): string[] {
  const warnings: string[] = [];
  const logger: DiagLogger = {
    error: () => {},
    warn: (message) => warnings.push(message),
    info: () => {},
    debug: () => {},
    verbose: () => {},
  };
  diag.setLogger(logger, DiagLogLevel.WARN);
  return warnings;
}

afterEach(() => {
  diag.disable();
  context.disable();
});

describe('DetachedSpanWatch', () => {
  it('warns once through diag when agent and tool spans are all roots (no context manager)', () => {
    const warnings = diagWarnings();
    const watch = new DetachedSpanWatch();
    const provider = new BasicTracerProvider({ spanProcessors: [new WatchingProcessor(watch)] });
    runAgent(provider);
    runAgent(provider);
    runAgent(provider);
    expect(warnings).toEqual([DETACHED_SPANS_WARNING]);
    expect(watch.watching).toBe(false);
  });

  it('stays silent and stops watching when spans nest (a context manager is registered)', () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    const warnings = diagWarnings();
    const watch = new DetachedSpanWatch();
    const provider = new BasicTracerProvider({ spanProcessors: [new WatchingProcessor(watch)] });
    runAgent(provider);
    expect(warnings).toEqual([]);
    expect(watch.watching).toBe(false);
  });

  it('needs both a root agent and a root tool: root agents alone are normal', () => {
    const seen: string[] = [];
    const watch = new DetachedSpanWatch((m) => seen.push(m));
    for (let i = 0; i < 100; i++) watch.observe('agent', false);
    watch.observe('llm', false);
    expect(seen).toEqual([]);
    watch.observe('tool', false);
    expect(seen).toHaveLength(1);
    watch.observe('tool', false);
    expect(seen).toHaveLength(1);
  });

  it('a parented span before the signature ends the watch for good', () => {
    const seen: string[] = [];
    const watch = new DetachedSpanWatch((m) => seen.push(m));
    watch.observe('agent', false);
    watch.observe('llm', true);
    watch.observe('tool', false);
    expect(seen).toEqual([]);
  });

  it('the processor warns once when the app has no context manager, and not when it has one', async () => {
    const policy = definePolicy({
      rules: [{ name: 'r', scorers: [trajectory({ forbiddenTools: ['refund'] })] }],
    });
    const runWith = async (manager: boolean) => {
      if (manager) context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
      const warnings = diagWarnings();
      const verdicts: Verdict[] = [];
      const processor = new ToolwatchSpanProcessor({ policy, onVerdict: (v) => verdicts.push(v) });
      const provider = new BasicTracerProvider({ spanProcessors: [processor] });
      runAgent(provider);
      runAgent(provider);
      await provider.shutdown();
      diag.disable();
      context.disable();
      return { warnings: warnings.filter((w) => w === DETACHED_SPANS_WARNING), verdicts };
    };
    const without = await runWith(false);
    expect(without.warnings).toHaveLength(1);
    // The verdict is silently wrong without one: the forbidden call is never seen. Both runs
    // judged (a pass, not a skipped record, and not no verdict at all, which every() accepts).
    const outcome = (verdicts: Verdict[]) => verdicts.map((v) => [v.passed, v.results.map((r) => r.label)]);
    expect(outcome(without.verdicts)).toEqual([
      [true, ['pass']],
      [true, ['pass']],
    ]);
    const withManager = await runWith(true);
    expect(withManager.warnings).toEqual([]);
    expect(outcome(withManager.verdicts)).toEqual([
      [false, ['fail']],
      [false, ['fail']],
    ]);
  });
});
