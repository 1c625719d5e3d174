import type { Attributes } from '@opentelemetry/api';
import {
  ADK_MERGED_TOOL_NAME,
  ATTR_AI_OPERATION_ID,
  ATTR_AI_TELEMETRY_FUNCTION_ID,
  ATTR_AI_TOOL_CALL_ARGS,
  ATTR_AI_TOOL_CALL_INPUT,
  ATTR_AI_TOOL_CALL_NAME,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_MASTRA_SPAN_TYPE,
  ATTR_MASTRA_TOOL_INPUT,
  ATTR_OI_AGENT_NAME,
  ATTR_OI_GRAPH_NODE_ID,
  ATTR_OI_INPUT_VALUE,
  ATTR_OI_TOOL_NAME,
  ATTR_OPENINFERENCE_SPAN_KIND,
  ATTR_TRACELOOP_ENTITY_INPUT,
  ATTR_TRACELOOP_ENTITY_NAME,
  ATTR_TRACELOOP_SPAN_KIND,
  MASTRA_OPERATION_AGENT_RUN,
  MASTRA_OPERATION_TOOL_EXECUTE,
  SPAN_AI_TOOL_CALL,
} from '../semconv.js';
import { LLM_OPERATIONS } from './gen-ai-semconv.js';

/**
 * What a span is on the application's hot path. `NONE` is every ordinary (HTTP, DB, …)
 * span. It agrees with the adapters of `classify.ts` on agent and tool spans (a test holds
 * it to that on every recorded trace); it is only wider where keeping a span costs nothing
 * but memory (`CHAIN` spans may become implicit runs; every Mastra span is kept as `LLM`).
 */
export const SpanRole = {
  NONE: 0,
  AGENT: 1,
  TOOL: 2,
  LLM: 3,
  /** Chains, workflows, tasks: may become implicit runs (LangGraph, Traceloop). */
  CHAIN: 4,
} as const;
export type SpanRole = (typeof SpanRole)[keyof typeof SpanRole];

const TOOL_NAME_PREFIX = 'execute_tool ';
const AGENT_NAME_PREFIX = 'invoke_agent ';
const ADK_MERGED_SPAN = 'execute_tool (merged)';

/**
 * A cheap classification (a few property reads, no allocation) following each
 * convention's span kinds. It is asked again when a span ends, because some frameworks set the deciding
 * attributes after start.
 */
export function spanRole(name: string, attributes: Attributes): SpanRole {
  const operation = attributes[ATTR_GEN_AI_OPERATION_NAME];
  if (operation !== undefined) {
    if (operation === 'execute_tool') {
      // ADK's merged duplicate of parallel calls is no execution (as the GenAI adapter reads it).
      return name === ADK_MERGED_SPAN || attributes[ATTR_GEN_AI_TOOL_NAME] === ADK_MERGED_TOOL_NAME
        ? SpanRole.NONE
        : SpanRole.TOOL;
    }
    if (operation === 'invoke_agent') return SpanRole.AGENT;
    if (LLM_OPERATIONS.has(operation)) return SpanRole.LLM;
    if (operation === 'invoke_workflow') return SpanRole.CHAIN;
    // Mastra 0.24's own operation names.
    if (operation === MASTRA_OPERATION_TOOL_EXECUTE) return SpanRole.TOOL;
    if (operation === MASTRA_OPERATION_AGENT_RUN) return SpanRole.AGENT;
    // Any other value (`create_agent`, a list, a number) says this is not a GenAI agent or
    // tool span, so the GenAI span-name rules below do not apply, as in reconstruction.
  }
  const oiKind = attributes[ATTR_OPENINFERENCE_SPAN_KIND];
  if (typeof oiKind === 'string') {
    const kind = oiKind === 'TOOL' || oiKind === 'AGENT' || oiKind === 'LLM' ? oiKind : oiKind.toUpperCase();
    if (kind === 'TOOL') return SpanRole.TOOL;
    if (kind === 'AGENT') return SpanRole.AGENT;
    if (kind === 'LLM') return SpanRole.LLM;
    return SpanRole.CHAIN;
  }
  const traceloopKind = attributes[ATTR_TRACELOOP_SPAN_KIND];
  if (traceloopKind !== undefined) {
    if (traceloopKind === 'tool') return SpanRole.TOOL;
    if (traceloopKind === 'agent') return SpanRole.AGENT;
    if (traceloopKind === 'task' && name.startsWith(TOOL_NAME_PREFIX)) return SpanRole.TOOL;
    if (traceloopKind === 'workflow' || traceloopKind === 'task') return SpanRole.CHAIN;
  }
  const mastraType = attributes[ATTR_MASTRA_SPAN_TYPE];
  if (mastraType !== undefined) {
    if (mastraType === 'tool_call' || mastraType === 'mcp_tool_call') return SpanRole.TOOL;
    // Steps and chunks carry the model's tool calls (request-only calls among them): keep them.
    // So is an `agent_run` span here: Mastra's agent spans are agents by their operation name
    // (above), as reconstruction reads them; one without it is no run there, and taken for an
    // agent here it would be judged into nothing, silently.
    return SpanRole.LLM;
  }
  // Names decide the rest; one character read rules most ordinary names out.
  const first = name.charCodeAt(0);
  // Vercel AI SDK ≤ 6: recognised by name, which is known at start.
  if (first === 97 /* a */ && name.startsWith('ai.')) {
    if (name === SPAN_AI_TOOL_CALL || attributes[ATTR_AI_OPERATION_ID] === SPAN_AI_TOOL_CALL)
      return SpanRole.TOOL;
    if (name === 'ai.generateText' || name === 'ai.streamText') return SpanRole.AGENT;
    if (name.endsWith('.doGenerate') || name.endsWith('.doStream')) return SpanRole.LLM;
    return SpanRole.CHAIN;
  }
  if (operation !== undefined) return SpanRole.NONE;
  if (first === 101 /* e */ && name.startsWith(TOOL_NAME_PREFIX)) return SpanRole.TOOL;
  if (first === 105 /* i */ && name.startsWith(AGENT_NAME_PREFIX)) return SpanRole.AGENT;
  return SpanRole.NONE;
}

/**
 * The role of a span, as it ends, that was not recognised when it started (or not seen at
 * all). Only spans that get their attributes at the end can be agent-related then:
 * OpenInference bridges (which write everything just before `end()`) and spans given GenAI
 * attributes after start. Two reads keep ordinary spans cheap.
 */
export function lateSpanRole(name: string, attributes: Attributes): SpanRole {
  if (
    attributes[ATTR_OPENINFERENCE_SPAN_KIND] === undefined &&
    attributes[ATTR_GEN_AI_OPERATION_NAME] === undefined
  ) {
    return SpanRole.NONE;
  }
  return spanRole(name, attributes);
}

/** The tool name a span announces, from its start attributes or its name. */
export function toolNameOf(name: string, attributes: Attributes): string | undefined {
  const value =
    attributes[ATTR_GEN_AI_TOOL_NAME] ??
    attributes[ATTR_AI_TOOL_CALL_NAME] ??
    attributes[ATTR_OI_TOOL_NAME] ??
    attributes[ATTR_TRACELOOP_ENTITY_NAME];
  if (typeof value === 'string' && value !== '') return value;
  if (name.startsWith(TOOL_NAME_PREFIX)) return name.slice(TOOL_NAME_PREFIX.length);
  if (name.endsWith('.tool')) return name.slice(0, -'.tool'.length);
  // OpenInference names tool spans after the tool.
  if (attributes[ATTR_OPENINFERENCE_SPAN_KIND] !== undefined && name !== '') return name;
  return undefined;
}

/** The agent name a span announces, for live misuse reports before reconstruction. */
export function agentNameOf(name: string, attributes: Attributes): string {
  const value = agentNameAttribute(attributes);
  if (value !== undefined) return value;
  if (name.startsWith(AGENT_NAME_PREFIX)) return name.slice(AGENT_NAME_PREFIX.length);
  if (name.endsWith('.agent')) return name.slice(0, -'.agent'.length);
  return name;
}

/**
 * Whether the agent span states its name already: in a name attribute, or in a GenAI span
 * name `invoke_agent {name}`. Otherwise the name read now is a fallback (the span's own
 * name), which an attribute set later may still replace.
 */
export function announcesAgentName(name: string, attributes: Attributes): boolean {
  return (
    agentNameAttribute(attributes) !== undefined ||
    (name.length > AGENT_NAME_PREFIX.length && name.startsWith(AGENT_NAME_PREFIX))
  );
}

function agentNameAttribute(attributes: Attributes): string | undefined {
  const value =
    attributes[ATTR_GEN_AI_AGENT_NAME] ??
    attributes[ATTR_OI_AGENT_NAME] ??
    attributes[ATTR_AI_TELEMETRY_FUNCTION_ID] ??
    attributes[ATTR_OI_GRAPH_NODE_ID] ??
    attributes[ATTR_TRACELOOP_ENTITY_NAME];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Where each convention puts a tool call's arguments, in the order the adapters prefer them. */
const TOOL_ARGUMENT_KEYS = [
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_AI_TOOL_CALL_ARGS,
  ATTR_AI_TOOL_CALL_INPUT,
  ATTR_OI_INPUT_VALUE,
  ATTR_MASTRA_TOOL_INPUT,
  ATTR_TRACELOOP_ENTITY_INPUT,
] as const;

/** A tool span's arguments as it carries them (JSON text or a value), for live checks. */
export function toolArgumentsOf(attributes: Attributes): unknown {
  for (const key of TOOL_ARGUMENT_KEYS) {
    const value = attributes[key];
    if (value !== undefined) return value;
  }
  return undefined;
}
