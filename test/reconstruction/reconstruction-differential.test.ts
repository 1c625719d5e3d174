import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CONVENTION_ADAPTERS, classifySpan } from '../../src/conventions/classify.js';
import { spansFromOtlpJson } from '../../src/conventions/from-otlp-json.js';
import type { ConventionAdapter } from '../../src/conventions/span-facts.js';
import { readAhead } from '../../src/reconstruction/read-facts.js';
import { reconstructTrace, reconstructTraces } from '../../src/reconstruction/reconstruct-trace.js';
import type { SpanLike } from '../../src/types.js';
import { otlpFixtures } from '../helpers/recorded-fixtures.js';
import { mulberry32 } from '../helpers/seeded-random.js';
import {
  CONVENTION_ADAPTERS as REFERENCE_ADAPTERS,
  classifySpan as referenceClassifySpan,
} from './reference/conventions/classify.js';
import type { ConventionAdapter as ReferenceAdapter } from './reference/conventions/span-facts.js';
import { readAhead as referenceReadAhead } from './reference/reconstruction/read-facts.js';
import {
  reconstructTrace as referenceReconstructTrace,
  reconstructTraces as referenceReconstructTraces,
} from './reference/reconstruction/reconstruct-trace.js';

/**
 * Reconstruction and the convention adapters against their previous implementations (kept
 * verbatim under `reference/`: the modules this round changed, and the phases that share
 * their working types — walk-tree, build-history, reparent-handoffs —; unchanged leaves such
 * as canonical-args, guarded and merge-llm-facts are imported from src): every recorded fixture and seeded random traces of every
 * convention (nested runs, request-only calls, history, errors, hostile values) must give
 * the same runs and problems, key order included (JSON text), with the same values
 * (undefined-valued keys, NaN and -0 kept apart by toStrictEqual); offline, with the
 * processor's `readAhead` readings, and with only some spans read ahead.
 */

/** JSON text of a result, back references (run, parent, execution) written as span ids. */
function text(value: unknown): string {
  return JSON.stringify(value, function (this: unknown, key: string, v: unknown) {
    if ((key === 'run' || key === 'parent') && typeof v === 'object' && v !== null)
      return `→run ${(v as { spanId: string }).spanId}`;
    if (key === 'execution' && typeof v === 'object' && v !== null) {
      const e = v as { spanId: string; name: string; requestOnly: boolean };
      return `→execution ${e.spanId} ${e.name} ${e.requestOnly}`;
    }
    if (typeof v === 'number' && !Number.isFinite(v)) return `number ${v}`;
    if (typeof v === 'bigint') return `bigint ${v}`;
    return v;
  });
}

function same(now: unknown, before: unknown, label: string): void {
  expect(text(now), label).toBe(text(before));
  expect(now, label).toStrictEqual(before);
}

/** Readings as plain data: the adapter by name. */
function readingText(reading: unknown): string {
  const r = reading as { classification: { adapter?: { name: string } } } & Record<string, unknown>;
  return text({ ...r, classification: { ...r.classification, adapter: r.classification.adapter?.name } });
}

/** Every way the code under test is entered, compared on one list of spans. */
function compareAll(spans: SpanLike[], label: string): void {
  // Offline: what the CLI, the gateway and evaluateTraces call.
  same(reconstructTrace(spans), referenceReconstructTrace(spans), `${label}: offline`);
  same(reconstructTraces(spans), referenceReconstructTraces(spans), `${label}: grouped`);
  // The processor: readings made ahead, one per span, or only for some (open spans have none).
  const spanList = Array.isArray(spans) ? spans : [];
  const read = (s: unknown, i: number, ahead: (s: SpanLike) => unknown) =>
    typeof s === 'object' && s !== null && typeof (s as SpanLike).attributes === 'object' && i % 3 !== 2
      ? ahead(s as SpanLike)
      : undefined;
  const wellFormed = spanList.every(
    (s) => typeof s === 'object' && s !== null && typeof (s as SpanLike).attributes === 'object',
  );
  if (wellFormed) {
    const readings = spanList.map((s) => readAhead(s));
    const referenceReadings = spanList.map((s) => referenceReadAhead(s as never));
    for (let i = 0; i < readings.length; i++)
      expect(readingText(readings[i]), `${label}: reading ${i}`).toBe(readingText(referenceReadings[i]));
    same(
      reconstructTrace(spans, readings),
      referenceReconstructTrace(spans, referenceReadings as never),
      `${label}: read ahead`,
    );
  }
  same(
    reconstructTrace(
      spans,
      spanList.map((s, i) => read(s, i, readAhead) as never),
    ),
    referenceReconstructTrace(
      spans,
      spanList.map((s, i) => read(s, i, referenceReadAhead as never) as never),
    ),
    `${label}: partly read ahead`,
  );
  // Each adapter alone, on every span (they are public through classify and the processor).
  for (let i = 0; i < spanList.length; i++) {
    const s = spanList[i] as SpanLike;
    if (typeof s !== 'object' || s === null) continue;
    const c = classifySpan(s);
    const rc = referenceClassifySpan(s as never);
    expect(`${c.role} ${c.adapter?.name}`, `${label}: classify ${i}`).toBe(`${rc.role} ${rc.adapter?.name}`);
    for (let k = 0; k < CONVENTION_ADAPTERS.length; k++)
      compareAdapter(CONVENTION_ADAPTERS[k]!, REFERENCE_ADAPTERS[k]!, s, `${label}: span ${i}`);
  }
}

const METHODS = ['role', 'tool', 'agent', 'llm', 'llmOutput', 'llmInput'] as const;
function compareAdapter(
  now: ConventionAdapter,
  before: ReferenceAdapter,
  span: SpanLike,
  label: string,
): void {
  expect(now.name).toBe(before.name);
  for (const m of METHODS) {
    const a = (now[m] as (s: SpanLike) => unknown)(span);
    const b = (before[m] as (s: SpanLike) => unknown)(span);
    same(a, b, `${label} ${now.name}.${m}`);
  }
}

// ---------------------------------------------------------------------------------------
// Seeded random traces

class Gen {
  constructor(readonly next: () => number) {}
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(list: readonly T[]): T {
    return list[this.int(list.length)]!;
  }
}

const NAMES = ['lookup', 'refund', 'search', 'handoff_to_billing', 'transfer_to_billing', 'a', ''];
const IDS = ['c1', 'c2', 'c3', 'c4', ' c1 ', '<not specified>'];
const AGENTS = ['refund-agent', 'billing', 'member', 'Agent workflow'];
const REJECTIONS = [
  'Tool execution for c1 was manually rejected by user',
  'Tool execution was not approved',
  'InvalidToolInputError: bad',
  'Invalid JSON input for tool lookup',
  'boom',
];

function argsValue(g: Gen): unknown {
  return g.pick<() => unknown>([
    () => JSON.stringify({ order_id: g.pick(['A1', 'A2']), n: g.int(3) }),
    () => JSON.stringify({ q: 'Paris' }),
    () => '{}',
    () => '__REDACTED__',
    () => '',
    () => 'Paris',
    () => '{bad json',
    () => '[1,2]',
    () => '"quoted"',
    () => '  \n{"order_id":"A1","n":1}',
    () => ({ order_id: 'A1', n: g.int(3) }),
    () => ({}),
    () => [1, 2],
    () => 42,
    () => null,
    () => undefined,
    () => JSON.stringify({ from_agent: 'x' }),
  ])();
}

function resultValue(g: Gen): unknown {
  return g.pick<() => unknown>([
    () => '{"status":"delivered"}',
    () => '42',
    () => '-1.5e3',
    () => 'true',
    () => 'null',
    () => 'plain text',
    () => '{broken',
    () => '[{"a":1}]',
    () => '{"error":true,"message":"Tool input validation failed for x"}',
    () => '{"to_agent":"Billing Agent"}',
    () => JSON.stringify({ tool_call_id: g.pick(IDS) }),
    () => JSON.stringify({ output: { kwargs: { tool_call_id: 'c2' } } }),
    () => ({ ok: true }),
    () => 7,
    () => '__REDACTED__',
    () => REJECTIONS[g.int(REJECTIONS.length)],
    () => undefined,
  ])();
}

/** GenAI semconv messages with tool calls, responses, approvals and flags. */
function genAiMessages(g: Gen): unknown {
  const messages: unknown[] = [];
  const n = g.int(4);
  for (let m = 0; m < n; m++) {
    const parts: unknown[] = [];
    const k = g.int(3) + 1;
    for (let p = 0; p < k; p++) {
      const kind = g.int(6);
      if (kind === 0) parts.push({ type: 'text', content: 'hello' });
      else if (kind <= 2) {
        const part: Record<string, unknown> = { type: 'tool_call', name: g.pick(NAMES) };
        if (g.chance(0.8)) part['id'] = g.pick(IDS);
        if (g.chance(0.9)) part['arguments'] = argsValue(g);
        if (g.chance(0.1)) part['from_history'] = g.pick([true, 'true', 1]);
        if (g.chance(0.1)) part['pending'] = true;
        if (g.chance(0.05)) part['state'] = 'approval-requested';
        parts.push(part);
      } else if (kind <= 4) {
        const part: Record<string, unknown> = { type: 'tool_call_response', id: g.pick(IDS) };
        part[g.chance(0.7) ? 'response' : 'result'] = g.pick<unknown>([
          'ok',
          { denied: true, reason: 'no' },
          { denied: true },
          { value: 1 },
          REJECTIONS[g.int(REJECTIONS.length)],
          null,
        ]);
        parts.push(part);
      } else {
        parts.push({
          type: 'tool_approval_response',
          approval_id: g.pick(IDS),
          approved: !g.chance(0.7),
        });
      }
    }
    const message: Record<string, unknown> = { role: g.pick(['user', 'assistant', 'tool']), parts };
    if (g.chance(0.1)) message['from_history'] = true;
    messages.push(message);
  }
  const form = g.int(10);
  if (form === 0) return messages; // structured (OTLP kvlist/array)
  if (form === 1) return '[{"role":"user","parts":[{"type":"text","content":"hi"}]}]';
  if (form === 2) return '[{"role":"assistant","parts":[{"type":"tool_call"'; // truncated
  if (form === 3) return 17;
  return JSON.stringify(messages);
}

function errorStatus(g: Gen): SpanLike['status'] {
  const code = g.pick([0, 0, 0, 1, 2, 2] as const);
  if (code !== 2 || g.chance(0.3)) return { code };
  return { code, message: g.pick(REJECTIONS) };
}

function events(g: Gen): SpanLike['events'] {
  const out: SpanLike['events'] = [];
  if (g.chance(0.15))
    out.push({
      name: 'exception',
      time: 1,
      attributes: { 'exception.type': 'ValueError', 'exception.message': g.pick(REJECTIONS) },
    });
  if (g.chance(0.1))
    out.push({
      name: 'gen_ai.tool.call.decision',
      time: 1,
      attributes: {
        'gen_ai.tool.call.decision.outcome': g.pick(['deny', 'require_approval', 'allow']),
        'gen_ai.tool.call.id': g.pick(IDS),
        'gen_ai.tool.name': g.pick(NAMES),
      },
    });
  return out;
}

type Role = 'agent' | 'tool' | 'llm' | 'step' | 'other';

function genAiSpan(g: Gen, role: Role): { name: string; attributes: Record<string, unknown> } {
  const a: Record<string, unknown> = {};
  if (role === 'agent') {
    const agent = g.pick(AGENTS);
    if (g.chance(0.9)) a['gen_ai.operation.name'] = 'invoke_agent';
    if (g.chance(0.8)) a['gen_ai.agent.name'] = g.chance(0.9) ? agent : 12;
    if (g.chance(0.2)) a['gen_ai.agent.id'] = 'id-' + agent;
    if (g.chance(0.3)) a['gen_ai.input.messages'] = genAiMessages(g);
    if (g.chance(0.2)) a['gen_ai.output.messages'] = genAiMessages(g);
    if (g.chance(0.15))
      a['gen_ai.tool.definitions'] = JSON.stringify([{ type: 'function', name: 'lookup' }, 'refund']);
    if (g.chance(0.1)) {
      a['pydantic_ai.all_messages'] = genAiMessages(g);
      a['pydantic_ai.new_message_index'] = g.pick([0, 1, 2, '1', 'x']);
    }
    if (g.chance(0.05)) return { name: 'agent run', attributes: { agent_name: agent } };
    return { name: g.chance(0.8) ? `invoke_agent ${agent}` : 'invoke_agent', attributes: a };
  }
  if (role === 'tool') {
    const name = g.pick(NAMES);
    a['gen_ai.operation.name'] = g.chance(0.95) ? 'execute_tool' : undefined;
    if (g.chance(0.9)) a['gen_ai.tool.name'] = name;
    if (g.chance(0.8)) a['gen_ai.tool.call.id'] = g.pick(IDS);
    if (g.chance(0.85))
      a[g.pick(['gen_ai.tool.call.arguments', 'gcp.vertex.agent.tool_call_args', 'tool_arguments'])] =
        argsValue(g);
    if (g.chance(0.7))
      a[g.pick(['gen_ai.tool.call.result', 'gcp.vertex.agent.tool_response', 'tool_response'])] =
        resultValue(g);
    if (g.chance(0.08)) a['toolwatch.tool.status'] = g.pick(['ok', 'error', 'refused', 'paused', 'weird']);
    if (g.chance(0.05)) a['pydantic_ai.tool.deferral.name'] = 'approval';
    if (g.chance(0.05)) a['gen_ai.tool.call.decision.outcome'] = g.pick(['deny', 'require_approval']);
    if (g.chance(0.08)) a['error.type'] = g.pick(['TimeoutError', 42]);
    if (g.chance(0.05)) a['error.message'] = g.pick(REJECTIONS);
    if (g.chance(0.05)) a['gen_ai.tool.success'] = g.pick([false, 'false', 0, true]);
    if (g.chance(0.05)) a['error'] = g.pick([true, 'TRUE', 1]);
    if (g.chance(0.05)) a['pydantic_ai.tool.failure_stage'] = 'validation';
    if (g.chance(0.03)) a['logfire.msg'] = 'running output function x';
    if (g.chance(0.03)) return { name: 'execute_tool (merged)', attributes: a };
    if (g.chance(0.05))
      return { name: 'running tool', attributes: { 'gen_ai.tool.name': name, tool_arguments: argsValue(g) } };
    return { name: g.chance(0.8) ? `execute_tool ${name}` : name, attributes: a };
  }
  if (role === 'llm') {
    const form = g.int(12);
    if (form === 0) {
      a['gen_ai.operation.name'] = 'client_tool_call';
      if (g.chance(0.8)) a['gen_ai.tool.name'] = g.pick(NAMES);
      a['gen_ai.tool.call.arguments'] = argsValue(g);
      if (g.chance(0.7)) a['gen_ai.tool.call.id'] = g.pick(IDS);
      return { name: 'client_tool_call lookup', attributes: a };
    }
    if (form === 1) {
      a['gcp.vertex.agent.llm_response'] = JSON.stringify({
        content: {
          parts: [
            { function_call: { id: g.pick(IDS), name: g.pick(NAMES), args: { q: 1 } } },
            { functionCall: { name: g.pick(NAMES), args: argsValue(g) } },
          ],
        },
      });
      if (g.chance(0.7))
        a['gcp.vertex.agent.llm_request'] = JSON.stringify({
          contents: [
            { parts: [{ function_call: { id: g.pick(IDS), name: 'lookup', args: {} } }] },
            {
              parts: [{ function_response: { id: g.pick(IDS), name: 'lookup', response: { denied: true } } }],
            },
          ],
        });
      return { name: 'call_llm', attributes: a };
    }
    a['gen_ai.operation.name'] = g.pick(['chat', 'chat', 'generate_content', 'text_completion']);
    if (g.chance(0.7)) a['gen_ai.output.messages'] = genAiMessages(g);
    if (g.chance(0.5)) a['gen_ai.input.messages'] = genAiMessages(g);
    if (g.chance(0.1))
      a['gen_ai.tool.definitions'] = [{ function: { name: 'lookup', parameters: {} } }, 'x', 3];
    return { name: 'chat gpt', attributes: a };
  }
  if (role === 'step') {
    a['gen_ai.operation.name'] = 'agent_step';
    if (g.chance(0.8))
      a['mastra.model_step.output'] = g.chance(0.9)
        ? JSON.stringify({
            toolCalls: [
              { toolName: g.pick(NAMES), toolCallId: g.pick(IDS), args: { q: 1 } },
              { toolName: g.pick(NAMES), input: argsValue(g) },
              'x',
            ],
          })
        : '{"toolCalls": 5}';
    return { name: 'agent_step 1', attributes: a };
  }
  a['gen_ai.operation.name'] = g.pick(['invoke_workflow', 'embeddings', 'unknown_op', ['chat']]);
  return { name: 'workflow', attributes: a };
}

function openInferenceSpan(g: Gen, role: Role): { name: string; attributes: Record<string, unknown> } {
  const a: Record<string, unknown> = {};
  if (role === 'agent') {
    a['openinference.span.kind'] = g.pick(['AGENT', 'agent']);
    const agent = g.pick(AGENTS);
    if (g.chance(0.7)) a['agent.name'] = agent;
    if (g.chance(0.5)) a['graph.node.id'] = 'node-' + agent;
    if (g.chance(0.3))
      a['graph.node.parent_id'] = g.pick(['node-refund-agent', 'refund-agent', 'node-member']);
    if (g.chance(0.2)) a['agno.agent.id'] = 'agno-' + agent;
    if (g.chance(0.3)) a['input.value'] = g.pick(['{"q":"hi"}', '__REDACTED__', 'plain']);
    if (g.chance(0.3)) a['output.value'] = g.pick(['{"a":1}', 'done']);
    return {
      name: g.pick([agent, `${agent}.run`, `${agent}.continue_run`, 'Agent workflow']),
      attributes: a,
    };
  }
  if (role === 'tool') {
    a['openinference.span.kind'] = 'TOOL';
    const name = g.pick(NAMES);
    if (g.chance(0.8)) a['tool.name'] = name;
    if (g.chance(0.8)) a['input.value'] = argsValue(g);
    if (g.chance(0.3)) a['tool.parameters'] = argsValue(g);
    if (g.chance(0.7)) a['output.value'] = resultValue(g);
    if (g.chance(0.3)) a[g.pick(['tool_call.id', 'tool.id'])] = g.pick(IDS);
    return { name: g.chance(0.2) ? 'handoff to Billing Agent' : name, attributes: a };
  }
  if (role === 'llm' || role === 'step') {
    a['openinference.span.kind'] = 'LLM';
    const calls = g.int(3);
    for (let c = 0; c < calls; c++) {
      const p = `llm.output_messages.0.message.tool_calls.${c}.tool_call.`;
      if (g.chance(0.9)) a[p + 'function.name'] = g.pick(NAMES);
      if (g.chance(0.8)) a[p + 'id'] = g.pick(IDS);
      if (g.chance(0.8)) a[p + 'function.arguments'] = argsValue(g);
    }
    const inputs = g.int(4);
    for (let m = 0; m < inputs; m++) {
      const p = `llm.input_messages.${m}.message.`;
      a[p + 'role'] = g.pick(['user', 'assistant', 'tool']);
      if (g.chance(0.6)) a[p + 'content'] = g.pick(REJECTIONS);
      if (g.chance(0.4)) a[p + 'tool_call_id'] = g.pick(IDS);
      if (g.chance(0.3)) {
        a[p + 'tool_calls.0.tool_call.function.name'] = g.pick(NAMES);
        a[p + 'tool_calls.0.tool_call.id'] = g.pick(IDS);
        a[p + 'tool_calls.0.tool_call.function.arguments'] = argsValue(g);
      }
    }
    if (g.chance(0.2)) a['llm.tools.0.tool.json_schema'] = '{"type":"function","function":{"name":"lookup"}}';
    if (g.chance(0.2))
      a['input.value'] = JSON.stringify({
        messages: [
          {
            role: 'assistant',
            from_history: g.chance(0.5),
            tool_calls: [{ id: g.pick(IDS), function: { name: g.pick(NAMES), arguments: '{"q":1}' } }],
          },
          { role: 'tool', tool_call_id: g.pick(IDS), content: 'result', tool_call_error: g.chance(0.3) },
        ],
      });
    if (g.chance(0.15))
      a['output.value'] = JSON.stringify({
        generations: [
          [
            {
              message: {
                lc: 1,
                id: ['AIMessage'],
                kwargs: { tool_calls: [{ id: g.pick(IDS), name: g.pick(NAMES), args: { q: 2 } }] },
              },
            },
          ],
        ],
      });
    if (g.chance(0.1))
      a['input.value'] = JSON.stringify({
        messages: [
          [
            { lc: 1, id: ['ToolMessage'], kwargs: { tool_call_id: g.pick(IDS), content: 'r' } },
            { role: 'assistant', tool_calls: [{ id: g.pick(IDS), name: 'lookup', args: {} }] },
          ],
        ],
      });
    return { name: 'ChatOpenAI', attributes: a };
  }
  a['openinference.span.kind'] = g.pick(['CHAIN', 'RETRIEVER', 5]);
  return { name: g.pick(['LangGraph', 'chain']), attributes: a };
}

function vercelSpan(g: Gen, role: Role): { name: string; attributes: Record<string, unknown> } {
  const a: Record<string, unknown> = {};
  if (role === 'agent') {
    const op = g.pick(['ai.generateText', 'ai.streamText']);
    if (g.chance(0.5)) a['ai.operationId'] = op;
    if (g.chance(0.8)) a['ai.telemetry.functionId'] = g.pick(AGENTS);
    if (g.chance(0.3)) a['ai.prompt'] = '{"prompt":"hi"}';
    if (g.chance(0.3)) a['ai.response.text'] = 'done';
    return { name: op, attributes: a };
  }
  if (role === 'tool') {
    a['ai.operationId'] = 'ai.toolCall';
    if (g.chance(0.9)) a['ai.toolCall.name'] = g.pick(NAMES);
    if (g.chance(0.8)) a['ai.toolCall.id'] = g.pick(IDS);
    if (g.chance(0.9)) a[g.pick(['ai.toolCall.args', 'ai.toolCall.input'])] = argsValue(g);
    if (g.chance(0.7)) a[g.pick(['ai.toolCall.result', 'ai.toolCall.output'])] = resultValue(g);
    return { name: 'ai.toolCall', attributes: a };
  }
  if (role === 'llm' || role === 'step') {
    const op = g.pick(['ai.generateText.doGenerate', 'ai.streamText.doStream']);
    if (g.chance(0.8))
      a['ai.response.toolCalls'] = JSON.stringify([
        { toolCallId: g.pick(IDS), toolName: g.pick(NAMES), input: argsValue(g) },
        { toolCallId: g.pick(IDS), toolName: g.pick(NAMES), args: { q: 1 } },
      ]);
    if (g.chance(0.5))
      a['ai.prompt.messages'] = JSON.stringify([
        {
          role: 'assistant',
          content: [{ type: 'tool-call', toolCallId: g.pick(IDS), toolName: 'lookup', input: {} }],
        },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: g.pick(IDS),
              toolName: 'lookup',
              output: g.pick<unknown>([
                { type: 'error-text', value: 'Invalid input for tool lookup' },
                { type: 'execution-denied', reason: 'no' },
                { type: 'json', value: { a: 1 } },
                'text',
              ]),
            },
          ],
        },
      ]);
    if (g.chance(0.2)) a['ai.prompt.tools'] = [JSON.stringify({ type: 'function', name: 'lookup' })];
    return { name: op, attributes: a };
  }
  return { name: 'ai.embed', attributes: a };
}

function traceloopSpan(g: Gen, role: Role): { name: string; attributes: Record<string, unknown> } {
  const a: Record<string, unknown> = {};
  if (role === 'agent') {
    a['traceloop.span.kind'] = 'agent';
    if (g.chance(0.7)) a['traceloop.entity.name'] = g.pick(AGENTS);
    if (g.chance(0.3)) a['traceloop.entity.input'] = '{"args":[],"kwargs":{"q":1}}';
    return { name: 'refund.agent', attributes: a };
  }
  if (role === 'tool') {
    a['traceloop.span.kind'] = g.pick(['tool', 'task']);
    if (g.chance(0.7)) a['traceloop.entity.name'] = g.pick(NAMES);
    if (g.chance(0.8))
      a['traceloop.entity.input'] = g.pick<unknown>([
        '{"args":[],"kwargs":{"order_id":"A1"}}',
        '{"args":[{"order_id":"A1"}],"kwargs":{"n":1}}',
        '{"args":["Paris"],"kwargs":{}}',
        '{"args":[1,2],"kwargs":{}}',
        argsValue(g),
      ]);
    if (g.chance(0.6)) a['traceloop.entity.output'] = resultValue(g);
    return { name: g.pick(['execute_tool lookup', 'lookup.tool', 'x']), attributes: a };
  }
  if (role === 'llm' || role === 'step') {
    a['llm.request.type'] = 'chat';
    if (g.chance(0.3)) a['gen_ai.output.messages'] = genAiMessages(g);
    else {
      a['gen_ai.completion.0.tool_calls.0.name'] = g.pick(NAMES);
      if (g.chance(0.7)) a['gen_ai.completion.0.tool_calls.0.id'] = g.pick(IDS);
      a['gen_ai.completion.0.tool_calls.0.arguments'] = argsValue(g);
      if (g.chance(0.5)) a['gen_ai.completion.0.tool_calls.1.name'] = g.pick(NAMES);
    }
    return { name: 'openai.chat', attributes: a };
  }
  a['traceloop.span.kind'] = g.pick(['workflow', 'task']);
  if (g.chance(0.5)) a['traceloop.workflow.name'] = 'flow';
  return { name: 'flow.workflow', attributes: a };
}

function mastraSpan(g: Gen, role: Role): { name: string; attributes: Record<string, unknown> } {
  const a: Record<string, unknown> = {};
  if (role === 'agent') {
    a['gen_ai.operation.name'] = 'agent.run';
    if (g.chance(0.5)) a['gen_ai.agent.name'] = g.pick(AGENTS);
    if (g.chance(0.3)) a['agent.id'] = 'id-x';
    if (g.chance(0.3)) a['input'] = '{"messages":[]}';
    return { name: 'agent.refund', attributes: a };
  }
  if (role === 'tool') {
    a['gen_ai.operation.name'] = 'tool.execute';
    if (g.chance(0.7)) a['gen_ai.tool.name'] = g.pick(NAMES);
    if (g.chance(0.8)) a[g.pick(['gen_ai.tool.input', 'input'])] = argsValue(g);
    if (g.chance(0.6)) a[g.pick(['gen_ai.tool.output', 'output'])] = resultValue(g);
    return { name: 'tool.execute lookup', attributes: a };
  }
  a['mastra.span.type'] = 'x';
  if (g.chance(0.5)) {
    a['output'] = JSON.stringify({
      toolCalls: [
        { payload: { toolName: g.pick(NAMES), toolCallId: g.pick(IDS), args: { q: 1 } } },
        { toolName: g.pick(NAMES), input: argsValue(g) },
      ],
    });
    return { name: 'step: 0', attributes: a };
  }
  a['output'] = JSON.stringify({ toolName: g.pick(NAMES), toolCallId: g.pick(IDS), toolInput: { q: 1 } });
  return { name: g.pick(["chunk: 'tool-call'", "chunk: 'tool-result'"]), attributes: a };
}

const SOURCES = [genAiSpan, genAiSpan, openInferenceSpan, vercelSpan, traceloopSpan, mastraSpan];

/** A random trace: one source mostly (sometimes mixed), nested agents, odd clocks and links, hostile values. */
function randomTrace(seed: number): SpanLike[] {
  const g = new Gen(mulberry32(seed));
  const traceId = 'ab'.repeat(16);
  const main = g.pick(SOURCES);
  const count = 1 + g.int(g.chance(0.1) ? 60 : 20);
  const spans: SpanLike[] = [];
  const base = 1_700_000_000_000;
  for (let i = 0; i < count; i++) {
    const source = g.chance(0.85) ? main : g.pick(SOURCES);
    const role: Role =
      i === 0 && g.chance(0.8)
        ? 'agent'
        : g.pick(['agent', 'tool', 'tool', 'tool', 'llm', 'llm', 'step', 'other']);
    const { name, attributes } = source(g, role);
    if (g.chance(0.05)) attributes['toolwatch.from_history'] = g.pick([true, 'true', 1, false]);
    const start = base + (g.chance(0.2) ? i : g.int(i + 1)) + (g.chance(0.3) ? g.next() : 0);
    const span: SpanLike = {
      traceId,
      spanId: `s${i}`,
      name,
      kind: g.int(5),
      startTime: start,
      status: errorStatus(g),
      attributes,
      events: events(g),
    };
    if (!g.chance(0.05)) span.endTime = start + g.int(30) + (g.chance(0.5) ? 0.25 : 0);
    if (i > 0 && !g.chance(0.1)) span.parentSpanId = `s${g.chance(0.6) ? g.int(i) : Math.max(0, i - 1)}`;
    if (g.chance(0.02)) span.parentSpanId = g.pick(['missing', `s${i}`, `s${i + 1}`]);
    if (g.chance(0.05)) span.resource = { 'service.name': 'svc', 'traceloop.entity.name': 'res' };
    if (g.chance(0.03)) span.spanId = g.pick(['s0', '']);
    spans.push(span);
  }
  // Hostile shapes: what a careless sender gives.
  if (g.chance(0.1)) {
    const victim = spans[g.int(spans.length)]! as unknown as Record<string, unknown>;
    const field = g.pick([
      'attributes',
      'events',
      'startTime',
      'endTime',
      'status',
      'name',
      'traceId',
      'kind',
      'resource',
    ]);
    victim[field] = g.pick<unknown>([null, 'x', 42, [], Number.NaN, undefined]);
  }
  if (g.chance(0.03)) (spans as unknown[]).push(g.pick<unknown>([null, 42, 'span']));
  if (g.chance(0.03)) spans.push({ ...spans[0]!, traceId: 'cd'.repeat(16), spanId: 'other' });
  return spans;
}

describe('reconstruction: the same runs and problems as the previous implementation', () => {
  const files = otlpFixtures();

  it('for every recorded fixture, trace by trace', () => {
    expect(files.length).toBeGreaterThan(50);
    let traces = 0;
    for (const file of files) {
      const spans = spansFromOtlpJson(JSON.parse(readFileSync(file, 'utf8')));
      const byTrace = new Map<string, SpanLike[]>();
      for (const s of spans) {
        const list = byTrace.get(s.traceId);
        if (list) list.push(s);
        else byTrace.set(s.traceId, [s]);
      }
      for (const [id, group] of byTrace) {
        compareAll(group, `${file} ${id}`);
        traces++;
      }
      // All of a file's spans at once: mixed traces in one call.
      same(reconstructTrace(spans), referenceReconstructTrace(spans), `${file}: all spans`);
    }
    expect(traces).toBeGreaterThan(50);
  });

  it('for seeded random traces of every convention (nested runs, requests, history, errors, hostile values)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 - 1 }), (seed) => {
        compareAll(randomTrace(seed), `seed ${seed}`);
      }),
      { numRuns: 600, seed: 20261201 },
    );
  });

  it('the random traces reach the paths that matter (not only empty runs)', () => {
    let calls = 0;
    let requestOnly = 0;
    let history = 0;
    let nested = 0;
    let problems = 0;
    let conventions = new Set<string>();
    for (let seed = 0; seed < 400; seed++) {
      const trace = reconstructTrace(randomTrace(seed));
      problems += trace.problems.length;
      const stack = [...trace.runs];
      while (stack.length > 0) {
        const run = stack.pop()!;
        calls += run.calls.length;
        requestOnly += run.calls.filter((c) => c.requestOnly).length;
        history += run.history.length;
        nested += run.children.length;
        for (const c of run.calls) conventions.add(c.convention);
        stack.push(...run.children);
      }
    }
    conventions = new Set([...conventions].sort());
    expect([...conventions]).toEqual(['ai_sdk', 'gen_ai', 'mastra', 'openinference', 'traceloop']);
    expect(calls).toBeGreaterThan(1000);
    expect(requestOnly).toBeGreaterThan(100);
    expect(history).toBeGreaterThan(50);
    expect(nested).toBeGreaterThan(100);
    expect(problems).toBeGreaterThan(100);
  });
});
