/**
 * A run no scorer judged is neither a pass nor a failure. Its verdict (every result
 * `skipped`: out of the sample, an incomplete trace) reached `onVerdict` with `passed: true`,
 * so an application counting passes counted runs nobody looked at. It carries `passed: null`
 * now; on the span, `toolwatch.evaluation.passed` is absent and `toolwatch.keep` false.
 * (An incomplete run offline: evaluate-traces.test.ts.)
 */
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { ToolwatchSpanProcessor } from '../../src/processor/toolwatch-span-processor.js';
import type { Verdict } from '../../src/types.js';
import { fakeScorer, policyOf } from './harness.js';
import { startAgent, tool } from './tracing.js';

function judge(ratio: number) {
  const verdicts: Verdict[] = [];
  const exporter = new InMemorySpanExporter();
  const processor = new ToolwatchSpanProcessor({
    policy: policyOf([{ match: { rootOnly: false }, scorers: [fakeScorer()] }], { sampling: { ratio } }),
    onVerdict: (v) => verdicts.push(v),
    // Runs out of the sample reach onVerdict only when asked for.
    sampledOutVerdicts: true,
  });
  const provider = new BasicTracerProvider({
    spanProcessors: [processor, new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('unjudged');
  const root = startAgent(tracer, 'root');
  const nested = startAgent(tracer, 'nested', root);
  tool(tracer, 'lookup', nested);
  nested.end();
  root.end();
  return { verdicts, spans: exporter.getFinishedSpans() };
}

describe('a verdict no scorer judged', () => {
  it('out of the sample: passed null to onVerdict; the span says only that it was sampled out', () => {
    const { verdicts, spans } = judge(0);
    expect(verdicts.map((v) => [v.agent, v.passed, v.results.map((r) => `${r.label}: ${r.reason}`)])).toEqual(
      [
        ['nested', null, ['skipped: sampled_out']],
        ['root', null, ['skipped: sampled_out']],
      ],
    );
    const root = spans.find((s) => s.name.includes('root'))!;
    expect(root.attributes['toolwatch.evaluation.passed']).toBeUndefined();
    expect(root.attributes['toolwatch.keep']).toBeUndefined();
    expect(root.attributes['toolwatch.evaluation.skipped']).toBe('sampled_out');
  });
});
