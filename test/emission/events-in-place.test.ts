// Evaluation events are stored on the ending agent span without the SDK's addEvent when the
// SDK would store them unchanged. These tests hold that shortcut to the SDK's own output.
import type { SpanLimits } from '@opentelemetry/sdk-trace-base';
import { BasicTracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { evaluationEventAttributes } from '../../src/emission/events.js';
import type { Verdict } from '../../src/types.js';
import { fakeScorer, policyOf } from '../processor/harness.js';
import { byName, evaluationEvents, pipeline, startAgent, tool } from '../processor/tracing.js';

/** What the SDK itself stores for these results, on a span with the same limits and end time. */
function sdkEvents(verdict: Verdict, limits: SpanLimits | undefined, time: ReadableSpan['endTime']) {
  const provider = new BasicTracerProvider(limits ? { spanLimits: limits } : {});
  const span = provider.getTracer('oracle').startSpan('oracle') as unknown as ReadableSpan & {
    addEvent: (name: string, attributes: object, time: unknown) => void;
  };
  for (const result of verdict.results)
    span.addEvent('gen_ai.evaluation.result', evaluationEventAttributes(result), [time[0], time[1]]);
  return span.events.map((event) => ({ ...event }));
}

const longReason = `calls: ${'x'.repeat(300)}`;

describe('evaluation events stored in place', () => {
  for (const [label, limits] of [
    ['default limits', undefined],
    ['a value-length limit that truncates the explanation', { attributeValueLengthLimit: 12 }],
    ['a per-event attribute limit that drops attributes', { attributePerEventCountLimit: 3 }],
    ['both', { attributeValueLengthLimit: 12, attributePerEventCountLimit: 4 }],
  ] as Array<[string, SpanLimits | undefined]>) {
    it(`equal what the SDK's addEvent stores, with ${label}`, async () => {
      const verdicts: Verdict[] = [];
      const p = pipeline({
        policy: policyOf([
          {
            scorers: [
              fakeScorer({ name: 'a' }),
              fakeScorer({ name: 'b', judge: () => false }),
              {
                ...fakeScorer({ name: 'c' }),
                score: () => ({
                  scorer: 'c',
                  kind: 'custom',
                  passed: false,
                  score: 0.25,
                  label: 'fail',
                  reason: longReason,
                  digest: 'digest-c',
                  detail: {},
                }),
              },
            ],
          },
        ]),
        ...(limits ? { spanLimits: limits } : {}),
        onVerdict: (v) => verdicts.push(v),
      });
      const agent = startAgent(p.tracer, 'refund-agent');
      tool(p.tracer, 'lookup', agent);
      agent.end();
      const exported = byName(await p.flush(), 'invoke_agent refund-agent');
      const written = evaluationEvents(exported);
      expect(verdicts).toHaveLength(1);
      expect(written).toHaveLength(3);
      expect(written.map((event) => ({ ...event }))).toEqual(
        sdkEvents(verdicts[0]!, limits, exported.endTime),
      );
      // Stamped with the span's end, as before.
      expect(written[0]!.time).toEqual(exported.endTime);
      await p.provider.shutdown();
    });
  }

  it('stores its own copy of the record shared by every incomplete run', async () => {
    // Past maxSpansPerTrace the tool span is refused: each run gets the same incomplete_trace record.
    const p = pipeline({ policy: policyOf([{ scorers: [fakeScorer({ name: 'a' })] }]), maxSpansPerTrace: 1 });
    for (const name of ['first', 'second']) {
      const agent = startAgent(p.tracer, name);
      tool(p.tracer, 'lookup', agent);
      agent.end();
    }
    const spans = await p.flush();
    const [first] = evaluationEvents(byName(spans, 'invoke_agent first'));
    const [second] = evaluationEvents(byName(spans, 'invoke_agent second'));
    expect(first!.attributes!['gen_ai.evaluation.score.label']).toBe('skipped');
    expect(first!.attributes).not.toBe(second!.attributes);
    // An exporter or processor that edits one span's event in place touches no other span.
    first!.attributes!['gen_ai.evaluation.score.label'] = 'edited';
    const third = startAgent(p.tracer, 'third');
    tool(p.tracer, 'lookup', third);
    third.end();
    const [later] = evaluationEvents(byName(await p.flush(), 'invoke_agent third'));
    expect(second!.attributes!['gen_ai.evaluation.score.label']).toBe('skipped');
    expect(later!.attributes!['gen_ai.evaluation.score.label']).toBe('skipped');
    expect(later!.attributes!['gen_ai.evaluation.explanation']).toBe('incomplete_trace');
    await p.provider.shutdown();
  });
});
