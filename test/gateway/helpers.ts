import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, SpanKind, type Tracer, trace } from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { spansFromOtlpJson } from '../../src/conventions/from-otlp-json.js';
import { otlpJsonFromProtobuf } from '../../src/otlp/otlp-protobuf.js';
import { type RawSpan, splitTraceRequest } from '../../src/otlp/trace-request-splice.js';
import { parsePolicyText } from '../../src/policy/load-policy.js';
import type { Policy, SpanLike } from '../../src/types.js';

export const POLICY_TEXT = `version: 1
rules:
  - name: support
    match: { agent: support_agent }
    scorers:
      - kind: reliability
        expected_tool_calls: [lookup_account]
        allow_additional_tool_calls: true
      - kind: trajectory
        expected_tools: [lookup_account]
        forbidden_tools: [delete_account]
        risk: critical
`;

/**
 * The support policy enforced before each call (\`guard\`): delete_account forbidden, plus
 * budgets and an argument rule that every guard decision checks. Shared by the guard tests and
 * the guard bench.
 */
export const GUARD_POLICY_TEXT = `version: 1
rules:
  - name: support
    match: { agent: support_agent }
    guard: { mode: enforce }
    scorers:
      - kind: trajectory
        expected_tools: [lookup_account]
        forbidden_tools: [delete_account]
        max_calls: 1000000
        max_repeats: 1000000
        arg_constraints: { lookup_account: { account_id: { matches: '^A-[0-9]+$' } } }
`;

export function supportPolicy(): Policy {
  return parsePolicyText(POLICY_TEXT);
}

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer('gateway-test', '1.0.0');

/**
 * One agent run made with a real SDK tracer: an HTTP server root, the `support_agent` run
 * under it, one tool span per name, then `extraSpans` plain child spans. Returns the trace id.
 * Shared by the gateway tests, the Collector tests and the gateway bench.
 */
export function emitAgentRun(tracer: Tracer, tools: string[], extraSpans = 0): string {
  const root = tracer.startSpan('POST /support', {
    kind: SpanKind.SERVER,
    attributes: { 'http.route': '/support' },
  });
  const rootCtx = trace.setSpan(context.active(), root);
  const agent = tracer.startSpan(
    'invoke_agent support_agent',
    { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'support_agent' } },
    rootCtx,
  );
  const agentCtx = trace.setSpan(rootCtx, agent);
  tools.forEach((name, i) => {
    const tool = tracer.startSpan(
      `execute_tool ${name}`,
      {
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': name,
          'gen_ai.tool.call.id': `call_${i}`,
          'gen_ai.tool.call.arguments': JSON.stringify({ account: 'A-1' }),
        },
      },
      agentCtx,
    );
    tool.end();
  });
  for (let i = 0; i < extraSpans; i++) tracer.startSpan(`db ${i}`, { attributes: { i } }, agentCtx).end();
  agent.end();
  root.end();
  return root.spanContext().traceId;
}

/** `emitAgentRun` on an in-memory exporter: the run's spans, in the order the SDK ended them. */
export function recordRun(tools: string[], extraSpans = 0): ReadableSpan[] {
  exporter.reset();
  emitAgentRun(tracer, tools, extraSpans);
  return exporter.getFinishedSpans().slice();
}

export function protobufOf(spans: ReadableSpan[]): Uint8Array {
  return ProtobufTraceSerializer.serializeRequest(spans)!;
}

export interface Sink {
  url: string;
  /** Every request body received, in order. */
  bodies: Uint8Array[];
  /** Answer the next requests with these statuses (then 200). */
  failNext: number[];
  /** When set, requests hang until released. */
  stall: boolean;
  release(): void;
  spans(): RawSpan[];
  decoded(): SpanLike[];
  close(): Promise<void>;
}

/** A real OTLP/HTTP receiver on loopback that records what the gateway forwards. */
export async function startSink(): Promise<Sink> {
  const waiting: (() => void)[] = [];
  const sink: Sink = {
    url: '',
    bodies: [],
    failNext: [],
    stall: false,
    release: () => {
      sink.stall = false;
      for (const w of waiting.splice(0)) w();
    },
    spans: () => sink.bodies.flatMap((b) => splitTraceRequest(b).spans),
    decoded: () => sink.bodies.flatMap((b) => spansFromOtlpJson(otlpJsonFromProtobuf(b))),
    close: async () => {
      sink.release();
      server.closeAllConnections();
      server.close();
    },
  };
  const server: Server = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (sink.stall) await new Promise<void>((r) => waiting.push(r));
    const status = sink.failNext.shift();
    if (status !== undefined) {
      res.writeHead(status).end();
      return;
    }
    sink.bodies.push(new Uint8Array(Buffer.concat(chunks)));
    res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  sink.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
  return sink;
}

export async function until<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function attributesOf(span: SpanLike): Record<string, unknown> {
  return span.attributes;
}
