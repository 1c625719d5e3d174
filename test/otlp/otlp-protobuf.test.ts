import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { spansFromOtlpJson } from '../../src/conventions/from-otlp-json.js';
import { otlpJsonFromProtobuf } from '../../src/otlp/otlp-protobuf.js';

function recordSpans() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('proto-test', '1.2.3');
  {
    const agent = tracer.startSpan('invoke_agent refund-agent');
    agent.setAttributes({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'refund-agent' });
    const parent = trace.setSpan(context.active(), agent);
    const tool = tracer.startSpan(
      'execute_tool get_order_detail',
      {
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'get_order_detail',
          'gen_ai.tool.call.arguments': '{"order_id":"A1024"}',
          count: -42,
          ratio: 0.25,
          ok: false,
          tags: ['a', 'b'],
          'unicode.text': 'café ✓',
        },
      },
      parent,
    );
    tool.addEvent('retry', { attempt: 2 });
    tool.setStatus({ code: SpanStatusCode.ERROR, message: 'boom' });
    tool.end();
    agent.end();
  }
  return exporter.getFinishedSpans();
}

describe('otlpJsonFromProtobuf', () => {
  it('decodes to the same spans as the OTLP/JSON encoding of the same request', () => {
    const spans = recordSpans();
    const proto = ProtobufTraceSerializer.serializeRequest(spans)!;
    const json = JSON.parse(new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans)!));
    const fromProto = spansFromOtlpJson(otlpJsonFromProtobuf(proto));
    const fromJson = spansFromOtlpJson(json);
    expect(fromProto).toHaveLength(2);
    expect(fromProto).toEqual(fromJson);
    const tool = fromProto.find((s) => s.name.startsWith('execute_tool'))!;
    expect(tool.attributes).toMatchObject({
      count: -42,
      ratio: 0.25,
      ok: false,
      tags: ['a', 'b'],
      'unicode.text': 'café ✓',
    });
    expect(tool.status).toEqual({ code: 2, message: 'boom' });
    expect(tool.events[0]).toMatchObject({ name: 'retry', attributes: { attempt: 2 } });
    expect(tool.parentSpanId).toBe(fromProto.find((s) => s.name.startsWith('invoke_agent'))!.spanId);
  });

  it('throws on truncated input', () => {
    const proto = ProtobufTraceSerializer.serializeRequest(recordSpans())!;
    expect(() => otlpJsonFromProtobuf(proto.subarray(0, proto.length - 5))).toThrow(/truncated/);
  });

  it('skips unknown fields', () => {
    const proto = ProtobufTraceSerializer.serializeRequest(recordSpans())!;
    // Field 15, varint 1, prepended to the request: unknown at the top level.
    const withUnknown = new Uint8Array([0x78, 0x01, ...proto]);
    expect(spansFromOtlpJson(otlpJsonFromProtobuf(withUnknown))).toHaveLength(2);
  });
});
