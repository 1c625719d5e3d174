import { type Context, ROOT_CONTEXT, TraceFlags, trace } from '@opentelemetry/api';
import type { Policy } from '../../types.js';
import type { GuardedRunsOptions } from '../guarded-runs.js';
import { deciderOf, type GuardAdapterOptions, refusalText } from './tool-guard.js';

export type { GuardedRunsOptions } from '../guarded-runs.js';
export type { GuardAdapterOptions, GuardDecision, GuardedCall } from './tool-guard.js';

/** What Mastra hands `beforeToolCall` (`ToolHookContext`), as far as the guard reads it. */
export interface ToolHookContextLike {
  toolName: string;
  input: unknown;
  context?: unknown;
  metadata?: { agentId?: string; agentName?: string } & Record<string, unknown>;
}

/** Mastra's `ToolHooks`, structurally: the guard only needs `beforeToolCall`. */
export interface ToolwatchToolHooks {
  beforeToolCall(hook: ToolHookContextLike): { proceed: false; output: string } | undefined;
}

export interface ToolHooksOptions extends GuardAdapterOptions, Omit<GuardedRunsOptions, 'onEvicted'> {}

/**
 * Mastra 1.x: tool hooks for an agent (`new Agent({ …, hooks })`) or one call
 * (`agent.generate(prompt, { hooks })`). Mastra runs `beforeToolCall` before every tool of the
 * agent; a refused call answers `{ proceed: false, output }`, so the tool's `execute` never runs
 * and the model receives the reason as the call's result.
 *
 * Mastra hands its spans to exporters only after the run, so no span processor holds a live
 * run to ask: the hooks keep each run's calls themselves (`GuardedRuns`, as the gateway's
 * `/v1/guard` does), keyed by Mastra's trace id (its ids are the OpenTelemetry ids) and the
 * agent's name, and decide against the policy's rules for that agent name.
 */
export function toolwatchToolHooks(policy: Policy, options: ToolHooksOptions = {}): ToolwatchToolHooks {
  const decide = deciderOf(policy, options);
  return {
    beforeToolCall(hook) {
      const agent = hook.metadata?.agentName ?? hook.metadata?.agentId ?? 'agent';
      const call = { tool: hook.toolName, arguments: hook.input, agent };
      const decision = decide(call, mastraSpanContext(hook.context) ?? ROOT_CONTEXT);
      if (decision.allowed) return undefined;
      return { proceed: false, output: refusalText(decision, call, options) };
    },
  };
}

/** Mastra's current span (tool execution context, `tracingContext.currentSpan`) as an OpenTelemetry parent. */
function mastraSpanContext(context: unknown): Context | undefined {
  const span = (
    context as { tracingContext?: { currentSpan?: { id?: unknown; traceId?: unknown } } } | undefined
  )?.tracingContext?.currentSpan;
  if (typeof span?.id !== 'string' || typeof span.traceId !== 'string') return undefined;
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: span.traceId,
    spanId: span.id,
    traceFlags: TraceFlags.SAMPLED,
  });
}
