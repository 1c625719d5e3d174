import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { fromReadableSpan, hrTimeToMs } from '../../src/conventions/from-readable-span.js';

function setup() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, tracer: provider.getTracer('toolwatch-test', '0.1.0') };
}

describe('fromReadableSpan', () => {
  it('reads ids, parent (parentSpanContext), times, status, attributes, events, scope and resource', () => {
    const { exporter, tracer } = setup();
    const parent = tracer.startSpan('invoke_agent a', {
      attributes: { 'gen_ai.operation.name': 'invoke_agent' },
    });
    const child = tracer.startSpan(
      'execute_tool t',
      { attributes: { 'gen_ai.tool.name': 't' } },
      trace.setSpan(context.active(), parent),
    );
    child.addEvent('exception', { 'exception.type': 'Error' });
    child.setStatus({ code: SpanStatusCode.ERROR, message: 'boom' });
    child.end();
    parent.end();
    const [c, p] = exporter.getFinishedSpans().map(fromReadableSpan);
    expect(p!.parentSpanId).toBeUndefined();
    expect(c).toMatchObject({
      traceId: p!.traceId,
      parentSpanId: p!.spanId,
      name: 'execute_tool t',
      kind: 0,
      status: { code: 2, message: 'boom' },
      attributes: { 'gen_ai.tool.name': 't' },
      scope: { name: 'toolwatch-test', version: '0.1.0' },
    });
    expect(c!.events).toHaveLength(1);
    expect(c!.events[0]).toMatchObject({ name: 'exception', attributes: { 'exception.type': 'Error' } });
    expect(c!.endTime).toBeGreaterThanOrEqual(c!.startTime);
    expect(c!.resource?.['service.name']).toBeTypeOf('string');
  });

  it('leaves endTime undefined for a span that has not ended', () => {
    const { tracer } = setup();
    const span = tracer.startSpan('open') as unknown as ReadableSpan;
    const like = fromReadableSpan(span);
    expect(like.endTime).toBeUndefined();
    expect(like.startTime).toBeGreaterThan(0);
  });

  it('falls back to the SDK 1.x parentSpanId field', () => {
    const { exporter, tracer } = setup();
    tracer.startSpan('root').end();
    const sdk1 = Object.create(exporter.getFinishedSpans()[0]!, {
      parentSpanId: { value: 'abcdefabcdefabcd' },
    });
    expect(fromReadableSpan(sdk1).parentSpanId).toBe('abcdefabcdefabcd');
  });

  it('converts HrTime to epoch milliseconds with the nanoseconds as a fraction', () => {
    expect(hrTimeToMs([1_764_000_000, 123_456_789]) - 1_764_000_000_123).toBeCloseTo(0.456789, 3);
  });
});
