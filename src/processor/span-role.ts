import type { Attributes } from '@opentelemetry/api';
import {
  ATTR_AI_OPERATION_ID,
  ATTR_AI_TELEMETRY_FUNCTION_ID,
  ATTR_AI_TOOL_CALL_NAME,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_MASTRA_SPAN_TYPE,
  ATTR_OI_AGENT_NAME,
  ATTR_OI_GRAPH_NODE_ID,
  ATTR_OI_TOOL_NAME,
  ATTR_OPENINFERENCE_SPAN_KIND,
  ATTR_TRACELOOP_ENTITY_NAME,
  ATTR_TRACELOOP_SPAN_KIND,
  MASTRA_OPERATION_AGENT_RUN,
  MASTRA_OPERATION_TOOL_EXECUTE,
  SPAN_AI_TOOL_CALL,
} from '../semconv.js';

/** What a span is to the processor. `NONE` is every ordinary (HTTP, DB, …) span. */
export const SpanRole = {
  NONE: 0,
  AGENT: 1,
  TOOL: 2,
  LLM: 3,
  /** Chains, workflows, tasks: may become implicit runs (LangGraph, Traceloop). */
  CHAIN: 4,
} as const;
export type SpanRole = (typeof SpanRole)[keyof typeof SpanRole];

/**
 * A cheap classification (a few property reads, no allocation) on the application's hot path.
 * It follows conventions.md §10.2; reconstruction does the exact reading later. It is asked
 * again when a span ends, because some frameworks set the deciding attributes after start.
 */
export function spanRole(name: string, attributes: Attributes): SpanRole {
  const operation = attributes[ATTR_GEN_AI_OPERATION_NAME];
  if (operation !== undefined) {
    if (operation === 'execute_tool') return SpanRole.TOOL;
    if (operation === 'invoke_agent' || operation === 'create_agent') return SpanRole.AGENT;
    if (operation === 'chat' || operation === 'generate_content' || operation === 'text_completion') {
      return SpanRole.LLM;
    }
    if (operation === 'invoke_workflow') return SpanRole.CHAIN;
    // Mastra 0.24's own operation names.
    if (operation === MASTRA_OPERATION_TOOL_EXECUTE) return SpanRole.TOOL;
    if (operation === MASTRA_OPERATION_AGENT_RUN) return SpanRole.AGENT;
  }
  const oiKind = attributes[ATTR_OPENINFERENCE_SPAN_KIND];
  if (oiKind !== undefined) {
    if (oiKind === 'TOOL') return SpanRole.TOOL;
    if (oiKind === 'AGENT') return SpanRole.AGENT;
    if (oiKind === 'LLM') return SpanRole.LLM;
    if (oiKind === 'CHAIN') return SpanRole.CHAIN;
  }
  const traceloopKind = attributes[ATTR_TRACELOOP_SPAN_KIND];
  if (traceloopKind !== undefined) {
    if (traceloopKind === 'tool') return SpanRole.TOOL;
    if (traceloopKind === 'agent') return SpanRole.AGENT;
    if (traceloopKind === 'workflow' || traceloopKind === 'task') return SpanRole.CHAIN;
  }
  const mastraType = attributes[ATTR_MASTRA_SPAN_TYPE];
  if (mastraType !== undefined) {
    if (mastraType === 'tool_call' || mastraType === 'mcp_tool_call') return SpanRole.TOOL;
    if (mastraType === 'agent_run') return SpanRole.AGENT;
    // Steps and chunks carry the model's tool calls (request-only calls among them): keep them.
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
  if (first === 101 /* e */ && name.startsWith('execute_tool ')) return SpanRole.TOOL;
  if (first === 105 /* i */ && name.startsWith('invoke_agent ')) return SpanRole.AGENT;
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
  if (name.startsWith('execute_tool ')) return name.slice('execute_tool '.length);
  if (name.endsWith('.tool')) return name.slice(0, -'.tool'.length);
  // OpenInference names tool spans after the tool.
  if (attributes[ATTR_OPENINFERENCE_SPAN_KIND] === 'TOOL' && name !== '') return name;
  return undefined;
}

/** The agent name a span announces, for live misuse reports before reconstruction. */
export function agentNameOf(name: string, attributes: Attributes): string {
  const value =
    attributes[ATTR_GEN_AI_AGENT_NAME] ??
    attributes[ATTR_OI_AGENT_NAME] ??
    attributes[ATTR_AI_TELEMETRY_FUNCTION_ID] ??
    attributes[ATTR_OI_GRAPH_NODE_ID] ??
    attributes[ATTR_TRACELOOP_ENTITY_NAME];
  if (typeof value === 'string' && value !== '') return value;
  if (name.startsWith('invoke_agent ')) return name.slice('invoke_agent '.length);
  if (name.endsWith('.agent')) return name.slice(0, -'.agent'.length);
  return name;
}
