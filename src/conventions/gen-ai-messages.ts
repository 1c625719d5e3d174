import type { HistoryCall, ToolDefinition } from '../types.js';
import { ConversationReader, type MessageScan } from './conversation-reader.js';
import { callWithArgs, isRecord, readArray, readString, readTrue } from './read-values.js';
import type { RefusalFacts } from './span-facts.js';
import { isRejectionText } from './tool-status.js';

/**
 * Reads `gen_ai.input.messages` / `gen_ai.output.messages` (JSON text or structured):
 * `[{role, parts: [{type: 'tool_call', id, name, arguments} | {type: 'tool_call_response', id, response|result}]}]`.
 * `from` skips messages before that index (Pydantic AI's `new_message_index`); `to`
 * stops before it. Unknown shapes are skipped.
 */
export function scanGenAiMessages(value: unknown, from = 0, to = Number.POSITIVE_INFINITY): MessageScan {
  const scan: MessageScan = { calls: [], responses: [] };
  if (typeof value === 'string' && !holdsToolParts(value)) return scan;
  const messages = readArray(value);
  if (!messages) return scan;
  scanInto(scan, messages, Math.max(0, from), Math.min(messages.length, to));
  return scan;
}

/**
 * Most inputs (a first turn, a plain question) hold no tool part: their text is not parsed.
 * Searched by the ends of `tool_call` and `tool_approval`, whose first character is rare (a
 * search for `tool_call` stops at every `t`: 0.8 against 0.02 µs for 2 KB of messages).
 */
function holdsToolParts(text: string): boolean {
  return text.includes('_call') || text.includes('_approval');
}

/**
 * A conversation so far (`gen_ai.input.messages` of a model span, an agent's input): the same
 * as `scanGenAiMessages(value)`, with only what continues the last conversation read parsed
 * (`ConversationReader`).
 */
export function scanGenAiConversation(value: unknown): MessageScan {
  if (typeof value !== 'string') return scanGenAiMessages(value);
  if (!holdsToolParts(value)) return { calls: [], responses: [] };
  return conversations.read(value);
}

const conversations = new ConversationReader((scan, messages) =>
  scanInto(scan, messages, 0, messages.length),
);

function scanInto(scan: MessageScan, messages: unknown[], start: number, end: number): void {
  for (let i = start; i < end; i++) {
    const message = messages[i];
    if (!isRecord(message)) continue;
    const messageFlag = readTrue(message['from_history']);
    const parts = message['parts'];
    if (!Array.isArray(parts)) continue;
    for (const part of parts) {
      if (!isRecord(part)) continue;
      const type = part['type'];
      if (type === 'tool_call') {
        const name = readString(part['name']);
        if (!name) continue;
        const call = callWithArgs(name, part['arguments']);
        const id = readString(part['id']);
        if (id) call.callId = id;
        if (messageFlag || readTrue(part['from_history'])) call.fromHistory = true;
        if (readTrue(part['pending']) || part['state'] === 'approval-requested') call.pending = true;
        scan.calls.push(call);
      } else if (type === 'tool_call_response') {
        const id = readString(part['id'])?.trim();
        const response = 'response' in part ? part['response'] : part['result'];
        const text = responseText(response);
        if (id && text !== undefined) {
          const r: RefusalFacts = { callId: id, text };
          if (isDenied(response) || isRejectionText(text)) r.rejected = true;
          scan.responses.push(r);
        }
      } else if (type === 'tool_approval_response' && part['approved'] === false) {
        const id = readString(part['approval_id']);
        if (id)
          scan.responses.push({
            callId: id,
            text: readString(part['reason']) ?? 'approval denied',
            rejected: true,
          });
      }
    }
  }
}

/** An AI SDK approval denial as a tool output: `{denied: true, reason}`. */
function isDenied(response: unknown): response is Record<string, unknown> {
  return isRecord(response) && response['denied'] === true;
}

/** A tool result as readable text; `{denied: true, reason}` becomes the reason. */
export function responseText(response: unknown): string | undefined {
  if (response === undefined || response === null) return undefined;
  if (typeof response === 'string') return response;
  if (isDenied(response)) {
    return readString(response['reason']) ?? 'denied';
  }
  try {
    return JSON.stringify(response);
  } catch {
    return undefined;
  }
}

/** `gen_ai.tool.definitions`: `[{type, name, description?, parameters?}]`, or plain names (Mastra). */
export function readToolDefinitions(value: unknown): ToolDefinition[] | undefined {
  const list = readArray(value);
  if (!list) return undefined;
  const out: ToolDefinition[] = [];
  for (const item of list) {
    if (typeof item === 'string') {
      out.push({ name: item });
      continue;
    }
    if (!isRecord(item)) continue;
    // OpenAI wire format nests the function.
    const fn = isRecord(item['function']) ? item['function'] : item;
    const name = readString(fn['name']);
    if (!name) continue;
    const def: ToolDefinition = { name };
    const description = readString(fn['description']);
    if (description) def.description = description;
    const parameters = fn['parameters'] ?? fn['inputSchema'] ?? fn['input_schema'];
    if (parameters !== undefined) def.parameters = parameters;
    out.push(def);
  }
  return out.length > 0 ? out : undefined;
}

/** A history entry (without its span id) from a message call. */
export function historyOf(
  call: { name: string; callId?: string; args?: unknown },
  reason: HistoryCall['reason'],
): Omit<HistoryCall, 'spanId'> {
  const h: Omit<HistoryCall, 'spanId'> = { name: call.name, reason };
  if (call.callId) h.callId = call.callId;
  if (call.args !== undefined) h.args = call.args;
  return h;
}
