import { classifySpan } from '../conventions/classify.js';
import { applyGuardDecision } from '../conventions/guard-decision.js';
import type { AgentFacts, ConventionAdapter, LlmFacts, ToolFacts } from '../conventions/span-facts.js';
import type { SpanLike } from '../types.js';
import type { Node, SpanReading } from './trace-model.js';

/**
 * Reads a span's facts now, for a reconstruction later (handed to `reconstructTrace` beside
 * the span): the processor calls this as each span of a sampled run ends, while its
 * attributes are fresh in memory, so arguments and results are parsed once, then, and
 * judging the run reuses them. The span must not change afterwards (ended spans do not).
 * With `deferToolValues`, a tool span's arguments and result may be left unread
 * (`ToolFacts.unread`), for `reconstructTrace` to read only where they are needed, and an
 * agent span's own input and output are not read (no scorer of such a policy reads them).
 */
export function readAhead(span: SpanLike, deferToolValues = false): SpanReading {
  const classification = classifySpan(span);
  const adapter = classification.adapter;
  const role = classification.role;
  // One literal with every field: a reading never changes shape.
  return {
    classification,
    tool: adapter !== undefined && role === 'tool' ? safeTool(adapter, span, deferToolValues) : undefined,
    llm: adapter !== undefined && role === 'llm' ? safeLlmOutput(adapter, span) : undefined,
    agent: adapter !== undefined && role === 'agent' ? safeAgent(adapter, span, deferToolValues) : undefined,
  };
}

/**
 * Phase 4 of reconstruction: read the spans that matter with the adapter that claimed them
 * (tool and agent facts, the output side of model calls), and rank same-millisecond spans by
 * causality (a model call by how much conversation its input holds, a tool just after the
 * model call that requested it).
 */
export function readFacts(nodes: Node[], deferValues = false): void {
  // 4. Read the spans that matter with the adapter that claimed them.
  // Made on the first request with a call id (most model spans ask for nothing).
  let requestRank: Map<string, number> | undefined;
  for (const node of nodes) {
    const adapter = node.adapter;
    if (!adapter) continue;
    const ahead = node.reading;
    if (node.role === 'tool') {
      const facts = ahead !== undefined ? ahead.tool : toolFacts(node);
      if (facts) node.callId = facts.callId;
      else node.role = 'other';
      node.tool = facts;
    } else if (node.role === 'agent') {
      node.agent = ahead !== undefined ? ahead.agent : safeAgent(adapter, node.span, deferValues);
      if (!node.agent) node.role = 'other';
    } else if (node.role === 'llm') {
      const facts = ahead !== undefined ? ahead.llm : llmFacts(node);
      if (!facts) continue;
      node.llm = facts;
      // Ranks for same-millisecond ties: LLM spans by conversation progress, tools after their request.
      node.rank = 2 * (facts.progress ?? 0);
      node.hasRequests = facts.requests.length > 0;
      for (const r of facts.requests) {
        if (r.callId === undefined) continue;
        requestRank ??= new Map();
        if (!requestRank.has(r.callId)) requestRank.set(r.callId, node.rank);
      }
    }
  }
  if (requestRank !== undefined) {
    for (const node of nodes) {
      const id = node.role === 'tool' ? node.callId : undefined;
      const rank = id === undefined ? undefined : requestRank.get(id);
      if (rank !== undefined) node.rank = rank + 1;
    }
  }
}

export function toolFacts(node: Node): ToolFacts | undefined {
  if (node.tool) return node.tool;
  const adapter = node.adapter;
  if (!adapter) return undefined;
  const ahead = node.reading;
  return ahead !== undefined && ahead.classification.role === 'tool'
    ? ahead.tool
    : safeTool(adapter, node.span);
}

// Each span's adapter and role are known by now (classified once): the adapter's claimed readers skip asking again.
function safeTool(adapter: ConventionAdapter, span: SpanLike, deferValues = false): ToolFacts | undefined {
  try {
    const claimed = adapter.claimed;
    const facts = claimed !== undefined ? claimed.tool(span, deferValues) : adapter.tool(span);
    if (facts !== undefined) applyGuardDecision(facts, span);
    return facts;
  } catch {
    return undefined;
  }
}

function safeLlmOutput(adapter: ConventionAdapter, span: SpanLike): LlmFacts | undefined {
  try {
    const claimed = adapter.claimed;
    return claimed !== undefined ? claimed.llmOutput(span) : adapter.llmOutput(span);
  } catch {
    return undefined;
  }
}
export function llmFacts(node: Node): LlmFacts | undefined {
  if (node.llm) return node.llm;
  const adapter = node.adapter;
  if (!adapter) return undefined;
  const ahead = node.reading;
  return ahead !== undefined && ahead.classification.role === 'llm'
    ? ahead.llm
    : safeLlmOutput(adapter, node.span);
}
// Adapter calls that may throw are wrapped in module functions, not closures: they run per span.
export function safeAgent(
  adapter: ConventionAdapter,
  span: SpanLike,
  deferValues = false,
): AgentFacts | undefined {
  try {
    const claimed = adapter.claimed;
    return claimed !== undefined ? claimed.agent(span, deferValues) : adapter.agent(span);
  } catch {
    return undefined;
  }
}
/**
 * The name `agent(span)` would give a span the adapter claimed as an agent, read alone (no
 * messages parsed); undefined when the reader throws. Adapters without claimed readers are
 * asked `agent` itself.
 */
export function safeAgentName(adapter: ConventionAdapter, span: SpanLike): string | undefined {
  try {
    const claimed = adapter.claimed;
    return claimed !== undefined ? claimed.agentName(span) : adapter.agent(span)?.name;
  } catch {
    return undefined;
  }
}
export function safeLlmInput(
  adapter: ConventionAdapter,
  span: SpanLike,
): ReturnType<ConventionAdapter['llmInput']> | undefined {
  try {
    const claimed = adapter.claimed;
    return claimed !== undefined ? claimed.llmInput(span) : adapter.llmInput(span);
  } catch {
    return undefined;
  }
}
