import { NO_INPUT } from '../conventions/merge-llm-facts.js';
import { readString } from '../conventions/read-values.js';
import type { LlmFacts, MessageCall, RefusalFacts, ToolFacts } from '../conventions/span-facts.js';
import { argsPresent, readUnreadArgs } from '../conventions/unread-tool-values.js';
import { ATTR_TRACELOOP_ENTITY_NAME, ATTR_TRACELOOP_WORKFLOW_NAME } from '../semconv.js';
import type { AgentRun, SpanLike, ToolExecution, ToolRequest } from '../types.js';
import { mergeAttributes, withField } from '../util/merge-attributes.js';
import { historyEntry } from './build-history.js';
import { llmFacts, safeLlmInput, toolFacts } from './read-facts.js';
import {
  compareSpans,
  i32,
  NO_REFUSALS,
  type Node,
  type ProblemLog,
  type RunState,
  u8,
} from './trace-model.js';
import type { TreeWalk } from './walk-tree.js';

/** The runs of a trace: each run's working state, and the outermost runs. */
export interface AssignedRuns {
  states: RunState[];
  topLevel: AgentRun[];
}

/**
 * Phase 7 of reconstruction: create the runs (agent spans and implicit-run anchors) and give
 * each span's contribution (an execution, requests, history candidates, refusals) to the run
 * that owns it: the nearest enclosing run still open when the span started.
 */
export function assignRuns(
  nodes: Node[],
  walk: TreeWalk,
  traceId: string,
  log: ProblemLog,
  argsRead?: ReadonlySet<string>,
  prebuilt?: ReadonlyMap<string, AgentRun>,
): AssignedRuns {
  const n = nodes.length;
  const { order, visited, history, runAgent, toolBetween, implicit } = walk;
  // 7. Runs, and what each span contributes to the run that owns it.
  const stateOf: Array<RunState | undefined> = new Array(n);
  // The run span that owns each node (the node itself for run spans), and each run span's parent run span.
  const ctxRun = i32(3, n, -1);
  const parentRun = i32(4, n, -1);
  // A tool span lies between the node and the run span that owns it.
  const insideTool = u8(5, n);
  const states: RunState[] = [];
  const topLevel: AgentRun[] = [];
  for (let k = 0; k < visited; k++) {
    const i = order[k]!;
    const node = nodes[i]!;
    const p = node.parent;
    let cand = p === -1 ? -1 : ctxRun[p]!;
    // A span that starts after its agent span ended leaked out of it (agno keeps a member's context
    // current after the member returns): it belongs to the enclosing run that is still open.
    const linked = cand;
    while (cand !== -1 && runAgent[cand] === 1 && startsAfterEnd(node, nodes[cand]!)) cand = parentRun[cand]!;
    if (cand === -1 && linked !== -1) {
      // No enclosing run is open: not a leak but clocks that disagree (a child in another process
      // running ahead). The parent link is explicit, so the span stays with the run it names.
      cand = linked;
      if (node.role === 'tool' || node.role === 'llm')
        log.add(
          'clock_skew',
          `span ${node.id} starts after its run's span ${nodes[linked]!.id} ended; kept in that run (clock skew)`,
          node.id,
        );
    }
    const isRun = runAgent[i] === 1 || implicit[i] === 1;
    // OpenInference graphs: an agent with a node id but no parent node id is a graph root, a run of its
    // own, unless a delegating tool span sits between it and the enclosing agent (agent-as-tool).
    if (isRun && cand !== -1 && node.agent?.nodeId && !node.agent.parentNodeId && toolBetween[i] === 0)
      cand = -1;
    const parentState = cand === -1 ? undefined : stateOf[cand];
    let own = parentState;
    const built = isRun && prebuilt !== undefined ? prebuilt.get(node.id) : undefined;
    if (built !== undefined) {
      // A run rebuilt before from its own subtree (not among the nodes): it joins as it is.
      parentRun[i] = cand;
      ctxRun[i] = i;
      if (parentState) {
        built.parent = parentState.run;
        parentState.run.children.push(built);
      } else {
        delete built.parent;
        topLevel.push(built);
      }
      continue;
    }
    if (isRun) {
      parentRun[i] = cand;
      ctxRun[i] = i;
      own = createRun(node, i, implicit[i] === 1 && runAgent[i] === 0, parentState, traceId);
      stateOf[i] = own;
      states.push(own);
      if (parentState) parentState.run.children.push(own.run);
      else topLevel.push(own.run);
    } else {
      ctxRun[i] = cand;
      if (p !== -1 && (nodes[p]!.role === 'tool' || (ctxRun[p] !== p && insideTool[p] === 1)))
        insideTool[i] = 1;
    }
    if (!own) {
      if (node.role === 'tool' && history[i] === 0)
        log.add(
          'span_outside_runs',
          `tool span ${node.id} belongs to no agent run and is not counted`,
          node.id,
        );
      continue;
    }
    if (node.span.status.code === 2) own.ownError = true;
    const spanId = node.id;
    if (history[i] === 1) {
      const tool = node.role === 'tool' ? toolFacts(node) : undefined;
      if (tool) readUnreadArgs(tool);
      if (tool) own.history = add(own.history, historyEntry(tool, spanId, 'flag'));
      const llm = node.role === 'llm' ? llmFacts(node) : undefined;
      for (const call of llm?.requests ?? [])
        own.history = add(own.history, historyEntry(call, spanId, 'flag'));
      continue;
    }
    const tool = node.role === 'tool' ? toolFacts(node) : undefined;
    const llm = node.role === 'llm' && insideTool[i] === 0 ? llmFacts(node) : undefined;
    node.tool = undefined;
    node.llm = undefined;
    if (tool) {
      addExecution(own, node, tool, argsRead);
    } else if (llm) {
      // (An LLM called inside a tool's implementation asks for its own tools, not the run's.)
      const time = node.end ?? node.start;
      // The input side is read only now, one span at a time: long conversations repeat it in every model call.
      const adapter = node.adapter!;
      const input = safeLlmInput(adapter, node.span) ?? NO_INPUT;
      if (own.lastLlm === undefined && own.facts?.continuation)
        addContinuedRequests(own, llm, input.inputCalls, node);
      if (own.lastLlm === undefined || compareSpans(own.lastLlm, node) <= 0) own.lastLlm = node;
      for (let index = 0; index < llm.requests.length; index++) {
        const call = llm.requests[index]!;
        // A framework that repeats earlier requests in a later output (cumulative step outputs) must not double them.
        if (call.callId !== undefined) {
          if (own.requestIds.has(call.callId)) continue;
          addRequestId(own, call.callId);
        }
        const request: ToolRequest = { name: call.name, llmSpanId: spanId, index, time };
        if (call.callId !== undefined) request.callId = call.callId;
        if (call.args !== undefined) request.args = call.args;
        if (call.argsRaw !== undefined) request.argsRaw = call.argsRaw;
        if (call.argsError !== undefined) request.argsError = call.argsError;
        if (call.pending) request.pending = true;
        own.requests.push({
          request,
          llmStart: node.start,
          llmRank: node.rank,
          convention: llm.convention,
          usable: call.usable,
        });
      }
      for (const h of llm.hints ?? []) own.hints = add(own.hints, withField(h, 'spanId', spanId));
      for (const c of input.inputCalls) {
        // Inputs repeat the run's own earlier requests: those are decided already (not history).
        if (!c.fromHistory && c.callId !== undefined && own.requestIds.has(c.callId)) continue;
        own.inputCalls = add(own.inputCalls, withField(c, 'spanId', spanId));
      }
      // A result for a call that ran explains nothing; keep only what may explain a request-only call.
      for (const r of input.refusals) {
        if (r.callId === undefined || !executedIds(own).has(r.callId)) own.refusals = add(own.refusals, r);
      }
      for (const r of llm.refusals ?? NO_REFUSALS) own.refusals = add(own.refusals, r);
      if (llm.toolDefinitions && !own.llmDefinitions) own.llmDefinitions = llm.toolDefinitions;
    }
  }

  return { states, topLevel };
}

/**
 * A resumed run's first model input ends with the calls the paused run was waiting for:
 * they are this run's requests (executed now, or refused with the tool message as reason).
 */
function addContinuedRequests(st: RunState, llm: LlmFacts, calls: MessageCall[], node: Node): void {
  const flagged = new Set<string>();
  for (const c of calls) if (c.fromHistory && c.callId) flagged.add(c.callId);
  let index = 0;
  for (const c of calls) {
    if (c.fromHistory || (c.callId !== undefined && (flagged.has(c.callId) || st.requestIds.has(c.callId))))
      continue;
    if (c.callId !== undefined) addRequestId(st, c.callId);
    const request: ToolRequest = { name: c.name, llmSpanId: node.id, index: index++, time: node.start };
    if (c.callId !== undefined) request.callId = c.callId;
    if (c.args !== undefined) request.args = c.args;
    if (c.argsRaw !== undefined) request.argsRaw = c.argsRaw;
    if (c.argsError !== undefined) request.argsError = c.argsError;
    st.requests.push({
      request,
      llmStart: node.start,
      llmRank: node.rank,
      convention: llm.convention,
      usable: c.usable,
      continued: true,
    });
  }
}
function createRun(
  node: Node,
  index: number,
  isImplicit: boolean,
  parent: RunState | undefined,
  traceId: string,
): RunState {
  const span = node.span;
  const facts = isImplicit ? undefined : node.agent;
  const run: AgentRun = {
    agent: facts?.name ?? implicitName(span),
    traceId: span.traceId || traceId,
    spanId: node.id,
    implicit: isImplicit,
    children: [],
    // Placeholders for the key order: phases 9 and 10 give each run its own lists.
    executions: UNSET,
    requests: UNSET,
    calls: UNSET,
    history: UNSET,
    start: node.start,
    status: span.status.code,
    attributes: mergeAttributes(span.resource, span.attributes),
    hasErrorSpan: false,
  };
  if (facts?.agentId !== undefined) run.agentId = facts.agentId;
  if (parent) run.parent = parent.run;
  if (node.end !== undefined) run.end = node.end;
  if (facts?.input !== undefined) run.input = facts.input;
  if (facts?.output !== undefined) run.output = facts.output;
  if (facts?.toolDefinitions) run.toolDefinitions = facts.toolDefinitions;
  const st: RunState = {
    run,
    node: index,
    facts,
    executions: [],
    execNodes: [],
    unusable: NO_EXECUTIONS,
    unread: NO_UNREAD,
    executedIds: NO_IDS,
    executedCount: 0,
    aliases: NO_ALIASES,
    requests: [],
    requestIds: NO_IDS,
    hints: NONE,
    inputCalls: NONE,
    refusals: facts?.refusals ? [...facts.refusals] : NONE,
    history: NONE,
    ownError: false,
    lastLlm: undefined,
    llmDefinitions: undefined,
  };
  for (const h of facts?.history ?? []) st.history = add(st.history, withField(h, 'spanId', node.id));
  return st;
}
/** The implicit run is named after its outermost span (LangGraph names its root CHAIN after the agent). */
function implicitName(span: SpanLike): string {
  const a = span.attributes;
  return (
    readString(a[ATTR_TRACELOOP_ENTITY_NAME]) ??
    readString(a[ATTR_TRACELOOP_WORKFLOW_NAME]) ??
    (span.name || 'unknown')
  );
}
/**
 * Turns a tool span into an execution of the run (or, when it never ran, into a refusal).
 * Arguments left unread stay so unless `argsRead` names the tool (undefined: every tool): the
 * execution then has no `args` until `settleExecutions` reads them. A result left unread
 * stays so: the execution has no `result`.
 */
function addExecution(
  st: RunState,
  node: Node,
  f: ToolFacts,
  argsRead: ReadonlySet<string> | undefined,
): void {
  if (f.unread !== undefined && (f.notRun || argsRead === undefined || argsRead.has(f.name)))
    readUnreadArgs(f);
  if (f.notRun) {
    const text = f.errorMessage ?? 'rejected before the tool ran';
    const refusal: RefusalFacts = { name: f.name, text };
    if (f.guardRefused) refusal.notRunCall = notRunCall(st, node, f, text);
    if (f.callId !== undefined) refusal.callId = f.callId;
    st.refusals = add(st.refusals, refusal);
    return;
  }
  const unread = f.unread;
  const argsSource =
    f.args !== undefined || f.argsRaw !== undefined || (unread !== undefined && argsPresent(unread.args))
      ? 'span'
      : 'none';
  let exec: ToolExecution;
  if (
    f.callId !== undefined &&
    f.args !== undefined &&
    f.argsRaw === undefined &&
    f.argsError === undefined &&
    f.result !== undefined &&
    f.errorType === undefined &&
    f.errorMessage === undefined &&
    node.end !== undefined
  ) {
    // The usual execution in one literal, the same keys in the same order as below: added one by
    // one, the optional keys outgrow the literal's room and allocate a property store.
    exec = {
      name: f.name,
      argsSource,
      status: f.status,
      fromHistory: false,
      requestOnly: false,
      spanId: node.id,
      start: node.start,
      run: st.run,
      convention: f.convention,
      callId: f.callId,
      args: f.args,
      result: f.result,
      end: node.end,
    };
  } else {
    exec = {
      name: f.name,
      argsSource,
      status: f.status,
      fromHistory: false,
      requestOnly: false,
      spanId: node.id,
      start: node.start,
      run: st.run,
      convention: f.convention,
    };
    if (f.callId !== undefined) exec.callId = f.callId;
    if (f.args !== undefined) exec.args = f.args;
    if (f.argsRaw !== undefined) exec.argsRaw = f.argsRaw;
    if (f.argsError !== undefined) exec.argsError = f.argsError;
    if (f.result !== undefined) exec.result = f.result;
    if (f.errorType !== undefined) exec.errorType = f.errorType;
    if (f.errorMessage !== undefined) exec.errorMessage = f.errorMessage;
    if (node.end !== undefined) exec.end = node.end;
  }
  st.executions.push(exec);
  st.execNodes.push(node);
  if (unread !== undefined) {
    if (st.unread === NO_UNREAD) st.unread = [];
    st.unread.push(exec, f);
  }
  if (!f.usable) {
    if (st.unusable === NO_EXECUTIONS) st.unusable = new Set();
    st.unusable.add(exec);
  }
  if (f.aliases?.length) {
    if (st.aliases === NO_ALIASES) st.aliases = new Map();
    st.aliases.set(exec, f.aliases);
  }
}
/** The refused call a tool span that never ran stands for, should no model request take its refusal. */
function notRunCall(st: RunState, node: Node, f: ToolFacts, text: string): ToolExecution {
  const call: ToolExecution = {
    name: f.name,
    argsSource: f.args !== undefined || f.argsRaw !== undefined ? 'span' : 'none',
    status: 'refused',
    fromHistory: false,
    requestOnly: true,
    spanId: node.id,
    start: node.start,
    end: node.end ?? node.start,
    run: st.run,
    convention: f.convention,
    errorMessage: text,
  };
  if (f.callId !== undefined) call.callId = f.callId;
  if (f.args !== undefined) call.args = f.args;
  if (f.argsRaw !== undefined) call.argsRaw = f.argsRaw;
  if (f.argsError !== undefined) call.argsError = f.argsError;
  return call;
}
/**
 * Reads the arguments of the run's executions that were left unread, as `addExecution` would
 * have: reconstruction needs them when the trace joins executions to model requests or
 * weighs model inputs as history (results it never needs).
 */
export function settleExecutions(st: RunState): void {
  const unread = st.unread;
  if (unread === NO_UNREAD) return;
  st.unread = NO_UNREAD;
  for (let k = 0; k < unread.length; k += 2) {
    const exec = unread[k] as ToolExecution;
    const f = unread[k + 1] as ToolFacts;
    readUnreadArgs(f);
    if (f.args !== undefined) exec.args = f.args;
    if (f.argsRaw !== undefined) exec.argsRaw = f.argsRaw;
    if (f.argsError !== undefined) exec.argsError = f.argsError;
    if (!f.usable) {
      if (st.unusable === NO_EXECUTIONS) st.unusable = new Set();
      st.unusable.add(exec);
    }
  }
}
/** The empty list of a run that has none of these yet: never written (see `add`). */
const NONE: never[] = [];
/** `list` with `item` appended: a list of its own on the first item, so runs with none allocate none. */
function add<T>(list: T[], item: T): T[] {
  if (list === NONE) return [item];
  list.push(item);
  return list;
}
/** Never written: replaced by phases 9 and 10 before the run is returned. */
const UNSET: never[] = [];
// Most runs never write these (all arguments usable, no aliases, no requests): made on first write.
const NO_EXECUTIONS: Set<ToolExecution> = new Set();
const NO_ALIASES: Map<ToolExecution, string[]> = new Map();
const NO_IDS: Set<string> = new Set();
const NO_UNREAD: Array<ToolExecution | ToolFacts> = [];

/**
 * The call ids of the run's executions so far (in span order), brought up to date when asked:
 * only model inputs with tool results ask, so most runs never build the set.
 */
function executedIds(st: RunState): Set<string> {
  const executions = st.executions;
  for (let k = st.executedCount; k < executions.length; k++) {
    const id = executions[k]!.callId;
    if (id === undefined) continue;
    if (st.executedIds === NO_IDS) st.executedIds = new Set();
    st.executedIds.add(id);
  }
  st.executedCount = executions.length;
  return st.executedIds;
}
function addRequestId(st: RunState, callId: string): void {
  if (st.requestIds === NO_IDS) st.requestIds = new Set();
  st.requestIds.add(callId);
}

/**
 * True when `node` started after `agent` ended. OTel JS starts spans at whole `Date.now()`
 * milliseconds and ends them at start + a precise duration, so an agent span with a
 * whole-millisecond start may really end up to 1 ms later than recorded.
 */
function startsAfterEnd(node: Node, agent: Node): boolean {
  if (agent.end === undefined) return false;
  const slack = Number.isInteger(agent.start) ? 1 : 0;
  return node.start > agent.end + slack;
}
