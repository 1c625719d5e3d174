import {
  ADK_CALL_ID_NOT_SPECIFIED,
  ADK_MERGED_TOOL_NAME,
  ATTR_ADK_LLM_REQUEST,
  ATTR_ADK_LLM_RESPONSE,
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
  ATTR_LOGFIRE_MSG,
  ATTR_MASTRA_METADATA_ARGS,
  ATTR_MASTRA_MODEL_STEP_OUTPUT,
  ATTR_PYDANTIC_AI_ALL_MESSAGES,
  ATTR_PYDANTIC_AI_NEW_MESSAGE_INDEX,
  ATTR_PYDANTIC_AI_V2_AGENT_NAME,
  ATTR_PYDANTIC_AI_V2_TOOL_ARGUMENTS,
  ATTR_PYDANTIC_AI_V2_TOOL_RESPONSE,
  EVENT_GEN_AI_TOOL_CALL_DECISION,
  MASTRA_OPERATION_CLIENT_TOOL_CALL,
} from '../semconv.js';
import type { SpanLike } from '../types.js';
import {
  historyOf,
  readToolDefinitions,
  responseText,
  scanGenAiConversation,
  scanGenAiMessages,
} from './gen-ai-messages.js';
import { guarded } from './guarded.js';
import { inputSize, mergeLlmFacts, NO_INPUT } from './merge-llm-facts.js';
import { callWithArgs, isRecord, readJsonStructure, readMaybeJson, readString } from './read-values.js';
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
import { canLeaveUnread, readArgsInto } from './unread-tool-values.js';

const CONVENTION = 'gen_ai';
const TOOL_PREFIX = 'execute_tool ';
const AGENT_PREFIX = 'invoke_agent';
/** GenAI operations of model calls (the hot path's `spanRole` reads the same set). */
export const LLM_OPERATIONS: ReadonlySet<unknown> = new Set(['chat', 'generate_content', 'text_completion']);
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
const CLIENT_TOOL_CALL = MASTRA_OPERATION_CLIENT_TOOL_CALL;

/**
 * OTel GenAI semantic conventions (`execute_tool`, `invoke_agent`, `chat`), as AI SDK 7,
 * Mastra 1.x, Pydantic AI (v3+) and Google ADK write them.
 */
export const genAiRole = guarded(genAiRoleOf, undefined);

function genAiRoleOf(span: SpanLike): SpanRole | undefined {
  const a = span.attributes;
  const op = a[ATTR_GEN_AI_OPERATION_NAME];
  if (
    op === 'execute_tool' ||
    (op === undefined && span.name.startsWith(TOOL_PREFIX) && a[ATTR_GEN_AI_TOOL_NAME] !== undefined)
  ) {
    // ADK adds a merged duplicate of parallel calls; Pydantic output functions are not user tools.
    if (span.name === 'execute_tool (merged)' || a[ATTR_GEN_AI_TOOL_NAME] === ADK_MERGED_TOOL_NAME)
      return 'other';
    const msg = a[ATTR_LOGFIRE_MSG];
    if (typeof msg === 'string' && msg.startsWith('running output function')) return 'other';
    return 'tool';
  }
  if (op === 'invoke_agent') return 'agent';
  // Pydantic AI instrumentation version 2 (deprecated, still emitted on request).
  if (op === undefined && span.name === 'running tool' && a[ATTR_GEN_AI_TOOL_NAME] !== undefined)
    return 'tool';
  if (op === undefined && span.name === 'agent run' && a[ATTR_PYDANTIC_AI_V2_AGENT_NAME] !== undefined)
    return 'agent';
  if (typeof op === 'string' && LLM_OPERATIONS.has(op)) return 'llm';
  // Google ADK's model call: the request and response are whole JSON documents.
  if (op === undefined && span.name === 'call_llm' && a[ATTR_ADK_LLM_RESPONSE] !== undefined) return 'llm';
  // Mastra 1.x: a call for a tool the agent does not have becomes a client-side call span, not an execution.
  if (op === CLIENT_TOOL_CALL) return 'llm';
  // Mastra 1.x leaves tool calls out of the chat span's output; its step span lists them.
  if (op === 'agent_step' && a[ATTR_MASTRA_MODEL_STEP_OUTPUT] !== undefined) return 'llm';
  if (typeof op === 'string' && OTHER_OPERATIONS.has(op)) return 'other';
  if (op !== undefined) return undefined;
  if (span.name === AGENT_PREFIX || span.name.startsWith(AGENT_PREFIX + ' ')) return 'agent';
  return undefined;
}

/** No further texts to read for a refusal (the default): one shared empty list, not a fresh one per tool span. */
const NO_TEXTS: Array<string | undefined> = [];

export const genAiTool = guarded(
  (span: SpanLike): ToolFacts | undefined => (genAiRoleOf(span) === 'tool' ? readTool(span) : undefined),
  undefined,
);

/**
 * A tool span's facts, for a span already known to be a GenAI tool span (may throw). With
 * `deferValues`, arguments and result are left unread when they cannot change what the span is.
 */
function readTool(span: SpanLike, deferValues = false): ToolFacts | undefined {
  const a = span.attributes;
  const name =
    readString(a[ATTR_GEN_AI_TOOL_NAME]) ??
    (span.name.startsWith(TOOL_PREFIX) ? span.name.slice(TOOL_PREFIX.length) : span.name);
  const rawArgs =
    a[ATTR_GEN_AI_TOOL_CALL_ARGUMENTS] ?? a[ATTR_ADK_TOOL_CALL_ARGS] ?? a[ATTR_PYDANTIC_AI_V2_TOOL_ARGUMENTS];
  const rawResult =
    a[ATTR_GEN_AI_TOOL_CALL_RESULT] ?? a[ATTR_ADK_TOOL_RESPONSE] ?? a[ATTR_PYDANTIC_AI_V2_TOOL_RESPONSE];
  const status = readToolStatus(span, NO_TEXTS);
  const facts: ToolFacts = { convention: CONVENTION, name, usable: true, status: status.status };
  const unread = deferValues && canLeaveUnread(rawResult);
  if (unread) facts.unread = { args: rawArgs, result: rawResult };
  else readArgsInto(facts, rawArgs);
  if (status.errorType !== undefined) facts.errorType = status.errorType;
  if (status.errorMessage !== undefined) facts.errorMessage = status.errorMessage;
  const id = readString(a[ATTR_GEN_AI_TOOL_CALL_ID]);
  if (id && id !== ADK_CALL_ID_NOT_SPECIFIED) facts.callId = id;
  if (!unread && rawResult !== undefined) facts.result = readMaybeJson(rawResult);
  if (wasNotRun(span) || isValidationFailure(facts.result)) facts.notRun = true;
  return facts;
}

export const genAiAgent = guarded(
  (span: SpanLike): AgentFacts | undefined => (genAiRoleOf(span) === 'agent' ? readAgent(span) : undefined),
  undefined,
);

/** The agent's name as `readAgent` gives it, read alone: rule matching needs only this, never the messages. */
function readAgentName(span: SpanLike): string {
  const a = span.attributes;
  return (
    readString(a[ATTR_GEN_AI_AGENT_NAME]) ??
    readString(a[ATTR_PYDANTIC_AI_V2_AGENT_NAME]) ??
    (span.name.startsWith(AGENT_PREFIX + ' ') ? span.name.slice(AGENT_PREFIX.length + 1) : undefined) ??
    span.name
  );
}

function readAgent(span: SpanLike, deferValues = false): AgentFacts | undefined {
  const a = span.attributes;
  const facts: AgentFacts = { convention: CONVENTION, name: readAgentName(span) };
  const id = readString(a[ATTR_GEN_AI_AGENT_ID]);
  if (id) facts.agentId = id;
  const input = a[ATTR_GEN_AI_INPUT_MESSAGES];
  const output = a[ATTR_GEN_AI_OUTPUT_MESSAGES];
  if (input !== undefined && !deferValues) facts.input = readMaybeJson(input);
  if (output !== undefined && !deferValues) facts.output = readMaybeJson(output);
  const defs = readToolDefinitions(a[ATTR_GEN_AI_TOOL_DEFINITIONS]);
  if (defs) facts.toolDefinitions = defs;

  const history: NonNullable<AgentFacts['history']> = [];
  // The agent span's input is what the caller supplied (AI SDK 7 root input): every tool part is history.
  if (input !== undefined) {
    for (const call of scanGenAiConversation(input).calls) history.push(historyOf(call, 'agent_input'));
  }
  const index = Number(a[ATTR_PYDANTIC_AI_NEW_MESSAGE_INDEX]);
  const all = a[ATTR_PYDANTIC_AI_ALL_MESSAGES];
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

export const genAiLlm = guarded((span: SpanLike): LlmFacts | undefined => {
  return mergeLlmFacts(genAiLlmOutput(span), genAiLlmInput(span));
}, undefined);

/** Requests from `gen_ai.output.messages` (Mastra 1.x: from the step output), tool definitions, decisions. */
export const genAiLlmOutput = guarded(
  (span: SpanLike): LlmFacts | undefined => (genAiRoleOf(span) === 'llm' ? readLlmOutput(span) : undefined),
  undefined,
);

function readLlmOutput(span: SpanLike): LlmFacts | undefined {
  const a = span.attributes;
  if (a[ATTR_GEN_AI_OPERATION_NAME] === CLIENT_TOOL_CALL) {
    const prefix = CLIENT_TOOL_CALL + ' ';
    const name =
      readString(a[ATTR_GEN_AI_TOOL_NAME]) ??
      (span.name.startsWith(prefix) ? span.name.slice(prefix.length) : span.name);
    const call = callWithArgs(name, a[ATTR_GEN_AI_TOOL_CALL_ARGUMENTS] ?? a[ATTR_MASTRA_METADATA_ARGS]);
    const id = readString(a[ATTR_GEN_AI_TOOL_CALL_ID]);
    if (id) call.callId = id;
    // The step output lists the same call as a request; this span only confirms it.
    return { convention: CONVENTION, requests: [], hints: [call] };
  }
  if (a[ATTR_GEN_AI_OPERATION_NAME] === 'agent_step') {
    const output = readJsonStructure(a[ATTR_MASTRA_MODEL_STEP_OUTPUT]);
    const list = isRecord(output) && Array.isArray(output['toolCalls']) ? output['toolCalls'] : [];
    const requests: MessageCall[] = [];
    for (const item of list) {
      if (!isRecord(item)) continue;
      const name = readString(item['toolName']);
      if (!name) continue;
      const call = callWithArgs(name, item['args'] ?? item['input']);
      const id = readString(item['toolCallId']);
      if (id) call.callId = id;
      requests.push(call);
    }
    return { convention: CONVENTION, requests };
  }
  if (a[ATTR_GEN_AI_OUTPUT_MESSAGES] === undefined && a[ATTR_ADK_LLM_RESPONSE] !== undefined) {
    const response = readJsonStructure(a[ATTR_ADK_LLM_RESPONSE]);
    const calls = isRecord(response) ? scanAdkContent(response['content']).calls : [];
    return { convention: CONVENTION, requests: calls, progress: inputSize(a[ATTR_ADK_LLM_REQUEST]) };
  }
  const messages = a[ATTR_GEN_AI_OUTPUT_MESSAGES];
  const facts: LlmFacts = {
    convention: CONVENTION,
    requests: messages === undefined ? [] : scanGenAiMessages(messages).calls,
    progress: inputSize(a[ATTR_GEN_AI_INPUT_MESSAGES]),
  };
  const refusals = decisionRefusals(span);
  if (refusals) facts.refusals = refusals;
  const defs = readToolDefinitions(a[ATTR_GEN_AI_TOOL_DEFINITIONS]);
  if (defs) facts.toolDefinitions = defs;
  return facts;
}

/**
 * What `readLlmOutput` and `readLlmInput` read, by presence only: none of it means no requests,
 * hints, refusals (decision events), tool definitions or input calls.
 */
function readLlmSaysNothing(span: SpanLike): boolean {
  const a = span.attributes;
  const operation = a[ATTR_GEN_AI_OPERATION_NAME];
  return (
    operation !== CLIENT_TOOL_CALL &&
    operation !== 'agent_step' &&
    a[ATTR_GEN_AI_OUTPUT_MESSAGES] === undefined &&
    a[ATTR_GEN_AI_INPUT_MESSAGES] === undefined &&
    a[ATTR_ADK_LLM_RESPONSE] === undefined &&
    a[ATTR_ADK_LLM_REQUEST] === undefined &&
    a[ATTR_GEN_AI_TOOL_DEFINITIONS] === undefined &&
    (!Array.isArray(span.events) || span.events.length === 0)
  );
}

/** Tool calls and tool results in `gen_ai.input.messages`. */
export const genAiLlmInput = guarded(
  (span: SpanLike): LlmInputFacts => (genAiRoleOf(span) === 'llm' ? readLlmInput(span) : NO_INPUT),
  NO_INPUT,
);

function readLlmInput(span: SpanLike): LlmInputFacts {
  const a = span.attributes;
  if (a[ATTR_GEN_AI_INPUT_MESSAGES] === undefined && a[ATTR_ADK_LLM_REQUEST] !== undefined) {
    const request = readJsonStructure(a[ATTR_ADK_LLM_REQUEST]);
    const out: LlmInputFacts = { inputCalls: [], refusals: [] };
    const contents = isRecord(request) ? request['contents'] : undefined;
    if (Array.isArray(contents)) {
      for (const content of contents) {
        const scan = scanAdkContent(content);
        out.inputCalls.push(...scan.calls);
        out.refusals.push(...scan.responses);
      }
    }
    return out;
  }
  const messages = a[ATTR_GEN_AI_INPUT_MESSAGES];
  // No input recorded (most instrumentations by default): nothing to scan, nothing to allocate.
  if (messages === undefined) return NO_INPUT;
  const input = scanGenAiConversation(messages);
  return { inputCalls: input.calls, refusals: input.responses };
}

/** ADK (google-genai) content: `{role, parts: [{function_call: {id, name, args}} | {function_response: {id, name, response}}]}`. */
function scanAdkContent(content: unknown): { calls: MessageCall[]; responses: RefusalFacts[] } {
  const calls: MessageCall[] = [];
  const responses: RefusalFacts[] = [];
  const parts = isRecord(content) ? content['parts'] : undefined;
  if (!Array.isArray(parts)) return { calls, responses };
  for (const part of parts) {
    if (!isRecord(part)) continue;
    const fc = part['function_call'] ?? part['functionCall'];
    if (isRecord(fc)) {
      const name = readString(fc['name']);
      if (!name) continue;
      const call = callWithArgs(name, fc['args']);
      const id = readString(fc['id']);
      if (id && id !== ADK_CALL_ID_NOT_SPECIFIED) call.callId = id;
      calls.push(call);
      continue;
    }
    const fr = part['function_response'] ?? part['functionResponse'];
    if (isRecord(fr)) {
      const id = readString(fr['id']);
      const text = responseText(fr['response']);
      if (id && text !== undefined) {
        const r: RefusalFacts = { callId: id, text };
        const name = readString(fr['name']);
        if (name) r.name = name;
        responses.push(r);
      }
    }
  }
  return { calls, responses };
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
    else r.rejected = true;
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
  claimed: {
    tool: readTool,
    agent: readAgent,
    agentName: readAgentName,
    llmOutput: readLlmOutput,
    llmInput: readLlmInput,
    llmSaysNothing: readLlmSaysNothing,
  },
};
