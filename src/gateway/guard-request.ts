/** One `POST /v1/guard` request, checked: a tool call an agent is about to make. */
export interface GuardRequest {
  /** 32 lowercase hex digits: the trace of the agent's run. */
  traceId: string;
  agent: string;
  tool: string;
  /** The call's arguments (an object). Default `{}`. */
  arguments: Record<string, unknown>;
}

const KEYS = new Set(['trace_id', 'agent', 'tool', 'arguments']);
/** Longest agent or tool name accepted: names are metric labels and map keys. */
const MAX_NAME = 256;

/**
 * Reads a guard request body (UTF-8 JSON). Every refusal says which field is wrong and how, so
 * a client in another language can fix its request from the message alone.
 */
export function parseGuardRequest(body: string): GuardRequest | { invalid: string } {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { invalid: 'body is not JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { invalid: 'body must be a JSON object with trace_id, agent, tool and arguments' };
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!KEYS.has(key))
      return { invalid: `unknown field ${JSON.stringify(key)} (expected trace_id, agent, tool, arguments)` };
  }
  const traceId = record['trace_id'];
  if (typeof traceId !== 'string' || !/^[0-9a-fA-F]{32}$/.test(traceId) || /^0+$/.test(traceId)) {
    return { invalid: 'trace_id must be 32 hex digits, not all zero (the W3C trace id of the agent run)' };
  }
  const agent = name(record, 'agent');
  if (typeof agent !== 'string') return agent;
  const tool = name(record, 'tool');
  if (typeof tool !== 'string') return tool;
  const args = record['arguments'] ?? {};
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return { invalid: 'arguments must be a JSON object (the tool call arguments by name)' };
  }
  return { traceId: traceId.toLowerCase(), agent, tool, arguments: args as Record<string, unknown> };
}

function name(record: Record<string, unknown>, key: 'agent' | 'tool'): string | { invalid: string } {
  const value = record[key];
  if (typeof value !== 'string' || value.length === 0)
    return { invalid: `${key} must be a non-empty string` };
  if (value.length > MAX_NAME) return { invalid: `${key} is longer than ${MAX_NAME} characters` };
  return value;
}
