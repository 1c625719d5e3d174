import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { classifySpan } from '../../src/conventions/classify.js';
import { fromReadableSpan } from '../../src/conventions/from-readable-span.js';
import { agentNameOf } from '../../src/conventions/span-role.js';
import { spanIdentity } from '../../src/processor/run-builder.js';
import { recordedSpans } from '../helpers/recorded-fixtures.js';

/**
 * Rule matching reads an agent span's identity through a light view of the SDK span (name,
 * attributes, events; no ids, times or status). It must read the name the full conversion
 * (`fromReadableSpan`) gives, for every recorded span of every convention, replayed as a real
 * SDK span.
 */

describe('spanIdentity', () => {
  it('reads the name the full conversion of the span gives, for every recorded span', () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const tracer = provider.getTracer('replay');
    for (const recorded of recordedSpans()) {
      const span = tracer.startSpan(recorded.name, {
        attributes: recorded.attributes as Record<string, string>,
        startTime: recorded.startTime,
      });
      for (const event of recorded.events)
        span.addEvent(event.name, event.attributes as Record<string, string>, event.time);
      span.setStatus(recorded.status);
      span.end(recorded.endTime ?? recorded.startTime);
    }
    const spans = exporter.getFinishedSpans();
    let agents = 0;
    for (const span of spans) {
      const like = fromReadableSpan(span);
      const { adapter, role } = classifySpan(like);
      const before =
        (role === 'agent' ? adapter?.agent(like)?.name : undefined) ??
        agentNameOf(span.name, span.attributes);
      if (role === 'agent') agents++;
      expect(spanIdentity(span, false, false).agent, span.name).toBe(before);
    }
    expect(agents).toBeGreaterThan(20);
  });
});
