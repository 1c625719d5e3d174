import { type Context, context as otelContext } from '@opentelemetry/api';
import {
  decide,
  type GuardAdapterOptions,
  openInferenceSpanContext,
  refusalText,
  type ToolGuard,
} from './tool-guard.js';

export type { GuardAdapterOptions, GuardDecision, GuardedCall, ToolGuard } from './tool-guard.js';

/** The part of LangChain's `ToolCallRequest` the guard reads. */
export interface ToolCallRequestLike {
  toolCall: { id?: string; name: string; args?: unknown };
}

/** `ToolMessage` of `@langchain/core/messages`: the application's own class. */
export type ToolMessageClass<M> = new (fields: {
  content: string;
  tool_call_id: string;
  name?: string;
  status?: 'success' | 'error';
}) => M;

export interface WrapToolCallOptions<M> extends GuardAdapterOptions {
  /**
   * `ToolMessage` from `@langchain/core/messages`, as the application imports it: LangChain
   * tells messages apart by class, and a second copy of `@langchain/core` loaded by toolwatch
   * would make messages the agent does not recognise.
   */
  ToolMessage: ToolMessageClass<M>;
  /**
   * The agent name passed to `checkToolCall`. Default: the running agent's `lc_agent_name`
   * (the `name` given to `createAgent`; a sub-agent run inside a tool inherits its parent's).
   */
  agent?: string;
  /**
   * Where the run is found. Default: the OpenTelemetry span that OpenInference's LangChain
   * tracer opened for the node running the tools (the tracer never makes its spans active),
   * else the active context.
   */
  context?: (request: ToolCallRequestLike) => Context | undefined;
}

/**
 * LangChain JS v1: the `wrapToolCall` hook of a middleware
 * (`createMiddleware({ name: 'toolwatch', wrapToolCall: toolwatchWrapToolCall(…) })`). A refused
 * call never reaches `handler`, so the tool never runs: the hook answers with a `ToolMessage`
 * (status `error`) carrying the reason, which the model reads as the call's result, and the
 * agent loop goes on.
 */
export function toolwatchWrapToolCall<R extends ToolCallRequestLike, M, H>(
  guard: ToolGuard,
  options: WrapToolCallOptions<M>,
): (request: R, handler: (request: R) => H) => H | M {
  return (request, handler) => {
    const node = runningNode();
    const agent = options.agent ?? node.agent;
    const call = {
      tool: request.toolCall.name,
      arguments: request.toolCall.args,
      ...(agent ? { agent } : {}),
    };
    const where = options.context ? options.context(request) : node.context;
    const decision = decide(guard, call, where ?? otelContext.active());
    if (decision.allowed) return handler(request);
    return new options.ToolMessage({
      content: refusalText(decision, call, options),
      tool_call_id: request.toolCall.id ?? '',
      name: request.toolCall.name,
      status: 'error',
    });
  };
}

/** LangChain keeps the running node's config in a process-wide AsyncLocalStorage under these keys. */
const TRACING_ALS = Symbol.for('ls:tracing_async_local_storage');
const CHILD_CONFIG = Symbol.for('lc:child_config');

/**
 * What LangChain knows of the node running the tools: the span OpenInference's tracer opened
 * for it (found through the node's callbacks, the parent run id and the tracer's run table) and
 * the agent's name (`lc_agent_name` in the run's metadata). Read defensively: anything missing
 * means "not found", never an error.
 */
function runningNode(): { context?: Context; agent?: string } {
  try {
    const storage = (globalThis as Record<symbol, { getStore?: () => any } | undefined>)[TRACING_ALS];
    const config = storage?.getStore?.()?.extra?.[CHILD_CONFIG];
    const name: unknown = config?.metadata?.lc_agent_name;
    const agent = typeof name === 'string' && name !== '' ? name : undefined;
    const callbacks = config?.callbacks;
    const runId: unknown = callbacks?.getParentRunId?.() ?? callbacks?._parentRunId;
    const handlers: unknown = callbacks?.handlers ?? callbacks;
    if (typeof runId === 'string' && Array.isArray(handlers)) {
      for (const handler of handlers) {
        const context = openInferenceSpanContext(handler?.runs?.[runId]?.span);
        if (context !== undefined) return { context, ...(agent ? { agent } : {}) };
      }
    }
    return agent ? { agent } : {};
  } catch {
    return {};
  }
}
