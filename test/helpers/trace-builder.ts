/**
 * Builds OTLP/JSON traces (ExportTraceServiceRequest) in OTel GenAI semconv shape, so tests
 * run scorers on real span shapes through decoding and reconstruction rather than on
 * hand-built runs.
 *
 *   const t = new TraceBuilder();
 *   const agent = t.agent('refund-agent');
 *   agent.llm({ toolCalls: [{ name: 'get_order_detail', id: 'c1', args: { order_id: 'A1024' } }] });
 *   agent.tool('get_order_detail', { id: 'c1', args: { order_id: 'A1024' }, result: { ok: true } });
 *   const otlp = t.toOtlp();
 */

export type ToolSpanStatus = 'ok' | 'error' | 'refused' | 'paused';

export interface ToolOptions {
  id?: string;
  /** Object (JSON-encoded on the span) or a raw string written as-is. */
  args?: unknown;
  result?: unknown;
  status?: ToolSpanStatus;
  errorMessage?: string;
  attributes?: Record<string, unknown>;
}

export interface LlmToolCall {
  name: string;
  id?: string;
  args?: unknown;
}

export interface LlmOptions {
  toolCalls?: LlmToolCall[];
  /** Input messages (GenAI parts format), e.g. history. */
  inputMessages?: unknown[];
  attributes?: Record<string, unknown>;
}

interface NodeSpec {
  spanId: string;
  parent?: NodeSpec;
  name: string;
  kind: number;
  start: number;
  end?: number;
  attributes: Record<string, unknown>;
  status: { code: number; message?: string };
  events: Array<{ name: string; time: number; attributes: Record<string, unknown> }>;
  children: NodeSpec[];
  /** False for spans that are still open (no end time in the output). */
  ended: boolean;
}

const BASE_MS = 1_764_000_000_000;

export class SpanNode {
  constructor(
    private readonly _builder: TraceBuilder,
    readonly spec: NodeSpec,
  ) {}

  get spanId(): string {
    return this.spec.spanId;
  }

  /** A nested agent span (`invoke_agent {name}`). */
  agent(name: string, attributes: Record<string, unknown> = {}): SpanNode {
    return this._builder._add(this.spec, `invoke_agent ${name}`, {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': name,
      ...attributes,
    });
  }

  /** A `chat` LLM span whose output asks for the given tool calls. */
  llm(options: LlmOptions = {}): SpanNode {
    const attributes: Record<string, unknown> = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'mock-model',
      ...options.attributes,
    };
    if (options.toolCalls?.length) {
      attributes['gen_ai.output.messages'] = JSON.stringify([
        {
          role: 'assistant',
          finish_reason: 'tool_call',
          parts: options.toolCalls.map((c) => ({
            type: 'tool_call',
            ...(c.id !== undefined ? { id: c.id } : {}),
            name: c.name,
            ...(c.args !== undefined ? { arguments: c.args } : {}),
          })),
        },
      ]);
    }
    if (options.inputMessages) attributes['gen_ai.input.messages'] = JSON.stringify(options.inputMessages);
    return this._builder._add(this.spec, 'chat mock-model', attributes, 2);
  }

  /** An `execute_tool {name}` span. */
  tool(name: string, options: ToolOptions = {}): SpanNode {
    const attributes: Record<string, unknown> = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': name,
      ...options.attributes,
    };
    if (options.id !== undefined) attributes['gen_ai.tool.call.id'] = options.id;
    if (options.args !== undefined) {
      attributes['gen_ai.tool.call.arguments'] =
        typeof options.args === 'string' ? options.args : JSON.stringify(options.args);
    }
    if (options.result !== undefined) {
      attributes['gen_ai.tool.call.result'] =
        typeof options.result === 'string' ? options.result : JSON.stringify(options.result);
    }
    const node = this._builder._add(this.spec, `execute_tool ${name}`, attributes);
    const status = options.status ?? 'ok';
    if (status === 'error') {
      node.spec.status = { code: 2, message: options.errorMessage ?? 'tool failed' };
      node.spec.attributes['error.type'] = 'Error';
    } else if (status === 'refused') {
      node.spec.attributes['gen_ai.tool.call.decision.outcome'] = 'deny';
    } else if (status === 'paused') {
      node.spec.attributes['toolwatch.tool.status'] = 'paused';
    }
    return node;
  }

  /** Any other span (HTTP, DB, step/chain wrappers). */
  span(name: string, attributes: Record<string, unknown> = {}, kind = 0): SpanNode {
    return this._builder._add(this.spec, name, attributes, kind);
  }

  set(attributes: Record<string, unknown>): this {
    Object.assign(this.spec.attributes, attributes);
    return this;
  }

  error(message = 'failed'): this {
    this.spec.status = { code: 2, message };
    return this;
  }

  /** Leave the span open (no end time), as a still-running span would be. */
  open(): this {
    this.spec.ended = false;
    return this;
  }
}

export class TraceBuilder {
  readonly traceId: string;
  private _clock = 0;
  private _nextId = 1;
  private readonly _roots: NodeSpec[] = [];
  private readonly _resource: Record<string, unknown>;

  constructor(options: { traceId?: string; resource?: Record<string, unknown> } = {}) {
    this.traceId = options.traceId ?? randomHex(32);
    this._resource = options.resource ?? { 'service.name': 'toolwatch-test' };
  }

  /** A root agent span. */
  agent(name: string, attributes: Record<string, unknown> = {}): SpanNode {
    return this._add(undefined, `invoke_agent ${name}`, {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': name,
      ...attributes,
    });
  }

  /** A root span of any kind. */
  span(name: string, attributes: Record<string, unknown> = {}, kind = 0): SpanNode {
    return this._add(undefined, name, attributes, kind);
  }

  /** @internal */
  _add(parent: NodeSpec | undefined, name: string, attributes: Record<string, unknown>, kind = 0): SpanNode {
    const spec: NodeSpec = {
      spanId: (this._nextId++).toString(16).padStart(16, '0'),
      parent,
      name,
      kind,
      start: this._clock++,
      attributes,
      status: { code: 0 },
      events: [],
      children: [],
      ended: true,
    };
    if (parent) parent.children.push(spec);
    else this._roots.push(spec);
    return new SpanNode(this, spec);
  }

  /** Every span, parents before children, ends computed so parents enclose children. */
  private _flatten(): NodeSpec[] {
    const out: NodeSpec[] = [];
    const finish = (n: NodeSpec): number => {
      let end = n.start + 0.5;
      for (const c of n.children) end = Math.max(end, finish(c));
      n.end = end + 0.25;
      return n.end;
    };
    for (const r of this._roots) finish(r);
    const walk = (n: NodeSpec) => {
      out.push(n);
      for (const c of n.children) walk(c);
    };
    for (const r of this._roots) walk(r);
    return out;
  }

  /** OTLP/JSON ExportTraceServiceRequest with one resource and one scope. */
  toOtlp(): OtlpRequest {
    const spans = this._flatten().map((n) => ({
      traceId: this.traceId,
      spanId: n.spanId,
      ...(n.parent ? { parentSpanId: n.parent.spanId } : {}),
      name: n.name,
      // OTLP enums are the API's plus one (SPAN_KIND_INTERNAL = 1).
      kind: n.kind + 1,
      startTimeUnixNano: msToNanos(BASE_MS + n.start),
      ...(n.ended ? { endTimeUnixNano: msToNanos(BASE_MS + n.end!) } : {}),
      attributes: toKeyValues(n.attributes),
      events: n.events.map((e) => ({
        name: e.name,
        timeUnixNano: msToNanos(BASE_MS + e.time),
        attributes: toKeyValues(e.attributes),
      })),
      status:
        n.status.code === 0
          ? {}
          : { code: n.status.code, ...(n.status.message ? { message: n.status.message } : {}) },
    }));
    return {
      resourceSpans: [
        {
          resource: { attributes: toKeyValues(this._resource) },
          scopeSpans: [{ scope: { name: 'toolwatch-test' }, spans }],
        },
      ],
    };
  }
}

export interface OtlpRequest {
  resourceSpans: Array<{
    resource?: { attributes: OtlpKeyValue[] };
    scopeSpans: Array<{ scope?: { name: string; version?: string }; spans: Array<Record<string, unknown>> }>;
  }>;
}

export interface OtlpKeyValue {
  key: string;
  value: Record<string, unknown>;
}

export function toKeyValues(attributes: Record<string, unknown>): OtlpKeyValue[] {
  return Object.entries(attributes).map(([key, v]) => ({ key, value: toAnyValue(v) }));
}

export function toAnyValue(v: unknown): Record<string, unknown> {
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (typeof v === 'number') return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
  if (Array.isArray(v)) return { arrayValue: { values: v.map(toAnyValue) } };
  if (v && typeof v === 'object') {
    return { kvlistValue: { values: toKeyValues(v as Record<string, unknown>) } };
  }
  return {};
}

function msToNanos(ms: number): string {
  const whole = Math.floor(ms);
  const frac = Math.round((ms - whole) * 1e6);
  return (BigInt(whole) * 1_000_000n + BigInt(frac)).toString();
}

function randomHex(len: number): string {
  let s = '';
  for (let i = 0; i < len; i++) s += Math.floor(Math.random() * 16).toString(16);
  return s;
}
