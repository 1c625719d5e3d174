import type { SpanLike } from '../types.js';
import { genAiSemconv } from './gen-ai-semconv.js';
import { mastraLegacy } from './mastra-legacy.js';
import { openInference } from './openinference.js';
import type { ConventionAdapter, SpanRole } from './span-facts.js';
import { traceloop } from './traceloop.js';
import { vercelAi } from './vercel-ai.js';

/**
 * Adapters in the order they are asked; the first that claims a span reads it. GenAI
 * semconv comes first because converters (OpenInference, Traceloop) often keep the
 * `gen_ai.*` attributes next to their own, and those are the most precise.
 */
export const CONVENTION_ADAPTERS: readonly ConventionAdapter[] = [
  genAiSemconv,
  mastraLegacy,
  vercelAi,
  openInference,
  traceloop,
];

export interface Classification {
  role: SpanRole;
  /** The adapter that claimed the span; undefined for spans no convention knows. */
  adapter?: ConventionAdapter;
}

const OTHER: Classification = { role: 'other' };

/**
 * One classification per default adapter and role, shared (a classification is never
 * written): classifying a span allocates nothing.
 */
const CLASSIFIED: ReadonlyArray<Readonly<Record<SpanRole, Classification>>> = CONVENTION_ADAPTERS.map(
  (adapter) => ({
    agent: { role: 'agent', adapter },
    tool: { role: 'tool', adapter },
    llm: { role: 'llm', adapter },
    other: { role: 'other', adapter },
  }),
);

/** The span's role and the adapter that reads it. Never throws. */
export function classifySpan(
  span: SpanLike,
  adapters: readonly ConventionAdapter[] = CONVENTION_ADAPTERS,
): Classification {
  const shared = adapters === CONVENTION_ADAPTERS;
  for (let k = 0; k < adapters.length; k++) {
    const adapter = adapters[k]!;
    let role: SpanRole | undefined;
    try {
      role = adapter.role(span);
    } catch {
      role = undefined;
    }
    if (role === undefined) continue;
    const known = shared ? CLASSIFIED[k]![role] : undefined;
    return known ?? { role, adapter };
  }
  return OTHER;
}

/** `agent`, `tool`, `llm` or `other`: what the first convention that knows the span says it is. */
export function classify(span: SpanLike): SpanRole {
  return classifySpan(span).role;
}

const RELATED_NAME_PREFIXES = [
  'invoke_agent',
  'invoke_workflow',
  'execute_tool',
  'chat ',
  'ai.',
  'agent.',
  'agent_step',
  'tool.execute',
  'step ',
  'step: ',
  'chunk: ',
  'model_generation',
  'client_tool_call',
  'running tool',
  'agent run',
  'call_llm',
];
const RELATED_NAME_SUFFIXES = ['.agent', '.tool', '.run', '.arun', '.workflow', '.task'];

/**
 * A cheap test on a span name alone (no attribute is read): true for names that agent
 * frameworks use for agent, tool and model spans. Frameworks that name tool spans after
 * the tool (OpenInference) are only caught by {@link isAgentRelated}.
 */
export function isAgentRelatedName(name: string): boolean {
  if (typeof name !== 'string' || name.length === 0) return false;
  for (const p of RELATED_NAME_PREFIXES) if (name.startsWith(p)) return true;
  for (const s of RELATED_NAME_SUFFIXES) if (name.endsWith(s)) return true;
  return false;
}

const RELATED_ATTRIBUTES = [
  'gen_ai.operation.name',
  'gen_ai.tool.name',
  'gen_ai.agent.name',
  'openinference.span.kind',
  'traceloop.span.kind',
  'ai.operationId',
  'mastra.span.type',
  'toolwatch.from_history',
  'toolwatch.tool.status',
];

/**
 * True when a span belongs to an agent framework's vocabulary: a handful of property
 * lookups, cheap enough for every span on the hot path.
 */
export function isAgentRelated(span: SpanLike): boolean {
  const a = span.attributes;
  if (a) for (const key of RELATED_ATTRIBUTES) if (a[key] !== undefined) return true;
  return isAgentRelatedName(span.name);
}
