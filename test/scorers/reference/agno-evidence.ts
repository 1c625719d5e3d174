// The implementation as of dd40200, kept verbatim (imports aside) as the oracle of
// scorers-differential.test.ts: the optimised code must give byte-identical results.

import type { AgentRun, ToolExecution } from '../../../src/types.js';
import { pythonEquals } from '../../../src/util/python-equals.js';

/** One agno `ToolExecution`, as the two agno scorers read it. */
export interface AgnoExecution {
  name: string;
  /** agno `tool_call_error` (truthy). */
  error: boolean;
  /** agno `is_paused`. */
  paused: boolean;
  /** agno `tool_args`: parsed arguments, `undefined` for None. */
  args: unknown;
  /** The call it came from, for reports. */
  call?: ToolExecution;
}

/** What agno's evaluators read from a `RunOutput` (and its members). */
export interface AgnoEvidence {
  /** `RunOutput.tools`, in order (members appended depth-first pre-order for scope `members`). */
  executions: AgnoExecution[];
  /** Names requested by non-history messages (`Message.tool_calls`), as a set. */
  requestedNames: Set<string>;
}

export type EvidenceScope = 'members' | 'self';

/**
 * How agno's evidence is read from a trace, for one run:
 *
 * - executions = the run's calls in order (executions seen as spans, any status), plus
 *   request-only calls that are `paused` or were rejected at an approval step — agno keeps a
 *   `ToolExecution` for a paused HITL call (`is_paused`) and for a rejected one
 *   (`confirmed=False`, `tool_call_error`), while a request refused before it could run
 *   (tool-call limit, unknown tool, bad arguments) has none and is only a message-side request;
 * - `error` / `refused` ↔ `tool_call_error`, `paused` ↔ `is_paused`;
 * - requested names = every request an LLM span of the run made this turn (joined or not);
 *   history lives in `run.history` and is never read.
 *
 * With scope `members` the run's own evidence comes first, then each nested run's subtree
 * in start order (agno `_collect_member_evidence`). Iterative, so deep nesting is safe.
 */
export function agnoEvidence(run: AgentRun, scope: EvidenceScope): AgnoEvidence {
  const executions: AgnoExecution[] = [];
  const requestedNames = new Set<string>();
  const stack: AgentRun[] = [run];
  const seen = new Set<AgentRun>();
  while (stack.length > 0) {
    const node = stack.pop()!;
    // A malformed tree (a run listed twice) must not loop or double-count.
    if (seen.has(node)) continue;
    seen.add(node);
    collectOwn(node, executions, requestedNames);
    if (scope === 'members') {
      const children = node.children ?? [];
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
    }
  }
  return { executions, requestedNames };
}

function collectOwn(run: AgentRun, executions: AgnoExecution[], requestedNames: Set<string>): void {
  const calls = run.calls ?? run.executions ?? [];
  for (const call of calls) {
    if (!isAgnoExecution(call)) {
      if (call.name) requestedNames.add(call.name);
      continue;
    }
    executions.push({
      name: call.name,
      error: call.status === 'error' || call.status === 'refused',
      paused: call.status === 'paused',
      args: call.args,
      call,
    });
  }
  for (const request of run.requests ?? []) {
    if (request.name) requestedNames.add(request.name);
  }
}

/** True when any nested run, at any depth, has agno `tools` (agno's `_members_carry_tools`). */
export function membersCarryTools(run: AgentRun): boolean {
  const stack = [...(run.children ?? [])];
  const seen = new Set<AgentRun>();
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (seen.has(node)) continue;
    seen.add(node);
    if ((node.calls ?? node.executions ?? []).some(isAgnoExecution)) return true;
    stack.push(...(node.children ?? []));
  }
  return false;
}

/**
 * A call agno keeps as a `ToolExecution`: anything but a request-only call refused before it
 * could run. A paused call (`is_paused`) and a call rejected at an approval step (agno keeps
 * it with `confirmed=False` and `tool_call_error`) are executions.
 */
function isAgnoExecution(call: ToolExecution): boolean {
  return !call.requestOnly || call.status === 'paused' || call.request?.rejected === true;
}

/** agno `dict(t.tool_args or {})`: arguments that are not an object read as `{}`. */
export function argsAsDict(args: unknown): Record<string, unknown> {
  return args !== null && typeof args === 'object' && !Array.isArray(args)
    ? (args as Record<string, unknown>)
    : {};
}

/**
 * agno's argument match: every key of `spec` is present in `candidate` and equal
 * under Python `==`. A top-level subset; nested values must be entirely equal.
 */
export function specMatches(spec: Record<string, unknown>, candidate: Record<string, unknown>): boolean {
  for (const key of Object.keys(spec)) {
    if (!Object.hasOwn(candidate, key) || !pythonEquals(candidate[key], spec[key])) return false;
  }
  return true;
}
