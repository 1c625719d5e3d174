import type { HistoryCall, ToolDefinition } from '../types.js';
import { callWithArgs, isRecord, readArray, readString, readTrue } from './read-values.js';
import type { MessageCall, RefusalFacts } from './span-facts.js';
import { isRejectionText } from './tool-status.js';

/** Tool calls and tool results found in a GenAI-semconv message list. */
export interface MessageScan {
  calls: MessageCall[];
  /** Tool results by call id, as text: why a call that never ran was refused. */
  responses: RefusalFacts[];
}

/**
 * Reads `gen_ai.input.messages` / `gen_ai.output.messages` (JSON text or structured):
 * `[{role, parts: [{type: 'tool_call', id, name, arguments} | {type: 'tool_call_response', id, response|result}]}]`.
 * `from` skips messages before that index (Pydantic AI's `new_message_index`); `to`
 * stops before it. Unknown shapes are skipped.
 */
export function scanGenAiMessages(value: unknown, from = 0, to = Number.POSITIVE_INFINITY): MessageScan {
  const scan: MessageScan = { calls: [], responses: [] };
  // Most inputs (a first turn, a plain question) hold no tool part: skip parsing them.
  if (typeof value === 'string' && !value.includes('tool_call') && !value.includes('tool_approval'))
    return scan;
  const messages = readArray(value);
  if (!messages) return scan;
  const end = Math.min(messages.length, to);
  for (let i = Math.max(0, from); i < end; i++) {
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
  return scan;
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
