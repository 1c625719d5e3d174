import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { SpanRole } from '../conventions/span-role.js';
import type { LiveAgent } from '../guard/live-misuse.js';
import type { LiveRunsAt } from '../guard/live-scope.js';
import type { LiveChecks } from './live-checks.js';
import { parentIdOf } from './sdk-span.js';
import { NO_SCOPE, type SpanEntry } from './span-entry.js';
import type { TraceBuffer } from './trace-buffer.js';
import { TraceMode, type TraceState } from './trace-state.js';

/** Parents walked up through ordinary spans at most, looking for the run of a span. */
const MAX_WALK = 64;

/**
 * Reads, never writes, the processor's live state: which open agent runs a span belongs to
 * (the same entries, and the same live counts, the live checks update as tool spans start and
 * end). The guard asks it; the span hooks stay the only writers.
 */
export class LiveRunLocator {
  constructor(
    private readonly _buffer: TraceBuffer,
    private readonly _live: LiveChecks,
  ) {}

  /** The runs of `span` (an open span of the application), or undefined when it is in none. */
  at(span: ReadableSpan): LiveRunsAt | undefined {
    if (!this._live.enabled) return undefined;
    const ctx = span.spanContext();
    const state = this._buffer.get(ctx.traceId);
    if (state === undefined) return undefined;
    const found = nearestAgent(state, span, ctx.spanId);
    if (found === undefined) return undefined;
    const agents: LiveAgent[] = [];
    for (let agent: SpanEntry | undefined = found.agent; agent !== undefined; agent = agent.agent) {
      if (!agent.open) continue;
      const live = this._live.liveOf(ctx.traceId, agent);
      if (live !== null) agents.push(live);
    }
    if (agents.length === 0) return undefined;
    return { agents, toolSpanId: found.tool ? ctx.spanId : undefined };
  }
}

interface Nearest {
  agent: SpanEntry;
  tool: boolean;
}

/** The agent entry at or above a span, and whether the span is a tool span (held or followed). */
function nearestAgent(state: TraceState, span: ReadableSpan, spanId: string): Nearest | undefined {
  if (state.mode !== TraceMode.JUDGED) {
    // Followed traces: agent and tool spans map to their scope by object (see `followed`).
    const scope = state.followed.get(span);
    if (scope !== undefined) {
      if (scope === NO_SCOPE) return undefined;
      if (scope.role === SpanRole.TOOL) return scope.agent && { agent: scope.agent, tool: true };
      return { agent: scope, tool: false };
    }
  }
  const held = state.spans.get(spanId);
  if (held !== undefined) {
    const agent = held.role === SpanRole.AGENT ? held : agentAbove(held);
    return agent && { agent, tool: held.role === SpanRole.TOOL };
  }
  // An ordinary span (not held): the run of its nearest held ancestor.
  let parentId = parentIdOf(span);
  for (let steps = 0; parentId !== undefined && steps < MAX_WALK; steps++) {
    const entry = state.spans.get(parentId);
    if (entry !== undefined) {
      const agent = entry.role === SpanRole.AGENT ? entry : agentAbove(entry);
      return agent && { agent, tool: false };
    }
    const ordinary = state.ordinary.get(parentId);
    if (ordinary === undefined) break;
    parentId = parentIdOf(ordinary);
  }
  // Out of the sample, ordinary spans are not followed: the agent that started last and is open.
  if (state.mode !== TraceMode.JUDGED && state.lastAgent !== undefined)
    return { agent: state.lastAgent, tool: false };
  return undefined;
}

function agentAbove(entry: SpanEntry): SpanEntry | undefined {
  if (entry.agent !== undefined) return entry.agent;
  let at = entry.parent;
  for (let steps = 0; at !== undefined && steps < MAX_WALK; steps++) {
    if (at.role === SpanRole.AGENT) return at;
    if (at.agent !== undefined) return at.agent;
    at = at.parent;
  }
  return undefined;
}
