import {
  ADK_CALL_ID_NOT_SPECIFIED,
  ADK_MERGED_TOOL_NAME,
  ATTR_ADK_TOOL_CALL_ARGS,
  ATTR_ADK_TOOL_RESPONSE,
  ATTR_GEN_AI_AGENT_ID,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_INPUT_MESSAGES,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_DECISION_OUTCOME,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_DEFINITIONS,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_PYDANTIC_AI_NEW_MESSAGE_INDEX,
  EVENT_GEN_AI_TOOL_CALL_DECISION,
} from '../semconv.js';
import type { SpanLike } from '../types.js';
import { historyOf, readToolDefinitions, scanGenAiMessages } from './gen-ai-messages.js';
import { inputSize, mergeLlmFacts, NO_INPUT } from './merge-llm-facts.js';
import { isRecord, readArgs, readJsonStructure, readMaybeJson, readString } from './read-values.js';
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
import { readToolStatus, wasNotRun } from './tool-status.js';

const CONVENTION = 'gen_ai';
const TOOL_PREFIX = 'execute_tool ';
const AGENT_PREFIX = 'invoke_agent';
const LLM_OPERATIONS = new Set(['chat', 'generate_content', 'text_completion']);
// Structure-only operations: steps, workflows, embeddings. Unknown operations are left to other adapters (Mastra 0.24's `tool.execute`).
const OTHER_OPERATIONS = new Set([
  'agent_step',
  'invoke_workflow',
  'create_agent',
  'embeddings',
  'retrieval',
  'plan',
  'model_generation',
  'model_step',
  'model_chunk',
]);
const CLIENT_TOOL_CALL = 'client_tool_call';
const MASTRA_STEP_OUTPUT = 'mastra.model_step.output';
const PYDANTIC_ALL_MESSAGES = 'pydantic_ai.all_messages';

/**
 * OTel GenAI semantic conventions (`execute_tool`, `invoke_agent`, `chat`), as AI SDK 7,
 * Mastra 1.x, Pydantic AI (v3+) and Google ADK write them.
 */
export function genAiRole(span: SpanLike): SpanRole | undefined {
  const a = span.attributes;
  const op = a[ATTR_GEN_AI_OPERATION_NAME];
  if (
    op === 'execute_tool' ||
    (op === undefined && span.name.startsWith(TOOL_PREFIX) && a[ATTR_GEN_AI_TOOL_NAME] !== undefined)
  ) {
    // ADK adds a merged duplicate of parallel calls; Pydantic output functions are not user tools.
    if (span.name === 'execute_tool (merged)' || a[ATTR_GEN_AI_TOOL_NAME] === ADK_MERGED_TOOL_NAME)
      return 'other';
    const msg = a['logfire.msg'];
    if (typeof msg === 'string' && msg.startsWith('running output function')) return 'other';
    return 'tool';
  }
  if (op === 'invoke_agent') return 'agent';
  // Pydantic AI instrumentation version 2 (deprecated, still emitted on request).
  if (op === undefined && span.name === 'running tool' && a[ATTR_GEN_AI_TOOL_NAME] !== undefined)
    return 'tool';
  if (op === undefined && span.name === 'agent run' && a['agent_name'] !== undefined) return 'agent';
  if (typeof op === 'string' && LLM_OPERATIONS.has(op)) return 'llm';
  // Mastra 1.x: a call for a tool the agent does not have becomes a client-side call span, not an execution.
  if (op === CLIENT_TOOL_CALL) return 'llm';
  // Mastra 1.x leaves tool calls out of the chat span's output; its step span lists them.
  if (op === 'agent_step' && a[MASTRA_STEP_OUTPUT] !== undefined) return 'llm';
  if (typeof op === 'string' && OTHER_OPERATIONS.has(op)) return 'other';
  if (op !== undefined) return undefined;
  if (span.name === AGENT_PREFIX || span.name.startsWith(AGENT_PREFIX + ' ')) return 'agent';
  return undefined;
}

export function genAiTool(span: SpanLike): ToolFacts | undefined {
  if (genAiRole(span) !== 'tool') return undefined;
  const a = span.attributes;
  const name =
    readString(a[ATTR_GEN_AI_TOOL_NAME]) ??
    (span.name.startsWith(TOOL_PREFIX) ? span.name.slice(TOOL_PREFIX.length) : span.name);
  const rawArgs = a[ATTR_GEN_AI_TOOL_CALL_ARGUMENTS] ?? a[ATTR_ADK_TOOL_CALL_ARGS] ?? a['tool_arguments'];
  const rawResult = a[ATTR_GEN_AI_TOOL_CALL_RESULT] ?? a[ATTR_ADK_TOOL_RESPONSE] ?? a['tool_response'];
  const facts: ToolFacts = { convention: CONVENTION, name, ...readArgs(rawArgs), ...readToolStatus(span) };
  const id = readString(a[ATTR_GEN_AI_TOOL_CALL_ID]);
  if (id && id !== ADK_CALL_ID_NOT_SPECIFIED) facts.callId = id;
  if (rawResult !== undefined) facts.result = readMaybeJson(rawResult);
  if (wasNotRun(span) || isValidationFailure(facts.result)) facts.notRun = true;
  return facts;
}

export function genAiAgent(span: SpanLike): AgentFacts | undefined {
  if (genAiRole(span) !== 'agent') return undefined;
  const a = span.attributes;
  const fromName = span.name.startsWith(AGENT_PREFIX + ' ')
    ? span.name.slice(AGENT_PREFIX.length + 1)
    : undefined;
  const name = readString(a[ATTR_GEN_AI_AGENT_NAME]) ?? readString(a['agent_name']) ?? fromName ?? span.name;
  const facts: AgentFacts = { convention: CONVENTION, name };
  const id = readString(a[ATTR_GEN_AI_AGENT_ID]);
  if (id) facts.agentId = id;
  const input = a[ATTR_GEN_AI_INPUT_MESSAGES];
  const output = a[ATTR_GEN_AI_OUTPUT_MESSAGES];
  if (input !== undefined) facts.input = readMaybeJson(input);
  if (output !== undefined) facts.output = readMaybeJson(output);
  const defs = readToolDefinitions(a[ATTR_GEN_AI_TOOL_DEFINITIONS]);
  if (defs) facts.toolDefinitions = defs;

  const history: NonNullable<AgentFacts['history']> = [];
  // The agent span's input is what the caller supplied (AI SDK 7 root input): every tool part is history.
  if (input !== undefined) {
    for (const call of scanGenAiMessages(input).calls) history.push(historyOf(call, 'agent_input'));
  }
  const index = Number(a[ATTR_PYDANTIC_AI_NEW_MESSAGE_INDEX]);
  const all = a[PYDANTIC_ALL_MESSAGES];
  if (all !== undefined) {
    const before = Number.isInteger(index) && index > 0 ? index : 0;
    for (const call of scanGenAiMessages(all, 0, before).calls)
      history.push(historyOf(call, 'new_message_index'));
    for (const call of scanGenAiMessages(all, before).calls) {
      if (call.fromHistory) history.push(historyOf(call, 'part_flag'));
    }
  }
  if (history.length > 0) facts.history = history;
  const refusals = decisionRefusals(span);
  if (refusals) facts.refusals = refusals;
  return facts;
}

/** Mastra 1.x answers a schema-rejected call with `{"error": true, "message": "Tool input validation failed …"}` without running it. */
function isValidationFailure(result: unknown): boolean {
  if (!isRecord(result) || result['error'] !== true) return false;
  const message = result['message'];
  return typeof message === 'string' && message.includes('validation failed');
}

export function genAiLlm(span: SpanLike): LlmFacts | undefined {
  return mergeLlmFacts(genAiLlmOutput(span), genAiLlmInput(span));
}

/** Requests from `gen_ai.output.messages` (Mastra 1.x: from the step output), tool definitions, decisions. */
export function genAiLlmOutput(span: SpanLike): LlmFacts | undefined {
  if (genAiRole(span) !== 'llm') return undefined;
  const a = span.attributes;
  if (a[ATTR_GEN_AI_OPERATION_NAME] === CLIENT_TOOL_CALL) {
    const prefix = CLIENT_TOOL_CALL + ' ';
    const name =
      readString(a[ATTR_GEN_AI_TOOL_NAME]) ??
      (span.name.startsWith(prefix) ? span.name.slice(prefix.length) : span.name);
    const call: MessageCall = {
      name,
      ...readArgs(a[ATTR_GEN_AI_TOOL_CALL_ARGUMENTS] ?? a['mastra.metadata.args']),
    };
    const id = readString(a[ATTR_GEN_AI_TOOL_CALL_ID]);
    if (id) call.callId = id;
    // The step output lists the same call as a request; this span only confirms it.
    return { convention: CONVENTION, requests: [], hints: [call] };
  }
  if (a[ATTR_GEN_AI_OPERATION_NAME] === 'agent_step') {
    const output = readJsonStructure(a[MASTRA_STEP_OUTPUT]);
    const list = isRecord(output) && Array.isArray(output['toolCalls']) ? output['toolCalls'] : [];
    const requests: MessageCall[] = [];
    for (const item of list) {
      if (!isRecord(item)) continue;
      const name = readString(item['toolName']);
      if (!name) continue;
      const call: MessageCall = { name, ...readArgs(item['args'] ?? item['input']) };
      const id = readString(item['toolCallId']);
      if (id) call.callId = id;
      requests.push(call);
    }
    return { convention: CONVENTION, requests };
  }
  const output = scanGenAiMessages(a[ATTR_GEN_AI_OUTPUT_MESSAGES]);
  const facts: LlmFacts = {
    convention: CONVENTION,
    requests: output.calls,
    progress: inputSize(a[ATTR_GEN_AI_INPUT_MESSAGES]),
  };
  const refusals = decisionRefusals(span);
  if (refusals) facts.refusals = refusals;
  const defs = readToolDefinitions(a[ATTR_GEN_AI_TOOL_DEFINITIONS]);
  if (defs) facts.toolDefinitions = defs;
  return facts;
}

/** Tool calls and tool results in `gen_ai.input.messages`. */
export function genAiLlmInput(span: SpanLike): LlmInputFacts {
  if (genAiRole(span) !== 'llm') return NO_INPUT;
  const input = scanGenAiMessages(span.attributes[ATTR_GEN_AI_INPUT_MESSAGES]);
  return { inputCalls: input.calls, refusals: input.responses };
}

/** `gen_ai.tool.call.decision` span events (a proposal): `deny` refuses, `require_approval` pends. */
export function decisionRefusals(span: SpanLike): RefusalFacts[] | undefined {
  const events = span.events;
  if (!Array.isArray(events) || events.length === 0) return undefined;
  let out: RefusalFacts[] | undefined;
  for (const e of events) {
    if (e?.name !== EVENT_GEN_AI_TOOL_CALL_DECISION) continue;
    const outcome = readString(e.attributes?.[ATTR_GEN_AI_TOOL_CALL_DECISION_OUTCOME]);
    if (outcome !== 'deny' && outcome !== 'require_approval') continue;
    const r: RefusalFacts = { text: `decision: ${outcome}` };
    const id = readString(e.attributes?.[ATTR_GEN_AI_TOOL_CALL_ID]);
    const name = readString(e.attributes?.[ATTR_GEN_AI_TOOL_NAME]);
    if (id) r.callId = id;
    if (name) r.name = name;
    if (outcome === 'require_approval') r.pending = true;
    out ??= [];
    out.push(r);
  }
  return out;
}

export const genAiSemconv: ConventionAdapter = {
  name: CONVENTION,
  role: genAiRole,
  tool: genAiTool,
  agent: genAiAgent,
  llm: genAiLlm,
  llmOutput: genAiLlmOutput,
  llmInput: genAiLlmInput,
};
