import {
  ATTR_AGNO_AGENT_ID,
  ATTR_AGNO_TEAM_ID,
  ATTR_OI_AGENT_NAME,
  ATTR_OI_GRAPH_NODE_ID,
  ATTR_OI_GRAPH_NODE_NAME,
  ATTR_OI_GRAPH_NODE_PARENT_ID,
  ATTR_OI_INPUT_VALUE,
  ATTR_OI_OUTPUT_VALUE,
  ATTR_OI_TOOL_CALL_ID,
  ATTR_OI_TOOL_ID,
  ATTR_OI_TOOL_NAME,
  ATTR_OI_TOOL_PARAMETERS,
  ATTR_OPENINFERENCE_SPAN_KIND,
} from '../semconv.js';
import type { SpanLike, ToolDefinition } from '../types.js';
import { readToolDefinitions } from './gen-ai-messages.js';
import { guarded } from './guarded.js';
import { inputSize, mergeLlmFacts, NO_INPUT } from './merge-llm-facts.js';
import {
  callWithArgs,
  isRecord,
  REDACTED,
  readArgs,
  readJsonStructure,
  readMaybeJson,
  readString,
  readTrue,
} from './read-values.js';
import type {
  AgentFacts,
  ConventionAdapter,
  LlmFacts,
  LlmInputFacts,
  MessageCall,
  RefusalFacts,
  SpanRole,
  ToolFacts,
} from './span-facts.js';
import { callIdFromRejection, isRejectionText, readToolStatus, wasNotRun } from './tool-status.js';

const CONVENTION = 'openinference';
const HANDOFF_NAME = 'handoff to ';
const HANDOFF_TOOL = 'handoff_to_';

/**
 * OpenInference (Arize): OpenAI Agents JS bridge, LangChain/LangGraph, agno, Vercel via
 * `@arizeai/openinference-vercel`. Span kind TOOL/AGENT/LLM; CHAIN and the rest are
 * structure (a LangGraph CHAIN root becomes an implicit run in reconstruction).
 */
export const openInferenceRole = guarded(openInferenceRoleOf, undefined);

function openInferenceRoleOf(span: SpanLike): SpanRole | undefined {
  const kind = span.attributes[ATTR_OPENINFERENCE_SPAN_KIND];
  if (typeof kind !== 'string') return undefined;
  switch (kind.toUpperCase()) {
    case 'TOOL':
      return 'tool';
    case 'AGENT':
      return 'agent';
    case 'LLM':
      return 'llm';
    default:
      return 'other';
  }
}

export const openInferenceTool = guarded(
  (span: SpanLike): ToolFacts | undefined =>
    openInferenceRoleOf(span) === 'tool' ? readTool(span) : undefined,
  undefined,
);

function readTool(span: SpanLike): ToolFacts | undefined {
  const a = span.attributes;
  const name = readString(a[ATTR_OI_TOOL_NAME]) ?? span.name;
  const input = a[ATTR_OI_INPUT_VALUE];
  // agno and the converters also put the call arguments in tool.parameters, which masking leaves alone.
  const args =
    input === undefined || input === REDACTED || input === ''
      ? readArgs(a[ATTR_OI_TOOL_PARAMETERS])
      : readArgs(input);
  const output = a[ATTR_OI_OUTPUT_VALUE];
  const outputText = typeof output === 'string' ? output : undefined;
  const facts: ToolFacts = { convention: CONVENTION, name, ...args, ...readToolStatus(span, [outputText]) };
  const id =
    readString(a[ATTR_OI_TOOL_CALL_ID]) ??
    readString(a[ATTR_OI_TOOL_ID]) ??
    callIdFromRejection(span.status.message) ??
    callIdFromRejection(outputText);
  if (output !== undefined && output !== REDACTED) facts.result = readMaybeJson(output);
  const fromResult = id ?? toolMessageCallId(facts.result);
  if (fromResult) facts.callId = fromResult;

  // OpenAI Agents handoffs: the model calls `transfer_to_<agent>`, the span says `handoff_to_<agent>`.
  const target =
    (isRecord(facts.result) ? readString(facts.result['to_agent']) : undefined) ??
    (span.name.startsWith(HANDOFF_NAME) ? span.name.slice(HANDOFF_NAME.length) : undefined) ??
    (name.startsWith(HANDOFF_TOOL) ? name.slice(HANDOFF_TOOL.length) : undefined);
  if (target && (name.startsWith(HANDOFF_TOOL) || span.name.startsWith(HANDOFF_NAME))) {
    const alias = 'transfer_to_' + target.replace(/[\s-]+/g, '_').toLowerCase();
    facts.aliases = alias === name ? [] : [alias];
    // `{"from_agent": …}` is the bridge's bookkeeping, not what the model passed.
    facts.usable = false;
  }
  if (wasNotRun(span, [outputText])) facts.notRun = true;
  return facts;
}

/** LangGraph's tool output is a serialized ToolMessage; its `tool_call_id` is the only call id anywhere. */
function toolMessageCallId(result: unknown): string | undefined {
  let v = result;
  for (let depth = 0; depth < 3 && isRecord(v); depth++) {
    const direct = readString(v['tool_call_id']);
    if (direct) return direct;
    const kwargs = v['kwargs'];
    if (isRecord(kwargs)) {
      const id = readString(kwargs['tool_call_id']);
      if (id) return id;
    }
    v = v['output'] ?? v['update'];
  }
  return undefined;
}

export const openInferenceAgent = guarded(
  (span: SpanLike): AgentFacts | undefined =>
    openInferenceRoleOf(span) === 'agent' ? readAgent(span) : undefined,
  undefined,
);

/** The agent's name as `readAgent` gives it, read alone: rule matching needs only this, never the messages. */
function readAgentName(span: SpanLike): string {
  const a = span.attributes;
  return (
    readString(a[ATTR_OI_AGENT_NAME]) ??
    readString(a[ATTR_OI_GRAPH_NODE_NAME]) ??
    readString(a['ai.telemetry.functionId']) ??
    span.name
  );
}

function readAgent(span: SpanLike, deferValues = false): AgentFacts | undefined {
  const a = span.attributes;
  const nodeId = readString(a[ATTR_OI_GRAPH_NODE_ID]);
  const facts: AgentFacts = { convention: CONVENTION, name: readAgentName(span) };
  const agentId = readString(a[ATTR_AGNO_AGENT_ID]) ?? readString(a[ATTR_AGNO_TEAM_ID]);
  if (agentId) facts.agentId = agentId;
  if (nodeId) facts.nodeId = nodeId;
  else facts.wrapperCandidate = true;
  if (span.name.endsWith('.continue_run') || span.name.endsWith('.acontinue_run')) facts.continuation = true;
  const parent = readString(a[ATTR_OI_GRAPH_NODE_PARENT_ID]);
  if (parent) facts.parentNodeId = parent;
  const input = a[ATTR_OI_INPUT_VALUE];
  const output = a[ATTR_OI_OUTPUT_VALUE];
  if (input !== undefined && input !== REDACTED && !deferValues) facts.input = readMaybeJson(input);
  if (output !== undefined && output !== REDACTED && !deferValues) facts.output = readMaybeJson(output);
  return facts;
}

const OUTPUT_CALL =
  /^llm\.output_messages\.(\d+)\.message\.tool_calls\.(\d+)\.tool_call\.(id|function\.name|function\.arguments)$/;
const INPUT_KEY =
  /^llm\.input_messages\.(\d+)\.message\.(?:tool_calls\.(\d+)\.tool_call\.(id|function\.name|function\.arguments)|(role|content|tool_call_id))$/;
const TOOL_SCHEMA = /^llm\.tools\.(\d+)\.tool\.json_schema$/;

export const openInferenceLlm = guarded((span: SpanLike): LlmFacts | undefined => {
  return mergeLlmFacts(openInferenceLlmOutput(span), openInferenceLlmInput(span));
}, undefined);

/** Requests from the flattened `llm.output_messages.*.tool_calls.*`, tool definitions from `llm.tools.*`. */
export const openInferenceLlmOutput = guarded(
  (span: SpanLike): LlmFacts | undefined =>
    openInferenceRoleOf(span) === 'llm' ? readLlmOutput(span) : undefined,
  undefined,
);

function readLlmOutput(span: SpanLike): LlmFacts | undefined {
  const a = span.attributes;
  const output = new Map<string, FlatCall>();
  const schemas: Array<[number, unknown]> = [];
  let inputKeys = 0;
  for (const key in a) {
    if (key.charCodeAt(0) !== 108 /* l */) continue;
    if (key.startsWith(INPUT_PREFIX)) {
      inputKeys++;
      continue;
    }
    let m = OUTPUT_CALL.exec(key);
    if (m) {
      setCallField(output, m[1]!, m[2]!, m[3]!, a[key]);
      continue;
    }
    m = TOOL_SCHEMA.exec(key);
    if (m) schemas.push([Number(m[1]), readMaybeJson(a[key])]);
  }
  const facts: LlmFacts = {
    convention: CONVENTION,
    // LangChain chat models other than ChatOpenAI keep tool calls on the message only; the
    // tracer flattens none of them, so the serialized output is the only place they are.
    requests: output.size > 0 ? toCalls(output) : serializedOutputCalls(a[ATTR_OI_OUTPUT_VALUE]),
    progress: inputKeys + inputSize(a[ATTR_OI_INPUT_VALUE]),
  };
  if (schemas.length > 0) {
    schemas.sort((x, y) => x[0] - y[0]);
    const defs: ToolDefinition[] | undefined = readToolDefinitions(schemas.map((s) => s[1]));
    if (defs) facts.toolDefinitions = defs;
  }
  return facts;
}

/** Tool calls and tool messages of `llm.input_messages.*`, and agno's flagged history in `input.value`. */
export const openInferenceLlmInput = guarded(
  (span: SpanLike): LlmInputFacts => (openInferenceRoleOf(span) === 'llm' ? readLlmInput(span) : NO_INPUT),
  NO_INPUT,
);

function readLlmInput(span: SpanLike): LlmInputFacts {
  const a = span.attributes;
  const inputCalls = new Map<string, FlatCall>();
  const inputMessages = new Map<number, { role?: string; content?: string; toolCallId?: string }>();
  for (const key in a) {
    if (!key.startsWith(INPUT_PREFIX)) continue;
    const m = INPUT_KEY.exec(key);
    if (!m) continue;
    if (m[2] !== undefined) {
      setCallField(inputCalls, m[1]!, m[2], m[3]!, a[key]);
      continue;
    }
    const idx = Number(m[1]);
    let msg = inputMessages.get(idx);
    if (!msg) {
      msg = {};
      inputMessages.set(idx, msg);
    }
    const v = readString(a[key]);
    if (v !== undefined) {
      if (m[4] === 'role') msg.role = v;
      else if (m[4] === 'content') msg.content = v;
      else msg.toolCallId = v;
    }
  }
  const calls = toCalls(inputCalls);
  const refusals: RefusalFacts[] = [];
  for (const msg of inputMessages.values()) {
    if (msg.role === 'tool' && msg.toolCallId && msg.content !== undefined) {
      const r: RefusalFacts = { callId: msg.toolCallId, text: msg.content };
      // OpenAI Agents answers a rejected approval with a fixed text as the tool's output.
      if (isRejectionText(msg.content)) r.rejected = true;
      refusals.push(r);
    }
  }
  // Unflattened LangChain messages (see serializedOutputCalls): calls and tool results with
  // their ids are only in the serialized `input.value`.
  if (inputCalls.size === 0 || refusals.length === 0) {
    const serialized = serializedInputMessages(a[ATTR_OI_INPUT_VALUE]);
    if (inputCalls.size === 0) calls.push(...serialized.calls);
    if (refusals.length === 0) refusals.push(...serialized.refusals);
  }
  // agno's input.value carries `from_history` per message, which the flattened form drops.
  const agno = readAgnoMessages(a[ATTR_OI_INPUT_VALUE]);
  calls.unshift(...agno.calls);
  refusals.push(...agno.refusals);
  return { inputCalls: calls, refusals };
}

type FlatCall = { m: number; c: number; id?: string; name?: string; args?: unknown };
const INPUT_PREFIX = 'llm.input_messages.';

function setCallField(
  map: Map<string, { m: number; c: number; id?: string; name?: string; args?: unknown }>,
  m: string,
  c: string,
  field: string,
  value: unknown,
): void {
  const key = m + '.' + c;
  let call = map.get(key);
  if (!call) {
    call = { m: Number(m), c: Number(c) };
    map.set(key, call);
  }
  if (field === 'id') {
    const id = readString(value);
    if (id) call.id = id;
  } else if (field === 'function.name') {
    const name = readString(value);
    if (name) call.name = name;
  } else {
    call.args = value;
  }
}

function toCalls(
  map: Map<string, { m: number; c: number; id?: string; name?: string; args?: unknown }>,
): MessageCall[] {
  const sorted = [...map.values()].sort((x, y) => x.m - y.m || x.c - y.c);
  const out: MessageCall[] = [];
  for (const c of sorted) {
    if (!c.name) continue;
    const call = callWithArgs(c.name, c.args);
    if (c.id) call.callId = c.id;
    out.push(call);
  }
  return out;
}

/**
 * Tool calls of a LangChain LLM span's serialized output, `{"generations": [[{message}]]}`,
 * for chat models whose calls live only on `AIMessage.tool_calls` (the tracer flattens
 * `additional_kwargs.tool_calls` only). Cheap when there are none: no parse without the key.
 */
function serializedOutputCalls(value: unknown): MessageCall[] {
  if (typeof value === 'string' && !value.includes('tool_calls')) return [];
  const parsed = readJsonStructure(value);
  const generations = isRecord(parsed) ? parsed['generations'] : undefined;
  const calls: MessageCall[] = [];
  if (!Array.isArray(generations)) return calls;
  for (const group of generations) {
    for (const generation of Array.isArray(group) ? group : [group]) {
      if (isRecord(generation)) calls.push(...langChainMessageCalls(generation['message']));
    }
  }
  return calls;
}

/** Tool calls and tool results of a LangChain LLM span's serialized input, `{"messages": [[…]]}`. */
function serializedInputMessages(value: unknown): { calls: MessageCall[]; refusals: RefusalFacts[] } {
  const calls: MessageCall[] = [];
  const refusals: RefusalFacts[] = [];
  if (typeof value !== 'string' || !value.includes('_call')) return { calls, refusals };
  const parsed = readJsonStructure(value);
  const messages = isRecord(parsed) ? parsed['messages'] : undefined;
  // LangChain's batch form, a list of message lists (agno's flat list is read by readAgnoMessages).
  if (!Array.isArray(messages) || !Array.isArray(messages[0])) return { calls, refusals };
  for (const message of messages.flat()) {
    const fields = langChainMessageFields(message);
    if (!fields) continue;
    if (fields.kind === 'tool') {
      const id = readString(fields.body['tool_call_id']);
      const content = fields.body['content'];
      const text =
        typeof content === 'string' ? content : content === undefined ? undefined : JSON.stringify(content);
      if (id && text !== undefined) refusals.push({ callId: id, text });
    } else calls.push(...langChainMessageCalls(message));
  }
  return { calls, refusals };
}

/** A serialized LangChain message's own fields (constructor form `{lc, id, kwargs}` or plain) and its type. */
function langChainMessageFields(
  message: unknown,
): { kind: string; body: Record<string, unknown> } | undefined {
  if (!isRecord(message)) return undefined;
  const constructed = message['lc'] !== undefined && isRecord(message['kwargs']);
  const body = constructed ? (message['kwargs'] as Record<string, unknown>) : message;
  const className = Array.isArray(message['id']) ? String(message['id'].at(-1)) : '';
  const declared = readString(message['type']) ?? readString(body['role']) ?? '';
  const kind = /^ToolMessage/.test(className) || declared === 'tool' ? 'tool' : 'other';
  return { kind, body };
}

/** `tool_calls` of a serialized AIMessage (`{id, name, args}`), else its OpenAI-shaped `additional_kwargs.tool_calls`. */
function langChainMessageCalls(message: unknown): MessageCall[] {
  const fields = langChainMessageFields(message);
  if (!fields || fields.kind === 'tool') return [];
  const { body } = fields;
  const kwargs = isRecord(body['additional_kwargs']) ? body['additional_kwargs'] : undefined;
  const list = Array.isArray(body['tool_calls']) ? body['tool_calls'] : kwargs?.['tool_calls'];
  if (!Array.isArray(list)) return [];
  const calls: MessageCall[] = [];
  for (const tc of list) {
    if (!isRecord(tc)) continue;
    const fn = isRecord(tc['function']) ? tc['function'] : undefined;
    const name = readString(tc['name']) ?? readString(fn?.['name']);
    if (!name) continue;
    const call = callWithArgs(name, tc['args'] ?? fn?.['arguments']);
    const id = readString(tc['id']);
    if (id) call.callId = id;
    calls.push(call);
  }
  return calls;
}

/** agno LLM `input.value`: `{"messages": [{role, from_history, tool_calls, tool_call_id, content, tool_call_error}]}`. */
function readAgnoMessages(value: unknown): { calls: MessageCall[]; refusals: RefusalFacts[] } {
  const calls: MessageCall[] = [];
  const refusals: RefusalFacts[] = [];
  // It reads `tool_calls` and `tool_call_id` only: a text with neither (most inputs, every
  // model span of a run before its first call) is not parsed. Searched by `_call`, whose first
  // character is rare (a search for `tool_call` stops at every `t`).
  if (typeof value === 'string' && !value.includes('_call')) return { calls, refusals };
  const parsed = readJsonStructure(value);
  const messages = isRecord(parsed) ? parsed['messages'] : undefined;
  if (!Array.isArray(messages)) return { calls, refusals };
  for (const msg of messages) {
    if (!isRecord(msg)) continue;
    const fromHistory = readTrue(msg['from_history']);
    if (fromHistory && Array.isArray(msg['tool_calls'])) {
      for (const tc of msg['tool_calls']) {
        if (!isRecord(tc)) continue;
        const fn = isRecord(tc['function']) ? tc['function'] : tc;
        const name = readString(fn['name']);
        if (!name) continue;
        const call = callWithArgs(name, fn['arguments']);
        call.fromHistory = true;
        const id = readString(tc['id']);
        if (id) call.callId = id;
        calls.push(call);
      }
    }
    if (msg['role'] === 'tool' && !fromHistory) {
      const id = readString(msg['tool_call_id']);
      const content = readString(msg['content']);
      if (id && content) {
        const r: RefusalFacts = { callId: id, text: content };
        if (readTrue(msg['tool_call_error'])) r.error = true;
        refusals.push(r);
      }
    }
  }
  return { calls, refusals };
}

export const openInference: ConventionAdapter = {
  name: CONVENTION,
  role: openInferenceRole,
  tool: openInferenceTool,
  agent: openInferenceAgent,
  llm: openInferenceLlm,
  llmOutput: openInferenceLlmOutput,
  llmInput: openInferenceLlmInput,
  claimed: {
    tool: readTool,
    agent: readAgent,
    agentName: readAgentName,
    llmOutput: readLlmOutput,
    llmInput: readLlmInput,
  },
};
