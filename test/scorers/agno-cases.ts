/**
 * agno's test cases as data, and two ways to feed it to the agno scorers:
 *
 * - `agnoEvidenceOf(node)`: what agno itself reads from the `RunOutput` (`tools`, non-history
 *   message requests), for the pure rule functions;
 * - `traceOf(node)`: the same situation as spans (GenAI semconv via TraceBuilder), to run
 *   through decoding and reconstruction like production data.
 *
 * Trace shape per call state: `ok`/`hitl-approved` → tool span OK; `err` → tool span ERROR;
 * `hitl-rejected` → tool span with decision outcome `deny` (refused); `paused` → tool span
 * with `toolwatch.tool.status=paused`. Requests become an LLM span whose output asks for
 * the calls, followed later by a final model turn; a requested call with no tool span is
 * request-only (refused). History requests are tool-call parts in an LLM span's input
 * messages.
 */
import { spansFromOtlpJson } from '../../src/conventions/from-otlp-json.js';
import { reconstructTraces } from '../../src/reconstruction/reconstruct-trace.js';
import type { AgnoEvidence, AgnoExecution } from '../../src/scorers/agno-evidence.js';
import type { AgentRun, Problem } from '../../src/types.js';
import { type SpanNode, TraceBuilder } from '../helpers/trace-builder.js';

export type CallState = 'ok' | 'err' | 'paused' | 'hitl-approved' | 'hitl-rejected' | 'explicit-ok';

export interface AgnoCall {
  name: string;
  args?: Record<string, unknown>;
  state?: CallState;
}

export interface AgnoNode {
  kind?: 'agent' | 'team';
  name?: string;
  /** `RunOutput.tools`; `null` = None. */
  tools?: Array<AgnoCall | string> | null;
  /** Assistant messages of this turn: each inner list is one message's `tool_calls` names. */
  requests?: string[][];
  /** Requests in `from_history=True` messages. */
  historyRequests?: string[];
  members?: AgnoNode[];
}

export function call(name: string, state: CallState = 'ok', args?: Record<string, unknown>): AgnoCall {
  return { name, state, ...(args ? { args } : {}) };
}

function norm(c: AgnoCall | string): AgnoCall {
  return typeof c === 'string' ? { name: c, state: 'ok' } : c;
}

/** What agno reads: `tools` (+ members depth-first when `members`), non-history requests. */
export function agnoEvidenceOf(node: AgnoNode, scope: 'members' | 'self' = 'members'): AgnoEvidence {
  const executions: AgnoExecution[] = [];
  const requestedNames = new Set<string>();
  const visit = (n: AgnoNode) => {
    for (const raw of n.tools ?? []) {
      const c = norm(raw);
      executions.push({
        name: c.name,
        error: c.state === 'err' || c.state === 'hitl-rejected',
        paused: c.state === 'paused',
        args: c.args,
      });
    }
    for (const msg of n.requests ?? []) for (const r of msg) requestedNames.add(r);
    if (scope === 'members') for (const m of n.members ?? []) visit(m);
  };
  visit(node);
  return { executions, requestedNames };
}

/** The same situation as an OTLP/JSON trace. */
export function traceOf(node: AgnoNode): { builder: TraceBuilder; otlp: unknown } {
  const builder = new TraceBuilder();
  let ids = 0;
  const emit = (span: SpanNode, n: AgnoNode) => {
    const tools = (n.tools ?? []).map(norm);
    const idFor = new Map<AgnoCall, string>();
    for (const c of tools) idFor.set(c, `call_${++ids}`);
    // History replayed into the first model call's input.
    if (n.historyRequests?.length) {
      span.llm({
        inputMessages: [
          {
            role: 'assistant',
            parts: n.historyRequests.map((name, i) => ({ type: 'tool_call', id: `hist_${ids}_${i}`, name })),
          },
        ],
      });
    }
    // Requests name calls; a request joins the first unjoined tool of that name (same id).
    const unjoined = [...tools];
    for (const msg of n.requests ?? []) {
      span.llm({
        toolCalls: msg.map((name) => {
          const i = unjoined.findIndex((c) => c.name === name);
          if (i < 0) return { name, id: `call_${++ids}` };
          const [c] = unjoined.splice(i, 1);
          return { name, id: idFor.get(c!)!, ...(c!.args ? { args: c!.args } : {}) };
        }),
      });
    }
    for (const c of tools) {
      const state = c.state ?? 'ok';
      span.tool(c.name, {
        id: idFor.get(c)!,
        ...(c.args ? { args: c.args } : {}),
        status:
          state === 'err'
            ? 'error'
            : state === 'hitl-rejected'
              ? 'refused'
              : state === 'paused'
                ? 'paused'
                : 'ok',
      });
    }
    for (const m of n.members ?? [])
      emit(span.agent(m.name ?? (m.kind === 'team' ? 'member-team' : 'member')), m);
    // agno calls the model again after tool results and refusals (tool-call limit, unknown
    // tool); only a paused run ends on a model turn whose calls never ran.
    if (n.requests?.length) span.llm();
  };
  const root = builder.agent(node.name ?? (node.kind === 'team' ? 'team' : 'agent'));
  emit(root, node);
  return { builder, otlp: builder.toOtlp() };
}

/** Decodes and reconstructs `traceOf(node)`; returns the outermost run. */
export function runOf(node: AgnoNode): AgentRun {
  const { otlp } = traceOf(node);
  const problems: Problem[] = [];
  const traces = reconstructTraces(spansFromOtlpJson(otlp, problems));
  if (traces.length !== 1 || traces[0]!.runs.length !== 1) {
    throw new Error(
      `expected one trace with one root run, got ${JSON.stringify(traces.map((t) => t.runs.length))}`,
    );
  }
  return traces[0]!.runs[0]!;
}
