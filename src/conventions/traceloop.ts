import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_TRACELOOP_ENTITY_INPUT,
  ATTR_TRACELOOP_ENTITY_NAME,
  ATTR_TRACELOOP_ENTITY_OUTPUT,
  ATTR_TRACELOOP_LLM_REQUEST_TYPE,
  ATTR_TRACELOOP_SPAN_KIND,
} from '../semconv.js';
import type { SpanLike } from '../types.js';
import { scanGenAiMessages } from './gen-ai-messages.js';
import { guarded } from './guarded.js';
import { NO_INPUT } from './merge-llm-facts.js';
import { isRecord, readArgs, readJsonStructure, readMaybeJson, readString } from './read-values.js';
import type {
  AgentFacts,
  ArgsFacts,
  ConventionAdapter,
  LlmFacts,
  SpanRole,
  ToolFacts,
} from './span-facts.js';
import { readToolStatus } from './tool-status.js';

const CONVENTION = 'traceloop';

/**
 * Traceloop OpenLLMetry: decorated entities with `traceloop.span.kind` (`tool`, `agent`,
 * `task`, `workflow`), name and I/O in `traceloop.entity.*`, input as `{"args", "kwargs"}`.
 * LangChain tools arrive as `task` spans named `execute_tool …`.
 */
export const traceloopRole = guarded(traceloopRoleOf, undefined);

function traceloopRoleOf(span: SpanLike): SpanRole | undefined {
  const a = span.attributes;
  const kind = a[ATTR_TRACELOOP_SPAN_KIND];
  if (kind === 'tool') return 'tool';
  if (kind === 'agent') return 'agent';
  if (kind === 'task' && span.name.startsWith('execute_tool ')) return 'tool';
  if (typeof kind === 'string') return 'other';
  if (a[ATTR_TRACELOOP_LLM_REQUEST_TYPE] !== undefined) return 'llm';
  return undefined;
}

export const traceloopTool = guarded(
  (span: SpanLike): ToolFacts | undefined => (traceloopRoleOf(span) === 'tool' ? readTool(span) : undefined),
  undefined,
);

function readTool(span: SpanLike): ToolFacts | undefined {
  const a = span.attributes;
  const name =
    readString(a[ATTR_TRACELOOP_ENTITY_NAME]) ??
    (span.name.startsWith('execute_tool ')
      ? span.name.slice('execute_tool '.length)
      : stripSuffix(span.name, '.tool'));
  const facts: ToolFacts = {
    convention: CONVENTION,
    name,
    ...readEntityInput(a[ATTR_TRACELOOP_ENTITY_INPUT]),
    ...readToolStatus(span),
  };
  const output = a[ATTR_TRACELOOP_ENTITY_OUTPUT];
  if (output !== undefined) facts.result = readMaybeJson(output);
  return facts;
}

/**
 * `{"args": [...], "kwargs": {...}}` → one argument object: the kwargs, or the single
 * positional object (merged with kwargs), or the positional raw string (LangChain).
 */
export function readEntityInput(value: unknown): ArgsFacts {
  const parsed = readJsonStructure(value);
  if (!isRecord(parsed) || (!('args' in parsed) && !('kwargs' in parsed))) return readArgs(value);
  const args = Array.isArray(parsed['args']) ? parsed['args'] : [];
  const kwargs = isRecord(parsed['kwargs']) ? parsed['kwargs'] : {};
  if (args.length === 0) return { args: kwargs, usable: true };
  if (args.length === 1) {
    const only = args[0];
    if (isRecord(only)) return { args: { ...only, ...kwargs }, usable: true };
    if (typeof only === 'string' && Object.keys(kwargs).length === 0) return readArgs(only);
  }
  return { args: parsed, usable: false };
}

export const traceloopAgent = guarded(
  (span: SpanLike): AgentFacts | undefined =>
    traceloopRoleOf(span) === 'agent' ? readAgent(span) : undefined,
  undefined,
);

/** The agent's name as `readAgent` gives it, read alone: rule matching needs only this, never the messages. */
function readAgentName(span: SpanLike): string {
  const a = span.attributes;
  return (
    readString(a[ATTR_TRACELOOP_ENTITY_NAME]) ??
    readString(a[ATTR_GEN_AI_AGENT_NAME]) ??
    stripSuffix(span.name, '.agent')
  );
}

function readAgent(span: SpanLike, deferValues = false): AgentFacts | undefined {
  const a = span.attributes;
  const facts: AgentFacts = { convention: CONVENTION, name: readAgentName(span) };
  const input = a[ATTR_TRACELOOP_ENTITY_INPUT];
  const output = a[ATTR_TRACELOOP_ENTITY_OUTPUT];
  if (input !== undefined && !deferValues) facts.input = readMaybeJson(input);
  if (output !== undefined && !deferValues) facts.output = readMaybeJson(output);
  return facts;
}

const COMPLETION_CALL = /^gen_ai\.completion\.(\d+)\.tool_calls\.(\d+)\.(id|name|arguments)$/;

/** LLM spans of Traceloop's own instrumentations: flattened `gen_ai.completion.N.tool_calls.M.*`. */
export const traceloopLlm = guarded(
  (span: SpanLike): LlmFacts | undefined => (traceloopRoleOf(span) === 'llm' ? readLlm(span) : undefined),
  undefined,
);

function readLlm(span: SpanLike): LlmFacts | undefined {
  const a = span.attributes;
  if (a[ATTR_GEN_AI_OUTPUT_MESSAGES] !== undefined) {
    return { convention: CONVENTION, requests: scanGenAiMessages(a[ATTR_GEN_AI_OUTPUT_MESSAGES]).calls };
  }
  const calls = new Map<string, { m: number; c: number; id?: string; name?: string; args?: unknown }>();
  for (const key in a) {
    const m = COMPLETION_CALL.exec(key);
    if (!m) continue;
    const k = m[1] + '.' + m[2];
    let call = calls.get(k);
    if (!call) {
      call = { m: Number(m[1]), c: Number(m[2]) };
      calls.set(k, call);
    }
    if (m[3] === 'id') call.id = readString(a[key]);
    else if (m[3] === 'name') call.name = readString(a[key]);
    else call.args = a[key];
  }
  const requests = [...calls.values()]
    .sort((x, y) => x.m - y.m || x.c - y.c)
    .filter((c) => c.name)
    .map((c) => ({ name: c.name!, ...(c.id ? { callId: c.id } : {}), ...readArgs(c.args) }));
  return { convention: CONVENTION, requests };
}

function stripSuffix(name: string, suffix: string): string {
  return name.endsWith(suffix) ? name.slice(0, -suffix.length) : name;
}

export const traceloop: ConventionAdapter = {
  name: CONVENTION,
  role: traceloopRole,
  tool: traceloopTool,
  agent: traceloopAgent,
  llm: traceloopLlm,
  llmOutput: traceloopLlm,
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
