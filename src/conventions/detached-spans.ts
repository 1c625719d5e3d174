import { diag } from '@opentelemetry/api';

/** The agent-related roles the watch needs to tell apart. */
export type DetachedSpanKind = 'agent' | 'tool' | 'llm';

export const DETACHED_SPANS_WARNING =
  'toolwatch: agent and tool spans are each the root of their own trace, so no agent run has ' +
  'tool calls and every verdict is wrong. Register a context manager before spans start, e.g. ' +
  "context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable()) from '@opentelemetry/context-async-hooks'.";

/**
 * Notices the signature of an application without a context manager: `startActiveSpan`
 * cannot nest spans without one, so agent and tool spans all start as roots of their own
 * traces and toolwatch sees agents without tool calls — silently wrong verdicts. A tool
 * span is never a root in a working setup (it runs inside an agent); a root agent span
 * next to a root tool span, before any agent-related span had a parent, is the signature.
 * Warns once; after the first parented span (context works) or the warning, each call is
 * one branch.
 */
export class DetachedSpanWatch {
  private _watching = true;
  private _rootAgent = false;
  private _rootTool = false;

  constructor(private readonly _warn: (message: string) => void = (message) => diag.warn(message)) {}

  /**
   * For every agent, tool or LLM span (when it starts, or ends if its role shows only then):
   * `hasParent` is true for a local or remote parent.
   */
  observe(kind: DetachedSpanKind, hasParent: boolean): void {
    if (!this._watching) return;
    if (hasParent) {
      this._watching = false;
      return;
    }
    if (kind === 'agent') this._rootAgent = true;
    else if (kind === 'tool') this._rootTool = true;
    if (this._rootAgent && this._rootTool) {
      this._watching = false;
      this._warn(DETACHED_SPANS_WARNING);
    }
  }

  /** Whether spans are still being watched (neither a parented span nor the warning yet). */
  get watching(): boolean {
    return this._watching;
  }
}
