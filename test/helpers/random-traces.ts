/**
 * Seeded random traces of agent-related spans, run through a real tracer: the programs the
 * live/offline differentials (processor, gateway) run. GenAI, AI SDK (6) and OpenInference
 * spans; agents nested in agents under workflow and HTTP roots; tool errors; model calls
 * requesting tools that never run; children ending after their parent; names set after
 * start; several traces interleaved.
 */
import type { Context, Span, Tracer } from '@opentelemetry/api';
import { ROOT_CONTEXT, SpanStatusCode, trace } from '@opentelemetry/api';
import fc from 'fast-check';

export type Kind = 'agent' | 'tool' | 'llm' | 'workflow' | 'http';
/** Which instrumentation wrote the trace's agent, tool and model spans. */
export type Convention = 'gen_ai' | 'ai_sdk' | 'openinference';

export interface Node {
  kind: Kind;
  /** Agent or tool name (index into the lists below). */
  name: number;
  /** Tool argument value; LLM: how many tool calls it requests. */
  value: number;
  /** Tool: fails. Agent: its name is set after start. */
  flag: boolean;
  /** Ends after its parent (fire-and-forget work). */
  late: boolean;
  children: Node[];
}

const AGENTS = ['support', 'support-triage', 'billing'];
const TOOLS = ['lookup', 'reply', 'delete', 'search'];

const node: fc.Memo<Node> = fc.memo((depth) =>
  fc.record({
    kind: fc.constantFrom<Kind>('agent', 'agent', 'tool', 'tool', 'tool', 'llm', 'workflow', 'http'),
    name: fc.nat({ max: 3 }),
    value: fc.nat({ max: 2 }),
    flag: fc.boolean(),
    late: fc.boolean(),
    children: depth <= 1 ? fc.constant([]) : fc.array(node(depth - 1), { maxLength: 4 }),
  }),
);

export const root = fc.record({
  kind: fc.constantFrom<Kind>('agent', 'agent', 'workflow', 'http'),
  name: fc.nat({ max: 3 }),
  value: fc.nat({ max: 2 }),
  flag: fc.boolean(),
  late: fc.constant(false),
  children: fc.array(node(4), { minLength: 1, maxLength: 5 }),
});

/** One step of a program: a span starts or ends. */
export type Op = {
  start: boolean;
  node: Node;
  parent: Node | undefined;
  trace: number;
  convention: Convention;
};

/** Depth-first starts and ends; a late child's end moves after its parent's end (still before the parent's parent ends). */
export function ops(tree: Node, traceIndex: number, convention: Convention): Op[] {
  const out: Op[] = [];
  const walk = (n: Node, parent: Node | undefined): Op[] => {
    const own: Op[] = [{ start: true, node: n, parent, trace: traceIndex, convention }];
    const deferred: Op[] = [];
    for (const child of n.children) {
      const sub = walk(child, n);
      if (child.late && n.kind !== 'tool') {
        // Its end goes after ours.
        const endAt = sub.findIndex((o) => !o.start && o.node === child);
        deferred.push(...sub.slice(endAt));
        own.push(...sub.slice(0, endAt));
      } else own.push(...sub);
    }
    own.push({ start: false, node: n, parent, trace: traceIndex, convention });
    return [...own, ...deferred];
  };
  out.push(...walk(tree, undefined));
  return out;
}

let callCounter = 0;

export class Program {
  private readonly _spans = new Map<Node, Span>();
  private readonly _ids = new Map<Node, string>();
  private _last = 0;
  /** Over the spans started, the least and the greatest lag of the recorded start behind the high-resolution one (ms). */
  private _lag = { min: Number.POSITIVE_INFINITY, max: Number.NEGATIVE_INFINITY };
  /** Each program's trace id, by its index. */
  readonly traceIds: string[] = [];

  constructor(private readonly _tracer: Tracer) {}

  run(op: Op): void {
    // More than a millisecond between steps. Offline, a span starts at its recorded start
    // (whole milliseconds in SDK 2.x) and ends that plus its high-resolution duration; live,
    // at the high-resolution start. Within a millisecond the two clocks can order a model
    // call's end (its requests) and a tool's start differently; more than one apart, never.
    // Counted from the end of the previous step, when its clock reading is surely taken: a
    // stall between a count started before the step and its reading (a loaded machine
    // preempting the process, GC) would let the next step follow at once.
    const until = this._last + 2;
    while (Date.now() < until) {}
    if (op.start) {
      this._start(op.node, op.parent, op.convention);
      if (op.parent === undefined) this.traceIds[op.trace] = this._spans.get(op.node)!.spanContext().traceId;
    } else this._end(op.node, op.convention);
    this._last = Date.now();
  }

  /**
   * Whether every span's recorded start lags its high-resolution start by the same amount give
   * or take less than a millisecond (the whole-millisecond rounding), as steps more than a
   * millisecond apart need for both clocks to order them alike. SDK 2.x reads `Date.now()`
   * and then `performance.now()` as a span starts, records the first and times the end from
   * the second: a stall between the two readings (the process preempted, GC) moves the
   * span's recorded start and end earlier than it ran, by the stall, and offline evaluation
   * then sees another trace than the one that ran (a child ending after its agent, a tool
   * starting before the model call that requested it ended).
   */
  get clocksAgree(): boolean {
    return this._lag.max - this._lag.min < 1;
  }

  private _context(parent: Node | undefined): Context {
    const span = parent === undefined ? undefined : this._spans.get(parent);
    return span === undefined ? ROOT_CONTEXT : trace.setSpan(ROOT_CONTEXT, span);
  }

  private _start(n: Node, parent: Node | undefined, convention: Convention): void {
    const attributes: Record<string, string | number> = {};
    let name: string;
    if (convention === 'ai_sdk' && (n.kind === 'agent' || n.kind === 'tool' || n.kind === 'llm')) {
      // AI SDK ≤ 6: recognised by span name; the agent is the telemetry function id.
      if (n.kind === 'agent') {
        name = 'ai.generateText';
        attributes['ai.operationId'] = 'ai.generateText';
        if (!n.flag) attributes['ai.telemetry.functionId'] = AGENTS[n.name % AGENTS.length]!;
      } else if (n.kind === 'llm') {
        name = 'ai.generateText.doGenerate';
        attributes['ai.operationId'] = 'ai.generateText.doGenerate';
      } else {
        name = 'ai.toolCall';
        const id = `call_${++callCounter}`;
        this._ids.set(n, id);
        attributes['ai.operationId'] = 'ai.toolCall';
        attributes['ai.toolCall.name'] = TOOLS[n.name]!;
        attributes['ai.toolCall.id'] = id;
        attributes['ai.toolCall.args'] = JSON.stringify({ id: n.value });
      }
    } else if (convention === 'openinference' && n.kind !== 'http') {
      // OpenInference: the span kind says what it is; names are free.
      const kinds = { agent: 'AGENT', tool: 'TOOL', llm: 'LLM', workflow: 'CHAIN' } as const;
      attributes['openinference.span.kind'] = kinds[n.kind];
      if (n.kind === 'agent') {
        name = AGENTS[n.name % AGENTS.length]!;
        if (!n.flag) attributes['agent.name'] = name;
      } else if (n.kind === 'tool') {
        name = TOOLS[n.name]!;
        const id = `call_${++callCounter}`;
        this._ids.set(n, id);
        attributes['tool.name'] = name;
        attributes['tool_call.id'] = id;
        attributes['input.value'] = JSON.stringify({ id: n.value });
      } else name = n.kind === 'llm' ? 'ChatModel' : 'RunnableSequence';
    } else if (n.kind === 'agent') {
      const agent = AGENTS[n.name % AGENTS.length]!;
      name = `invoke_agent ${agent}`;
      attributes['gen_ai.operation.name'] = 'invoke_agent';
      if (!n.flag) attributes['gen_ai.agent.name'] = agent;
    } else if (n.kind === 'tool') {
      const tool = TOOLS[n.name]!;
      name = `execute_tool ${tool}`;
      const id = `call_${++callCounter}`;
      this._ids.set(n, id);
      attributes['gen_ai.operation.name'] = 'execute_tool';
      attributes['gen_ai.tool.name'] = tool;
      attributes['gen_ai.tool.call.id'] = id;
      attributes['gen_ai.tool.call.arguments'] = JSON.stringify({ id: n.value });
    } else if (n.kind === 'llm') {
      name = 'chat model';
      attributes['gen_ai.operation.name'] = 'chat';
      attributes['gen_ai.request.model'] = 'model';
    } else if (n.kind === 'workflow') {
      name = 'invoke_workflow flow';
      attributes['gen_ai.operation.name'] = 'invoke_workflow';
    } else {
      name = 'GET /orders';
      attributes['http.request.method'] = 'GET';
    }
    const span = this._tracer.startSpan(name, { attributes }, this._context(parent));
    this._spans.set(n, span);
    const sdk = span as unknown as { startTime?: [number, number]; _performanceStartTime?: number };
    if (sdk.startTime !== undefined && sdk._performanceStartTime !== undefined) {
      const lag =
        performance.timeOrigin +
        sdk._performanceStartTime -
        (sdk.startTime[0] * 1000 + sdk.startTime[1] / 1e6);
      if (lag < this._lag.min) this._lag.min = lag;
      if (lag > this._lag.max) this._lag.max = lag;
    }
  }

  private _end(n: Node, convention: Convention): void {
    const span = this._spans.get(n)!;
    const agent = AGENTS[n.name % AGENTS.length]!;
    const native = n.kind === 'http' || n.kind === 'workflow' ? 'gen_ai' : convention;
    if (n.kind === 'agent' && n.flag) {
      const key = {
        gen_ai: 'gen_ai.agent.name',
        ai_sdk: 'ai.telemetry.functionId',
        openinference: 'agent.name',
      };
      span.setAttribute(key[native], agent);
    }
    if (n.kind === 'tool') {
      if (n.flag) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: 'upstream failed' });
        span.setAttribute('error.type', 'UpstreamError');
      } else {
        const key = {
          gen_ai: 'gen_ai.tool.call.result',
          ai_sdk: 'ai.toolCall.result',
          openinference: 'output.value',
        };
        span.setAttribute(key[native], '{"ok":true}');
      }
    }
    if (n.kind === 'llm' && n.value > 0) {
      // Requests for tools: the first a call that never ran, the second one more.
      const calls = [{ id: `req_${++callCounter}`, name: 'search', args: { id: 1 } }];
      if (n.value > 1) calls.push({ id: `req_${++callCounter}`, name: 'lookup', args: { id: 2 } });
      if (native === 'ai_sdk') {
        const toolCalls = calls.map((c) => ({
          toolCallType: 'function',
          toolCallId: c.id,
          toolName: c.name,
          args: JSON.stringify(c.args),
        }));
        span.setAttribute('ai.response.toolCalls', JSON.stringify(toolCalls));
      } else if (native === 'openinference') {
        const prefix = 'llm.output_messages.0.message';
        span.setAttribute(`${prefix}.role`, 'assistant');
        calls.forEach((c, i) => {
          span.setAttribute(`${prefix}.tool_calls.${i}.tool_call.id`, c.id);
          span.setAttribute(`${prefix}.tool_calls.${i}.tool_call.function.name`, c.name);
          span.setAttribute(`${prefix}.tool_calls.${i}.tool_call.function.arguments`, JSON.stringify(c.args));
        });
      } else {
        const parts = calls.map((c) => ({ type: 'tool_call', id: c.id, name: c.name, arguments: c.args }));
        span.setAttribute('gen_ai.output.messages', JSON.stringify([{ role: 'assistant', parts }]));
      }
    }
    span.end();
  }
}

/**
 * A tool call outside every agent makes the outermost span around it an implicit run, and agents
 * inside that span its members; live, an agent is judged when it ends, before a tool that
 * comes later can make its container a run (docs/processor.md: inherent gaps). Such traces are left out.
 */
export function implicitRunAroundAgents(tree: Node): boolean {
  let looseTool = false;
  let agent = false;
  const walk = (n: Node, underAgent: boolean) => {
    if (n.kind === 'agent') agent = true;
    // Tools, and model calls requesting tools.
    if ((n.kind === 'tool' || (n.kind === 'llm' && n.value > 0)) && !underAgent) looseTool = true;
    for (const child of n.children) walk(child, underAgent || n.kind === 'agent');
  };
  walk(tree, false);
  return looseTool && agent;
}

/** A tool or model call outside every agent (an implicit run's). */
export function hasLooseCalls(tree: Node): boolean {
  const walk = (n: Node, underAgent: boolean): boolean =>
    ((n.kind === 'tool' || n.kind === 'llm') && !underAgent) ||
    n.children.some((child) => walk(child, underAgent || n.kind === 'agent'));
  return walk(tree, false);
}

/** Runs the programs of `trees` interleaved (`order` picks which takes the next step), then the rest in turn. */
export function runInterleaved(
  program: Program,
  trees: Node[],
  order: number[],
  conventions: Convention[] = [],
): void {
  const queues = trees.map((tree, i) => ops(tree, i, conventions[i] ?? 'gen_ai'));
  for (const pick of order) {
    const alive = queues.filter((q) => q.length > 0);
    if (alive.length === 0) break;
    program.run(alive[pick % alive.length]!.shift()!);
  }
  for (const queue of queues) while (queue.length > 0) program.run(queue.shift()!);
}

/**
 * The differentials' policy: a root-only rule with the three deterministic scorers (limits,
 * argument constraints, order) for the `support*` agents, and a rule for every run, nested
 * or not. YAML, so the CLI reads the same file the library parses.
 */
export const DIFFERENTIAL_POLICY = `version: 1
rules:
  - name: support
    match: { agent: "support*" }
    scorers:
      - kind: trajectory
        expected_tools: [lookup]
        forbidden_tools: [delete]
        max_calls: 4
        max_repeats: 1
        arg_constraints: { lookup: { id: { equals: 1 } } }
      - kind: tool_order
        expected_tool_order: [lookup, reply]
      - kind: reliability
        expected_tool_calls: [lookup]
        allow_additional_tool_calls: true
  - name: members
    match: { agent: "*", root_only: false }
    scorers:
      - kind: trajectory
        name: no_delete
        forbidden_tools: [delete]
`;

/** One to three trees, run interleaved. */
export const trees = fc.array(root, { minLength: 1, maxLength: 3 });
/** Which trace takes each next step. */
export const interleaving = fc.array(fc.nat({ max: 5 }), { maxLength: 200 });
/** The convention of each of the (up to three) traces. */
export const conventions = fc.array(fc.constantFrom<Convention>('gen_ai', 'ai_sdk', 'openinference'), {
  minLength: 3,
  maxLength: 3,
});
/** An arrival order for the spans, and how many go in each request or line (1–8). */
export const delivery = fc.record({
  arrival: fc.array(fc.nat(), { minLength: 200, maxLength: 200 }),
  sizes: fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 50 }),
});

/** `items` in the drawn arrival order, cut into the drawn sizes. */
export function delivered<T>(
  items: readonly T[],
  { arrival, sizes }: { arrival: number[]; sizes: number[] },
): T[][] {
  const ordered = items
    .map((item, i) => ({ item, key: arrival[i % arrival.length]! * 1000 + i }))
    .sort((a, b) => a.key - b.key)
    .map((s) => s.item);
  const out: T[][] = [];
  for (let at = 0, r = 0; at < ordered.length; r++) {
    const size = sizes[r % sizes.length]!;
    out.push(ordered.slice(at, at + size));
    at += size;
  }
  return out;
}
