import {
  ATTR_GEN_AI_AGENT_ID,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_MASTRA_MODEL_STEP_OUTPUT,
  ATTR_MASTRA_SPAN_INPUT,
  ATTR_MASTRA_SPAN_OUTPUT,
  ATTR_MASTRA_SPAN_TYPE,
  ATTR_MASTRA_TOOL_INPUT,
  ATTR_MASTRA_TOOL_OUTPUT,
  MASTRA_OPERATION_AGENT_RUN,
  MASTRA_OPERATION_TOOL_EXECUTE,
} from '../semconv.js';
import type { SpanLike } from '../types.js';
import { guarded } from './guarded.js';
import { NO_INPUT } from './merge-llm-facts.js';
import {
  callWithArgs,
  isRecord,
  readArgs,
  readJsonStructure,
  readMaybeJson,
  readString,
} from './read-values.js';
import type {
  AgentFacts,
  ConventionAdapter,
  LlmFacts,
  MessageCall,
  SpanRole,
  ToolFacts,
} from './span-facts.js';
import { readToolStatus } from './tool-status.js';

const CONVENTION = 'mastra';
const TOOL_PREFIX = 'tool.execute ';
const AGENT_PREFIX = 'agent.';
const STEP_PREFIX = 'step: ';
const CHUNK_TOOL_CALL = "chunk: 'tool-call'";
const CHUNK_TOOL_RESULT = "chunk: 'tool-result'";

/**
 * Mastra 0.24 with `@mastra/otel-exporter` 0.3 (the older mapping): `tool.execute` tool
 * spans with `gen_ai.tool.input`/`output`, `agent.run` SERVER agent spans. Tool spans carry
 * no call id; ids live in the step outputs (this turn's requests) and in the sibling
 * `chunk: 'tool-call'`/`'tool-result'` span outputs (hints only).
 */
export const mastraLegacyRole = guarded(mastraLegacyRoleOf, undefined);

function mastraLegacyRoleOf(span: SpanLike): SpanRole | undefined {
  const a = span.attributes;
  const op = a[ATTR_GEN_AI_OPERATION_NAME];
  if (op === MASTRA_OPERATION_TOOL_EXECUTE) return 'tool';
  if (op === MASTRA_OPERATION_AGENT_RUN) return 'agent';
  if (a[ATTR_MASTRA_SPAN_TYPE] === undefined || a[ATTR_MASTRA_MODEL_STEP_OUTPUT] !== undefined)
    return undefined;
  if (span.name.startsWith(STEP_PREFIX) && a[ATTR_MASTRA_SPAN_OUTPUT] !== undefined) return 'llm';
  if (span.name === CHUNK_TOOL_CALL || span.name === CHUNK_TOOL_RESULT) return 'llm';
  return undefined;
}

export const mastraLegacyTool = guarded(
  (span: SpanLike): ToolFacts | undefined =>
    mastraLegacyRoleOf(span) === 'tool' ? readTool(span) : undefined,
  undefined,
);

function readTool(span: SpanLike): ToolFacts | undefined {
  const a = span.attributes;
  const name =
    readString(a[ATTR_GEN_AI_TOOL_NAME]) ??
    (span.name.startsWith(TOOL_PREFIX) ? span.name.slice(TOOL_PREFIX.length) : span.name);
  const facts: ToolFacts = {
    convention: CONVENTION,
    name,
    ...readArgs(a[ATTR_MASTRA_TOOL_INPUT] ?? a[ATTR_MASTRA_SPAN_INPUT]),
    ...readToolStatus(span),
  };
  const result = a[ATTR_MASTRA_TOOL_OUTPUT] ?? a[ATTR_MASTRA_SPAN_OUTPUT];
  if (result !== undefined) facts.result = readMaybeJson(result);
  return facts;
}

export const mastraLegacyAgent = guarded(
  (span: SpanLike): AgentFacts | undefined =>
    mastraLegacyRoleOf(span) === 'agent' ? readAgent(span) : undefined,
  undefined,
);

/** The agent's name as `readAgent` gives it, read alone: rule matching needs only this, never the messages. */
function readAgentName(span: SpanLike): string {
  const a = span.attributes;
  return (
    readString(a[ATTR_GEN_AI_AGENT_NAME]) ??
    readString(a[ATTR_GEN_AI_AGENT_ID]) ??
    readString(a['agent.id']) ??
    (span.name.startsWith(AGENT_PREFIX) ? span.name.slice(AGENT_PREFIX.length) : undefined) ??
    span.name
  );
}

function readAgent(span: SpanLike, deferValues = false): AgentFacts | undefined {
  const a = span.attributes;
  const id = readString(a[ATTR_GEN_AI_AGENT_ID]) ?? readString(a['agent.id']);
  const facts: AgentFacts = { convention: CONVENTION, name: readAgentName(span) };
  if (id) facts.agentId = id;
  const input = a[ATTR_MASTRA_SPAN_INPUT];
  const output = a[ATTR_MASTRA_SPAN_OUTPUT];
  if (input !== undefined && !deferValues) facts.input = readMaybeJson(input);
  if (output !== undefined && !deferValues) facts.output = readMaybeJson(output);
  return facts;
}

export const mastraLegacyLlm = guarded(
  (span: SpanLike): LlmFacts | undefined => (mastraLegacyRoleOf(span) === 'llm' ? readLlm(span) : undefined),
  undefined,
);

function readLlm(span: SpanLike): LlmFacts | undefined {
  const output = readJsonStructure(span.attributes[ATTR_MASTRA_SPAN_OUTPUT]);
  if (span.name.startsWith(STEP_PREFIX)) {
    const calls: MessageCall[] = [];
    const list = isRecord(output) ? output['toolCalls'] : undefined;
    if (Array.isArray(list)) for (const item of list) pushCall(calls, item);
    return { convention: CONVENTION, requests: calls };
  }
  const hints: MessageCall[] = [];
  pushCall(hints, output);
  return { convention: CONVENTION, requests: [], hints };
}

function pushCall(out: MessageCall[], item: unknown): void {
  if (!isRecord(item)) return;
  // Step outputs use AI SDK 5 tool-call parts; chunk outputs use toolInput or args.
  const payload = isRecord(item['payload']) ? item['payload'] : item;
  const name = readString(payload['toolName']);
  if (!name) return;
  const call = callWithArgs(name, payload['toolInput'] ?? payload['input'] ?? payload['args']);
  const id = readString(payload['toolCallId']);
  if (id) call.callId = id;
  out.push(call);
}

export const mastraLegacy: ConventionAdapter = {
  name: CONVENTION,
  role: mastraLegacyRole,
  tool: mastraLegacyTool,
  agent: mastraLegacyAgent,
  llm: mastraLegacyLlm,
  llmOutput: mastraLegacyLlm,
  // No input side: these conventions record no message history on LLM spans.
  llmInput: () => NO_INPUT,
  claimed: {
    tool: readTool,
    agent: readAgent,
    agentName: readAgentName,
    llmOutput: readLlm,
    llmInput: () => NO_INPUT,
  },
};
