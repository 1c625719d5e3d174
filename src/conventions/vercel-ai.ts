import {
  ATTR_AI_OPERATION_ID,
  ATTR_AI_PROMPT,
  ATTR_AI_PROMPT_MESSAGES,
  ATTR_AI_PROMPT_TOOLS,
  ATTR_AI_RESPONSE_TEXT,
  ATTR_AI_RESPONSE_TOOL_CALLS,
  ATTR_AI_TELEMETRY_FUNCTION_ID,
  ATTR_AI_TOOL_CALL_ARGS,
  ATTR_AI_TOOL_CALL_ID,
  ATTR_AI_TOOL_CALL_INPUT,
  ATTR_AI_TOOL_CALL_NAME,
  ATTR_AI_TOOL_CALL_OUTPUT,
  ATTR_AI_TOOL_CALL_RESULT,
  SPAN_AI_GENERATE_TEXT,
  SPAN_AI_GENERATE_TEXT_DO_GENERATE,
  SPAN_AI_STREAM_TEXT,
  SPAN_AI_STREAM_TEXT_DO_STREAM,
  SPAN_AI_TOOL_CALL,
} from '../semconv.js';
import type { SpanLike } from '../types.js';
import { ConversationReader, type MessageScan } from './conversation-reader.js';
import { readToolDefinitions, responseText } from './gen-ai-messages.js';
import { guarded } from './guarded.js';
import { inputSize, mergeLlmFacts, NO_INPUT } from './merge-llm-facts.js';
import { callWithArgs, isRecord, readArgs, readArray, readMaybeJson, readString } from './read-values.js';
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
import { readToolStatus } from './tool-status.js';

const CONVENTION = 'ai_sdk';
const AGENT_OPERATIONS = new Set<string>([SPAN_AI_GENERATE_TEXT, SPAN_AI_STREAM_TEXT]);
const LLM_OPERATIONS = new Set<string>([SPAN_AI_GENERATE_TEXT_DO_GENERATE, SPAN_AI_STREAM_TEXT_DO_STREAM]);

/**
 * Vercel AI SDK ≤ 6 (and v7's `LegacyOpenTelemetry`): `ai.toolCall` tool spans,
 * `ai.generateText`/`ai.streamText` agent spans named by `ai.telemetry.functionId`,
 * `.doGenerate`/`.doStream` LLM spans.
 */
export const vercelAiRole = guarded(vercelAiRoleOf, undefined);

function vercelAiRoleOf(span: SpanLike): SpanRole | undefined {
  const op = operation(span);
  if (op === SPAN_AI_TOOL_CALL) return 'tool';
  if (op === undefined) return undefined;
  if (AGENT_OPERATIONS.has(op)) return 'agent';
  if (LLM_OPERATIONS.has(op)) return 'llm';
  return op.startsWith('ai.') ? 'other' : undefined;
}

function operation(span: SpanLike): string | undefined {
  const id = span.attributes[ATTR_AI_OPERATION_ID];
  if (typeof id === 'string' && id.startsWith('ai.')) return id;
  return span.name.startsWith('ai.') ? span.name : undefined;
}

export const vercelAiTool = guarded(
  (span: SpanLike): ToolFacts | undefined => (vercelAiRoleOf(span) === 'tool' ? readTool(span) : undefined),
  undefined,
);

/** With `deferValues`, arguments and result are left unread (neither decides what the span is here). */
function readTool(span: SpanLike, deferValues = false): ToolFacts | undefined {
  const a = span.attributes;
  const name = readString(a[ATTR_AI_TOOL_CALL_NAME]) ?? span.name;
  if (deferValues) {
    const facts: ToolFacts = { convention: CONVENTION, name, usable: true, ...readToolStatus(span) };
    facts.unread = {
      args: a[ATTR_AI_TOOL_CALL_ARGS] ?? a[ATTR_AI_TOOL_CALL_INPUT],
      result: a[ATTR_AI_TOOL_CALL_RESULT] ?? a[ATTR_AI_TOOL_CALL_OUTPUT],
    };
    const id = readString(a[ATTR_AI_TOOL_CALL_ID]);
    if (id) facts.callId = id;
    return facts;
  }
  const facts: ToolFacts = {
    convention: CONVENTION,
    name,
    ...readArgs(a[ATTR_AI_TOOL_CALL_ARGS] ?? a[ATTR_AI_TOOL_CALL_INPUT]),
    ...readToolStatus(span),
  };
  const id = readString(a[ATTR_AI_TOOL_CALL_ID]);
  if (id) facts.callId = id;
  const result = a[ATTR_AI_TOOL_CALL_RESULT] ?? a[ATTR_AI_TOOL_CALL_OUTPUT];
  if (result !== undefined) facts.result = readMaybeJson(result);
  return facts;
}

export const vercelAiAgent = guarded(
  (span: SpanLike): AgentFacts | undefined =>
    vercelAiRoleOf(span) === 'agent' ? readAgent(span) : undefined,
  undefined,
);

/** The agent's name as `readAgent` gives it, read alone: rule matching needs only this, never the messages. */
function readAgentName(span: SpanLike): string {
  const a = span.attributes;
  return readString(a[ATTR_AI_TELEMETRY_FUNCTION_ID]) ?? readString(a['resource.name']) ?? span.name;
}

function readAgent(span: SpanLike, deferValues = false): AgentFacts | undefined {
  const a = span.attributes;
  const facts: AgentFacts = { convention: CONVENTION, name: readAgentName(span) };
  const prompt = a[ATTR_AI_PROMPT];
  if (prompt !== undefined && !deferValues) facts.input = readMaybeJson(prompt);
  const text = a[ATTR_AI_RESPONSE_TEXT];
  if (text !== undefined && !deferValues) facts.output = text;
  return facts;
}

export const vercelAiLlm = guarded((span: SpanLike): LlmFacts | undefined => {
  return mergeLlmFacts(vercelAiLlmOutput(span), vercelAiLlmInput(span));
}, undefined);

/** Requests from `ai.response.toolCalls`, tool definitions from `ai.prompt.tools`. */
export const vercelAiLlmOutput = guarded(
  (span: SpanLike): LlmFacts | undefined =>
    vercelAiRoleOf(span) === 'llm' ? readLlmOutput(span) : undefined,
  undefined,
);

function readLlmOutput(span: SpanLike): LlmFacts | undefined {
  const a = span.attributes;
  const facts: LlmFacts = {
    convention: CONVENTION,
    requests: readResponseToolCalls(a[ATTR_AI_RESPONSE_TOOL_CALLS]),
    progress: inputSize(a[ATTR_AI_PROMPT_MESSAGES]),
  };
  const tools = readArray(a[ATTR_AI_PROMPT_TOOLS]);
  if (tools) {
    const defs = readToolDefinitions(tools.map((t) => readMaybeJson(t)));
    if (defs) facts.toolDefinitions = defs;
  }
  return facts;
}

/** Tool calls and tool results in `ai.prompt.messages`. */
export const vercelAiLlmInput = guarded(
  (span: SpanLike): LlmInputFacts => (vercelAiRoleOf(span) === 'llm' ? readLlmInput(span) : NO_INPUT),
  NO_INPUT,
);

function readLlmInput(span: SpanLike): LlmInputFacts {
  const { calls, refusals } = readPromptMessages(span.attributes[ATTR_AI_PROMPT_MESSAGES]);
  return { inputCalls: calls, refusals };
}

/**
 * `ai.response.toolCalls`: `[{toolCallId, toolName, input}]` where `input` is JSON text in
 * generateText and an object in streamText (`args` before v5).
 */
export function readResponseToolCalls(value: unknown): MessageCall[] {
  const out: MessageCall[] = [];
  for (const item of readArray(value) ?? []) {
    if (!isRecord(item)) continue;
    const name = readString(item['toolName']);
    if (!name) continue;
    const call = callWithArgs(name, item['input'] ?? item['args']);
    const id = readString(item['toolCallId']);
    if (id) call.callId = id;
    out.push(call);
  }
  return out;
}

/**
 * `ai.prompt.messages`: tool-call parts are history candidates; tool-result parts whose
 * output is error text ("Invalid input for tool …", "Model tried to call unavailable tool
 * …") or a denial explain why a requested call never ran.
 */
function readPromptMessages(value: unknown): { calls: MessageCall[]; refusals: RefusalFacts[] } {
  if (typeof value === 'string') {
    if (!value.includes('"tool-')) return { calls: [], refusals: [] };
    // Each model span records the whole conversation so far: only what continues the last one is read.
    const scan = promptConversations.read(value);
    return { calls: scan.calls, refusals: scan.responses };
  }
  const scan: MessageScan = { calls: [], responses: [] };
  scanPromptMessages(scan, readArray(value) ?? []);
  return { calls: scan.calls, refusals: scan.responses };
}

const promptConversations = new ConversationReader(scanPromptMessages);

/** Tool-call and tool-result parts of AI SDK prompt messages, message by message. */
export function scanPromptMessages(scan: MessageScan, messages: unknown[]): void {
  const calls = scan.calls;
  const refusals = scan.responses;
  for (const message of messages) {
    if (!isRecord(message) || !Array.isArray(message['content'])) continue;
    for (const part of message['content']) {
      if (!isRecord(part)) continue;
      if (part['type'] === 'tool-call') {
        const name = readString(part['toolName']);
        if (!name) continue;
        const call = callWithArgs(name, part['input'] ?? part['args']);
        const id = readString(part['toolCallId']);
        if (id) call.callId = id;
        calls.push(call);
      } else if (part['type'] === 'tool-result') {
        const id = readString(part['toolCallId']);
        const output = part['output'] ?? part['result'];
        let text: string | undefined;
        if (isRecord(output) && typeof output['type'] === 'string') {
          const t = output['type'];
          if (t === 'error-text' || t === 'error-json' || t === 'text' || t === 'json')
            text = responseText(output['value']);
          else if (t === 'execution-denied') text = readString(output['reason']) ?? 'execution denied';
        } else {
          text = responseText(output);
        }
        if (id && text !== undefined) {
          const r: RefusalFacts = { callId: id, text };
          const name = readString(part['toolName']);
          if (name) r.name = name;
          refusals.push(r);
        }
      }
    }
  }
}

export const vercelAi: ConventionAdapter = {
  name: CONVENTION,
  role: vercelAiRole,
  tool: vercelAiTool,
  agent: vercelAiAgent,
  llm: vercelAiLlm,
  llmOutput: vercelAiLlmOutput,
  llmInput: vercelAiLlmInput,
  claimed: {
    tool: readTool,
    agent: readAgent,
    agentName: readAgentName,
    llmOutput: readLlmOutput,
    llmInput: readLlmInput,
  },
};
