import { context as otelContext } from '@opentelemetry/api';
import {
  decide,
  type GuardAdapterOptions,
  type GuardDecision,
  refusalText,
  type ToolGuard,
} from './tool-guard.js';

export type { GuardAdapterOptions, GuardDecision, GuardedCall, ToolGuard } from './tool-guard.js';

/** The part of an AI SDK (6 or 7) tool the guard wraps. */
interface ExecutableTool {
  execute?: (input: any, options: any) => unknown;
}

export interface GuardToolsOptions extends GuardAdapterOptions {
  /**
   * The agent name passed to `checkToolCall`. Default none: the run is found from the active
   * context, in which the AI SDK runs `execute` under its tool span.
   */
  agent?: string;
}

/**
 * AI SDK 6 and 7: the same tools, each `execute` asking the guard first. A refused call never
 * reaches the tool's own `execute`: it returns the refusal text instead, which the model reads
 * as that call's result, and the loop goes on. Tools without `execute` (client-side, provider
 * tools) are kept as they are.
 */
export function guardTools<T extends Record<string, ExecutableTool>>(
  tools: T,
  guard: ToolGuard,
  options: GuardToolsOptions = {},
): T {
  const out: Record<string, ExecutableTool> = {};
  for (const [name, tool] of Object.entries(tools)) {
    const execute = tool.execute;
    if (typeof execute !== 'function') {
      out[name] = tool;
      continue;
    }
    out[name] = {
      ...tool,
      execute(input: unknown, callOptions: unknown) {
        const call = { tool: name, arguments: input, ...(options.agent ? { agent: options.agent } : {}) };
        const decision: GuardDecision = decide(guard, call, otelContext.active());
        if (!decision.allowed) return refusalText(decision, call, options);
        return execute.call(tool, input, callOptions);
      },
    };
  }
  return out as T;
}
