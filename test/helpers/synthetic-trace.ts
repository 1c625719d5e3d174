import type { SpanLike } from '../../src/types.js';
import { encloseChildren, SpanFactory } from './span-like.js';

/**
 * Synthetic traces as `SpanLike[]` for scale and robustness tests: GenAI-semconv agents with
 * LLM and tool spans, in the shapes real frameworks emit.
 */
export interface SyntheticOptions {
  traceId?: string;
  /** Tool calls of the outer agent; each gets one LLM span asking for it. Default 10. */
  tools?: number;
  /** Extra LLM spans (final answers). Default 1. */
  finalLlms?: number;
  /** Nested member runs, each under a delegating tool span, each with 2 tool calls. Default 1. */
  members?: number;
}

/** One agent run (optionally with members): N requests, N executions joined by id. */
export function syntheticAgentTrace(options: SyntheticOptions = {}): SpanLike[] {
  const traceId = options.traceId ?? 'a'.repeat(32);
  const tools = options.tools ?? 10;
  const members = options.members ?? 1;
  const finals = options.finalLlms ?? 1;
  const spans: SpanLike[] = [];
  const factory = new SpanFactory(traceId);
  const make = (
    name: string,
    parent: SpanLike | undefined,
    attributes: Record<string, unknown>,
    kind = 0,
  ) => {
    const span = factory.make(name, attributes, { kind, ...(parent ? { parent } : {}) });
    spans.push(span);
    return span;
  };
  const agent = (name: string, parent?: SpanLike) =>
    make(`invoke_agent ${name}`, parent, {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': name,
    });
  const call = (owner: SpanLike, tool: string, callId: string, args: Record<string, unknown>): SpanLike => {
    const step = make('step', owner, { 'gen_ai.operation.name': 'agent_step' });
    make(
      'chat mock',
      step,
      {
        'gen_ai.operation.name': 'chat',
        'gen_ai.output.messages': JSON.stringify([
          {
            role: 'assistant',
            finish_reason: 'tool_call',
            parts: [{ type: 'tool_call', id: callId, name: tool, arguments: args }],
          },
        ]),
      },
      2,
    );
    return make(`execute_tool ${tool}`, step, {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': tool,
      'gen_ai.tool.call.id': callId,
      'gen_ai.tool.call.arguments': JSON.stringify(args),
      'gen_ai.tool.call.result': '{"ok":true}',
    });
  };
  const root = agent('orchestrator');
  for (let i = 0; i < tools; i++) call(root, `tool_${i % 7}`, `call_${i}`, { n: i, q: 'x' });
  for (let m = 0; m < members; m++) {
    const delegate = call(root, 'delegate', `call_d${m}`, { member: m });
    const member = agent(`member_${m}`, delegate);
    call(member, 'lookup', `call_m${m}a`, { k: 1 });
    call(member, 'lookup', `call_m${m}b`, { k: 2 });
  }
  for (let i = 0; i < finals; i++) make('chat mock', root, { 'gen_ai.operation.name': 'chat' }, 2);
  return encloseChildren(spans);
}

/** A chain of `depth` spans, each the parent of the next, with a tool span at the bottom. */
export function deepChainTrace(depth: number, traceId = 'd'.repeat(32)): SpanLike[] {
  const spans: SpanLike[] = [];
  for (let i = 0; i < depth; i++) {
    const s: SpanLike = {
      traceId,
      spanId: (i + 1).toString(16).padStart(16, '0'),
      name: i === 0 ? 'invoke_agent deep' : i === depth - 1 ? 'execute_tool leaf' : `wrapper ${i}`,
      kind: 0,
      startTime: i,
      endTime: 2 * depth - i,
      status: { code: 0 },
      attributes:
        i === 0
          ? { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'deep' }
          : i === depth - 1
            ? { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'leaf' }
            : {},
      events: [],
    };
    if (i > 0) s.parentSpanId = spans[i - 1]!.spanId;
    spans.push(s);
  }
  return spans;
}
