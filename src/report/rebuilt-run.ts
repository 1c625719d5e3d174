import type { AgentRun, RedactOptions, ToolStatus } from '../types.js';

/** One tool call of a rebuilt run, as a report shows it. */
export interface RebuiltCall {
  name: string;
  status: ToolStatus;
  /** The model asked for the call and nothing ran. */
  requestOnly: boolean;
  /**
   * The arguments as JSON, cut to `MAX_ARGS_CHARS`; with `redact.values`, the keys only
   * (`{"city": …}`), or the value's type.
   */
  args: string;
  /** The error type, and its message unless values are redacted. */
  error?: string;
}

/**
 * What toolwatch rebuilt of a run, as plain data (it crosses to `--jobs` workers and into
 * reports): its calls in order and its nested runs, bounded so that a run of 10,000 calls
 * costs a report a few kilobytes.
 */
export interface RebuiltRun {
  agent: string;
  span_id: string;
  /** No agent span: the run was inferred from the spans around its tool calls. */
  implicit: boolean;
  calls: RebuiltCall[];
  /** Calls beyond `MAX_CALLS`, not listed. */
  callsOmitted: number;
  /** Nested runs (team members, agents as tools, handoff targets), in start order. */
  members: RebuiltRun[];
  membersOmitted: number;
}

export const MAX_CALLS = 50;
export const MAX_MEMBERS = 20;
/** Nesting shown below the run; deeper members are counted in `membersOmitted`. */
export const MAX_DEPTH = 4;
export const MAX_ARGS_CHARS = 300;

/** The run as a report shows it, with argument values redacted as the policy says. */
export function describeRun(run: AgentRun, redact: RedactOptions | undefined, depth = 0): RebuiltRun {
  const calls = run.calls.slice(0, MAX_CALLS).map((call) => {
    const error =
      call.status === 'error' || call.errorType !== undefined
        ? [call.errorType, redact?.values ? undefined : call.errorMessage].filter(Boolean).join(': ')
        : '';
    return {
      name: call.name,
      status: call.status,
      requestOnly: call.requestOnly,
      args: showArgs(call.args ?? call.argsRaw, redact),
      ...(error ? { error: cut(error) } : {}),
    };
  });
  const shown = depth < MAX_DEPTH ? run.children.slice(0, MAX_MEMBERS) : [];
  return {
    agent: run.agent,
    span_id: run.spanId,
    implicit: run.implicit,
    calls,
    callsOmitted: Math.max(0, run.calls.length - MAX_CALLS),
    members: shown.map((child) => describeRun(child, redact, depth + 1)),
    membersOmitted: run.children.length - shown.length,
  };
}

function showArgs(value: unknown, redact: RedactOptions | undefined): string {
  if (value === undefined) return '';
  if (redact?.values) {
    if (value !== null && typeof value === 'object' && !Array.isArray(value))
      return cut(
        `{${Object.keys(value)
          .map((k) => `${JSON.stringify(k)}: …`)
          .join(', ')}}`,
      );
    return Array.isArray(value)
      ? `[array of ${value.length}]`
      : `[${value === null ? 'null' : typeof value}]`;
  }
  if (typeof value === 'string') return cut(value);
  try {
    return cut(JSON.stringify(value) ?? String(value));
  } catch {
    return '[unserialisable]';
  }
}

function cut(text: string): string {
  return text.length > MAX_ARGS_CHARS ? `${text.slice(0, MAX_ARGS_CHARS - 1)}…` : text;
}
