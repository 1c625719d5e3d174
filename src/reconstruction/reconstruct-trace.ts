import { classifySpan } from '../conventions/classify.js';
import { NO_INPUT } from '../conventions/merge-llm-facts.js';
import { readString, readTrue } from '../conventions/read-values.js';
import type {
  AgentFacts,
  ConventionAdapter,
  LlmFacts,
  MessageCall,
  RefusalFacts,
  SpanRole,
  ToolFacts,
} from '../conventions/span-facts.js';
import {
  ATTR_TOOLWATCH_FROM_HISTORY,
  ATTR_TRACELOOP_ENTITY_NAME,
  ATTR_TRACELOOP_WORKFLOW_NAME,
} from '../semconv.js';
import type {
  AgentRun,
  HistoryCall,
  Problem,
  ReconstructedTrace,
  SpanLike,
  ToolDefinition,
  ToolExecution,
  ToolRequest,
} from '../types.js';
import { mergeAttributes, withField } from '../util/merge-attributes.js';
import { canonicalArgs } from './canonical-args.js';

/** The OpenAI Agents bridge's synthetic trace root (the SDK's default workflow name). */
const AGENT_WORKFLOW = 'Agent workflow';
const NO_CHILDREN: readonly number[] = [];
const NO_REFUSALS: readonly RefusalFacts[] = [];

interface Node {
  span: SpanLike;
  id: string;
  parent: number;
  /** Undefined for leaves (most spans), to keep large traces light. */
  children: number[] | undefined;
  start: number;
  end: number | undefined;
  role: SpanRole;
  adapter: ConventionAdapter | undefined;
  agent?: AgentFacts | undefined;
  /** Facts of tool and LLM spans (output side), dropped once their run has taken them. */
  tool?: ToolFacts | undefined;
  llm?: LlmFacts | undefined;
  /** A tool span's call id (for ranks). */
  callId?: string | undefined;
  /** An LLM span asks for tool calls. */
  hasRequests?: boolean;
  /**
   * Causal position for spans that start in the same millisecond (OTel JS starts spans at
   * `Date.now()`): an LLM span ranks by how many tool calls its input already holds, a tool
   * span just after the LLM span that requested its call id. NaN when unknown.
   */
  rank: number;
}

interface PendingRequest {
  request: ToolRequest;
  llmStart: number;
  llmRank: number;
  convention: string;
  usable: boolean;
}

/** Per-run working state while the trace is read. */
interface RunState {
  run: AgentRun;
  node: number;
  facts: AgentFacts | undefined;
  executions: ToolExecution[];
  /** The tool span of each execution, parallel to `executions` (for same-millisecond ordering). */
  execNodes: Node[];
  /** Executions whose span arguments are missing, redacted or not an object. */
  unusable: Set<ToolExecution>;
  executedIds: Set<string>;
  aliases: Map<ToolExecution, string[]>;
  requests: PendingRequest[];
  requestIds: Set<string>;
  hints: Array<MessageCall & { spanId: string }>;
  inputCalls: Array<MessageCall & { spanId: string }>;
  refusals: RefusalFacts[];
  history: HistoryCall[];
  ownError: boolean;
  /** Span id of the last LLM span of the run, in span order. */
  lastLlm: Node | undefined;
  llmDefinitions: ToolDefinition[] | undefined;
}

/**
 * Groups spans by trace id (in order of first appearance) and reconstructs each trace.
 */
export function reconstructTraces(spans: SpanLike[]): ReconstructedTrace[] {
  const groups = new Map<string, SpanLike[]>();
  if (Array.isArray(spans)) {
    for (const span of spans) {
      const traceId = span && typeof span.traceId === 'string' ? span.traceId : '';
      push(groups, traceId, span);
    }
  }
  const out: ReconstructedTrace[] = [];
  for (const group of groups.values()) out.push(reconstructTrace(group));
  return out;
}

/**
 * Rebuilds the agent runs of one trace (semantics §1): owning run = nearest agent
 * ancestor; implicit runs where tools have no agent; nested and handoff runs; requests
 * joined to executions; request-only calls; history kept apart. Linear in the number of
 * spans (plus sorting), iterative (no recursion), and never throws on bad input: what it
 * cannot read lands in `problems`.
 */
export function reconstructTrace(spans: SpanLike[]): ReconstructedTrace {
  const list: unknown[] = Array.isArray(spans) ? spans : [];
  let traceId = '';
  for (const s of list) {
    const t = (s as SpanLike | null)?.traceId;
    if (typeof t === 'string' && t) {
      traceId = t;
      break;
    }
  }
  const log = new ProblemLog(traceId);
  const problems = log.problems;

  // 1. Index spans; normalise what a careless sender may get wrong.
  const nodes: Node[] = [];
  const byId = new Map<string, number>();
  let mixedReported = false;
  for (let i = 0; i < list.length; i++) {
    const span = normalise(list[i], i, log);
    if (!span) continue;
    if (span.traceId !== traceId && !mixedReported) {
      mixedReported = true;
      log.add(
        'mixed_trace',
        `spans of trace ${span.traceId || '(none)'} were passed with trace ${traceId}`,
        span.spanId,
      );
    }
    if (byId.has(span.spanId)) {
      log.add(
        'duplicate_span_id',
        `span id ${span.spanId} appears more than once; the first span is kept`,
        span.spanId,
      );
      continue;
    }
    const { role, adapter } = classifySpan(span);
    byId.set(span.spanId, nodes.length);
    nodes.push({
      span,
      id: span.spanId,
      parent: -1,
      children: undefined,
      start: span.startTime,
      end: span.endTime,
      role,
      adapter,
      rank: Number.NaN,
    });
  }
  const n = nodes.length;

  // 2. Parent links: orphans become roots.
  for (let i = 0; i < n; i++) {
    const node = nodes[i]!;
    const pid = node.span.parentSpanId;
    if (!pid) continue;
    const p = byId.get(pid);
    if (p === undefined) {
      log.add(
        'orphan_span',
        `parent ${pid} of span ${node.id} is missing; the span is treated as a root`,
        node.id,
      );
    } else if (p === i) {
      log.add('parent_cycle', `span ${node.id} is its own parent; the link is dropped`, node.id);
    } else {
      node.parent = p;
    }
  }

  // 3. Break parent cycles (each node is walked once: 0 new, 1 on the current path, 2 done).
  const state = u8(0, n);
  // A stack with its own length: truncating an array's length is a runtime call.
  const path = i32(0, n, 0);
  for (let i = 0; i < n; i++) {
    if (state[i] !== 0) continue;
    let length = 0;
    let cur = i;
    while (cur !== -1 && state[cur] === 0) {
      state[cur] = 1;
      path[length++] = cur;
      cur = nodes[cur]!.parent;
    }
    if (cur !== -1 && state[cur] === 1) {
      const last = path[length - 1]!;
      log.add(
        'parent_cycle',
        `parent links of span ${nodes[last]!.id} form a cycle; the link is dropped`,
        nodes[last]!.id,
      );
      nodes[last]!.parent = -1;
    }
    for (let k = 0; k < length; k++) state[path[k]!] = 2;
  }

  // 4. Read the spans that matter with the adapter that claimed them.
  const requestRank = new Map<string, number>();
  for (const node of nodes) {
    const adapter = node.adapter;
    if (!adapter) continue;
    if (node.role === 'tool') {
      const facts = toolFacts(node);
      if (facts) node.callId = facts.callId;
      else node.role = 'other';
      node.tool = facts;
    } else if (node.role === 'agent') {
      node.agent = safeAgent(adapter, node.span);
      if (!node.agent) node.role = 'other';
    } else if (node.role === 'llm') {
      const facts = llmFacts(node);
      if (!facts) continue;
      node.llm = facts;
      // Ranks for same-millisecond ties: LLM spans by conversation progress, tools after their request.
      node.rank = 2 * (facts.progress ?? 0);
      node.hasRequests = facts.requests.length > 0;
      for (const r of facts.requests) {
        if (r.callId !== undefined && !requestRank.has(r.callId)) requestRank.set(r.callId, node.rank);
      }
    }
  }
  if (requestRank.size > 0) {
    for (const node of nodes) {
      const id = node.role === 'tool' ? node.callId : undefined;
      const rank = id === undefined ? undefined : requestRank.get(id);
      if (rank !== undefined) node.rank = rank + 1;
    }
  }

  // 5. Children and roots in (start, rank, end, id) order.
  const roots: number[] = [];
  for (let i = 0; i < n; i++) {
    const p = nodes[i]!.parent;
    if (p === -1) roots.push(i);
    else {
      const parent = nodes[p]!;
      if (parent.children) parent.children.push(i);
      else parent.children = [i];
    }
  }
  sortIndexesIfNeeded(roots, nodes);
  for (const node of nodes)
    if (node.children && node.children.length > 1) sortIndexesIfNeeded(node.children, nodes);

  // 6. Pre-order walk: history flags, nearest agent ancestor, implicit-run anchors.
  const order: number[] = [];
  const history = u8(1, n);
  const runAgent = u8(2, n);
  const agentAnc = i32(1, n, -1);
  const anchor = i32(2, n, 0);
  // A tool span lies between the node and its nearest agent ancestor (agent-as-tool, delegation).
  const toolBetween = u8(3, n);
  {
    const stack: number[] = [];
    for (let r = roots.length - 1; r >= 0; r--) stack.push(roots[r]!);
    while (stack.length > 0) {
      const i = stack.pop()!;
      order.push(i);
      const node = nodes[i]!;
      const p = node.parent;
      history[i] =
        (p !== -1 && history[p] === 1) || readTrue(node.span.attributes[ATTR_TOOLWATCH_FROM_HISTORY]) ? 1 : 0;
      runAgent[i] = node.role === 'agent' && history[i] === 0 && !isWrapper(nodes, i) ? 1 : 0;
      if (p === -1) {
        anchor[i] = i;
      } else {
        agentAnc[i] = runAgent[p] === 1 ? p : agentAnc[p]!;
        toolBetween[i] = runAgent[p] === 0 && (nodes[p]!.role === 'tool' || toolBetween[p] === 1) ? 1 : 0;
        anchor[i] = nodes[p]!.role === 'tool' && node.role !== 'tool' ? i : anchor[p]!;
      }
      const children = node.children;
      if (children) for (let c = children.length - 1; c >= 0; c--) stack.push(children[c]!);
    }
  }
  const implicit = u8(4, n);
  for (let i = 0; i < n; i++) {
    if (history[i] === 1 || runAgent[i] === 1 || agentAnc[i] !== -1) continue;
    const node = nodes[i]!;
    if (node.role === 'tool' || (node.role === 'llm' && node.hasRequests === true)) implicit[anchor[i]!] = 1;
  }

  // 7. Runs, and what each span contributes to the run that owns it.
  const stateOf: Array<RunState | undefined> = new Array(n);
  // The run span that owns each node (the node itself for run spans), and each run span's parent run span.
  const ctxRun = i32(3, n, -1);
  const parentRun = i32(4, n, -1);
  // A tool span lies between the node and the run span that owns it.
  const insideTool = u8(5, n);
  const states: RunState[] = [];
  const topLevel: AgentRun[] = [];
  for (const i of order) {
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
      if (tool) own.history.push(historyEntry(tool, spanId, 'flag'));
      const llm = node.role === 'llm' ? llmFacts(node) : undefined;
      for (const call of llm?.requests ?? []) own.history.push(historyEntry(call, spanId, 'flag'));
      continue;
    }
    const tool = node.role === 'tool' ? toolFacts(node) : undefined;
    const llm = node.role === 'llm' && insideTool[i] === 0 ? llmFacts(node) : undefined;
    node.tool = undefined;
    node.llm = undefined;
    if (tool) {
      addExecution(own, node, tool);
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
          own.requestIds.add(call.callId);
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
      for (const h of llm.hints ?? []) own.hints.push(withField(h, 'spanId', spanId));
      for (const c of input.inputCalls) {
        // Inputs repeat the run's own earlier requests: those are decided already (not history).
        if (!c.fromHistory && c.callId !== undefined && own.requestIds.has(c.callId)) continue;
        own.inputCalls.push(withField(c, 'spanId', spanId));
      }
      // A result for a call that ran explains nothing; keep only what may explain a request-only call.
      for (const r of input.refusals) {
        if (r.callId === undefined || !own.executedIds.has(r.callId)) own.refusals.push(r);
      }
      for (const r of llm.refusals ?? NO_REFUSALS) own.refusals.push(r);
      if (llm.toolDefinitions && !own.llmDefinitions) own.llmDefinitions = llm.toolDefinitions;
    }
  }

  // 8. Handoffs and team members: a run naming its source by graph.node.parent_id is its child.
  reparentHandoffs(states, topLevel);

  // 9. Executions, joins, request-only calls.
  for (const st of states) buildCalls(st);

  // 10. History: flagged spans, agent inputs, input messages matching nothing of this trace.
  const seen = new SeenCalls(states);
  for (const st of states) buildHistory(st, seen);

  // 11. Order nested runs, then hasErrorSpan bottom-up.
  sortIfNeeded(topLevel, byRunStart);
  const all: AgentRun[] = [];
  const stack = [...topLevel];
  while (stack.length > 0) {
    const run = stack.pop()!;
    all.push(run);
    if (run.children.length > 1) sortIfNeeded(run.children, byRunStart);
    for (const c of run.children) stack.push(c);
  }
  // Every run is reachable from the top level (handoffs never move a run under its own member),
  // so each starts from its own spans' status; children come after their parent in `all`.
  for (const st of states) st.run.hasErrorSpan = st.ownError;
  for (let k = all.length - 1; k >= 0; k--) {
    const run = all[k]!;
    if (run.hasErrorSpan) continue;
    for (const c of run.children) if (c.hasErrorSpan) run.hasErrorSpan = true;
  }

  return { traceId, runs: topLevel, problems };
}

/**
 * Scratch arrays, reused from one call to the next (reconstruction is synchronous and never
 * re-entered): a typed array costs a backing-store allocation, and a trace needs eleven.
 * Traces above `POOL_LIMIT` spans get their own, so a huge trace does not pin its memory.
 */
const POOL_LIMIT = 4096;
const U8_POOL: Uint8Array[] = [];
const I32_POOL: Int32Array[] = [];

function u8(slot: number, n: number): Uint8Array {
  if (n > POOL_LIMIT) return new Uint8Array(n);
  let array = U8_POOL[slot];
  if (array === undefined || array.length < n) {
    array = new Uint8Array(Math.max(n, 64));
    U8_POOL[slot] = array;
  } else {
    array.fill(0, 0, n);
  }
  return array;
}

function i32(slot: number, n: number, value: number): Int32Array {
  if (n > POOL_LIMIT) return value === 0 ? new Int32Array(n) : new Int32Array(n).fill(value);
  let array = I32_POOL[slot];
  if (array === undefined || array.length < n) {
    array = new Int32Array(Math.max(n, 64));
    I32_POOL[slot] = array;
  }
  array.fill(value, 0, n);
  return array;
}

function isWrapper(nodes: Node[], i: number): boolean {
  const node = nodes[i]!;
  if (!node.agent?.wrapperCandidate) return false;
  if (node.span.name === AGENT_WORKFLOW) return true;
  // The bridge's root is followed by the SDK's task span of the same name.
  for (const c of node.children ?? NO_CHILDREN) {
    const child = nodes[c]!;
    if (child.role !== 'agent' && child.span.name === node.span.name) return true;
  }
  return false;
}

/** Sorts node indexes in span order; the comparator closure is built only when they are out of order. */
function sortIndexesIfNeeded(list: number[], nodes: Node[]): void {
  for (let i = 1; i < list.length; i++) {
    if (compareSpans(nodes[list[i - 1]!]!, nodes[list[i]!]!) > 0) {
      list.sort((a, b) => compareSpans(nodes[a]!, nodes[b]!));
      return;
    }
  }
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
    if (c.callId !== undefined) st.requestIds.add(c.callId);
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
    executions: [],
    requests: [],
    calls: [],
    history: [],
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
    unusable: new Set(),
    executedIds: new Set(),
    aliases: new Map(),
    requests: [],
    requestIds: new Set(),
    hints: [],
    inputCalls: [],
    refusals: facts?.refusals ? [...facts.refusals] : [],
    history: [],
    ownError: false,
    lastLlm: undefined,
    llmDefinitions: undefined,
  };
  for (const h of facts?.history ?? []) st.history.push(withField(h, 'spanId', node.id));
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

function reparentHandoffs(states: RunState[], topLevel: AgentRun[]): void {
  const byNodeId = new Map<string, RunState[]>();
  const byName = new Map<string, RunState[]>();
  for (const st of states) {
    const nodeId = st.facts?.nodeId;
    if (nodeId) push(byNodeId, nodeId, st);
    push(byName, st.run.agent, st);
  }
  for (const st of states) {
    const source = st.facts?.parentNodeId;
    if (!source) continue;
    const found = latestBefore(byNodeId.get(source), st) ?? latestBefore(byName.get(source), st);
    if (!found || found.run === st.run.parent) continue;
    const old = st.run.parent;
    const siblings = old ? old.children : topLevel;
    const at = siblings.indexOf(st.run);
    if (at !== -1) siblings.splice(at, 1);
    st.run.parent = found.run;
    found.run.children.push(st.run);
  }
}

/** The last candidate that started no later than `st` and is neither `st` nor inside it. */
function latestBefore(candidates: RunState[] | undefined, st: RunState): RunState | undefined {
  if (!candidates) return undefined;
  let best: RunState | undefined;
  for (const c of candidates) {
    if (c === st || c.run.start > st.run.start || isInside(c.run, st.run)) continue;
    if (!best || c.run.start >= best.run.start) best = c;
  }
  return best;
}

function isInside(run: AgentRun, ancestor: AgentRun): boolean {
  for (let r: AgentRun | undefined = run; r; r = r.parent) if (r === ancestor) return true;
  return false;
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** Turns a tool span into an execution of the run (or, when it never ran, into a refusal). */
function addExecution(st: RunState, node: Node, f: ToolFacts): void {
  if (f.notRun) {
    const refusal: RefusalFacts = { name: f.name, text: f.errorMessage ?? 'rejected before the tool ran' };
    if (f.callId !== undefined) refusal.callId = f.callId;
    st.refusals.push(refusal);
    return;
  }
  const exec: ToolExecution = {
    name: f.name,
    argsSource: f.args !== undefined || f.argsRaw !== undefined ? 'span' : 'none',
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
  st.executions.push(exec);
  st.execNodes.push(node);
  if (exec.callId !== undefined) st.executedIds.add(exec.callId);
  if (!f.usable) st.unusable.add(exec);
  if (f.aliases?.length) st.aliases.set(exec, f.aliases);
}

function buildCalls(st: RunState): void {
  const run = st.run;
  // Start, then causal rank (same-millisecond starts), then end, then span id.
  const count = st.executions.length;
  const order: number[] = new Array(count);
  for (let k = 0; k < count; k++) order[k] = k;
  sortIndexesIfNeeded(order, st.execNodes);
  const executions: ToolExecution[] = new Array(count);
  const execRanks: number[] = new Array(count);
  for (let k = 0; k < count; k++) {
    executions[k] = st.executions[order[k]!]!;
    execRanks[k] = st.execNodes[order[k]!]!.rank;
  }
  st.executions = executions;
  const aliases = st.aliases;
  run.executions = executions;
  const requests: ToolRequest[] = new Array(st.requests.length);
  for (let k = 0; k < requests.length; k++) requests[k] = st.requests[k]!.request;
  run.requests = requests;

  joinRequests(executions, st.requests, aliases);
  for (const exec of executions) {
    const req = exec.request;
    if (!req) continue;
    if (exec.callId === undefined && req.callId !== undefined) exec.callId = req.callId;
    // Span arguments missing, redacted or not an object; or `{}` where the model asked for more (ADK hides content as `{}`).
    const spanArgsUnusable = st.unusable.has(exec) || (isEmptyRecord(exec.args) && !isEmptyRecord(req.args));
    if (req.args !== undefined && spanArgsUnusable) {
      exec.args = req.args;
      exec.argsSource = 'request';
    }
  }
  lendHintIds(executions, st.hints);

  // Request-only calls: the model asked, nothing ran.
  const refusalById = new Map<string, RefusalFacts>();
  const refusalByName = new Map<string, RefusalFacts>();
  for (const r of st.refusals) {
    if (r.callId) refusalById.set(r.callId, r);
    else if (r.name) refusalByName.set(r.name, r);
  }
  const requestOnly: ToolExecution[] = [];
  const sortTimes: number[] = [];
  const sortRanks: number[] = [];
  const runStatus = st.run.status;
  // A request-only call sorts after the executions of the requests listed before it in the same output.
  let group: string | undefined;
  let lastExec = Number.NEGATIVE_INFINITY;
  for (const p of st.requests) {
    const req = p.request;
    if (req.llmSpanId !== group) {
      group = req.llmSpanId;
      lastExec = Number.NEGATIVE_INFINITY;
    }
    if (req.execution) {
      if (req.execution.start > lastExec) lastExec = req.execution.start;
      continue;
    }
    // From the LLM span's start: its end is unreliable where clocks start spans at whole milliseconds.
    sortTimes.push(Math.max(p.llmStart, lastExec));
    sortRanks.push(p.llmRank + 1);
    const refusal = (req.callId ? refusalById.get(req.callId) : undefined) ?? refusalByName.get(req.name);
    if (refusal && !refusal.pending) req.refusal = refusal.text;
    // Asked for in the run's last model output, never answered, and the run did not fail:
    // the framework stopped to wait (agno HITL pause, AI SDK approval request).
    if (refusal?.pending || (!refusal && req.llmSpanId === st.lastLlm?.id && runStatus !== 2))
      req.pending = true;
    const call: ToolExecution = {
      name: req.name,
      argsSource: req.args !== undefined ? 'request' : 'none',
      status: req.pending ? 'paused' : 'refused',
      fromHistory: false,
      requestOnly: true,
      spanId: req.llmSpanId,
      start: req.time,
      end: req.time,
      run,
      request: req,
      convention: p.convention,
    };
    if (req.callId !== undefined) call.callId = req.callId;
    if (req.args !== undefined) call.args = req.args;
    if (req.argsRaw !== undefined) call.argsRaw = req.argsRaw;
    if (req.argsError !== undefined) call.argsError = req.argsError;
    if (req.refusal !== undefined) call.errorMessage = req.refusal;
    requestOnly.push(call);
  }
  run.calls = mergeByTime(executions, execRanks, requestOnly, sortTimes, sortRanks);
  if (!run.toolDefinitions && st.llmDefinitions) run.toolDefinitions = st.llmDefinitions;
}

/**
 * Joins requests to executions: by call id; then, where one side has no id, by name and
 * canonical arguments; then by order among same-named calls.
 */
function joinRequests(
  executions: ToolExecution[],
  pending: PendingRequest[],
  aliases: Map<ToolExecution, string[]>,
): void {
  if (pending.length === 0 || executions.length === 0) return;

  const byId = new Map<string, ToolRequest>();
  for (const p of pending) {
    const id = p.request.callId;
    if (id !== undefined && !byId.has(id)) byId.set(id, p.request);
  }
  for (const exec of executions) {
    if (exec.callId === undefined) continue;
    const req = byId.get(exec.callId);
    if (req && !req.execution)
      link(
        exec,
        req,
        req.name !== exec.name && namesOf(exec, aliases).includes(req.name) ? req.name : undefined,
      );
  }

  // Name + canonical arguments, only where ids cannot disagree. A request whose only
  // argument is a string also answers to that string (OpenInference unwraps it: `input.value = "Paris"`).
  const anyByKey = new Map<string, { list: ToolRequest[]; next: number }>();
  const noIdByKey = new Map<string, { list: ToolRequest[]; next: number }>();
  for (const p of pending) {
    const r = p.request;
    if (r.execution || r.args === undefined) continue;
    const keys = [callKey(r.name, r.args)];
    const single = singleString(r.args);
    if (single !== undefined) keys.push(callKey(r.name, single));
    for (const key of keys) {
      pushQueue(anyByKey, key, r);
      if (r.callId === undefined) pushQueue(noIdByKey, key, r);
    }
  }
  if (anyByKey.size > 0) {
    for (const exec of executions) {
      if (exec.request || exec.args === undefined) continue;
      const queues = exec.callId === undefined ? anyByKey : noIdByKey;
      for (const name of namesOf(exec, aliases)) {
        const q = queues.get(callKey(name, exec.args));
        const req = q ? next(q) : undefined;
        if (req) {
          link(exec, req, name !== exec.name ? name : undefined);
          break;
        }
      }
    }
  }

  // Order: within the latest LLM output that started before the execution, the first unjoined same-named request.
  const byName = new Map<string, SameNameQueue>();
  const noIdByName = new Map<string, SameNameQueue>();
  for (const p of pending) {
    const r = p.request;
    if (r.execution) continue;
    queue(byName, r.name).add(r, p.llmStart, p.llmRank);
    if (r.callId === undefined) queue(noIdByName, r.name).add(r, p.llmStart, p.llmRank);
  }
  for (const q of byName.values()) q.seal();
  for (const q of noIdByName.values()) q.seal();
  for (const exec of executions) {
    if (exec.request) continue;
    const queues = exec.callId === undefined ? byName : noIdByName;
    for (const name of namesOf(exec, aliases)) {
      const req = queues.get(name)?.take(exec.start);
      if (req) {
        link(exec, req, name !== exec.name ? name : undefined);
        break;
      }
    }
  }
}

function link(exec: ToolExecution, req: ToolRequest, name?: string): void {
  exec.request = req;
  req.execution = exec;
  if (name !== undefined) exec.name = name;
}

function namesOf(exec: ToolExecution, aliases: Map<ToolExecution, string[]>): string[] {
  const extra = aliases.get(exec);
  return extra ? [exec.name, ...extra] : [exec.name];
}

function queue(map: Map<string, SameNameQueue>, name: string): SameNameQueue {
  let q = map.get(name);
  if (!q) {
    q = new SameNameQueue();
    map.set(name, q);
  }
  return q;
}

/**
 * Same-named requests grouped by LLM output. `take(t)` must be called with non-decreasing
 * times; it prefers the latest output that started by `t` (the one the execution answers),
 * then the earliest output with anything left. Amortised constant time per call.
 */
class SameNameQueue {
  private readonly _groups: Array<{
    start: number;
    rank: number;
    llm: string;
    list: ToolRequest[];
    next: number;
  }> = [];
  private readonly _stack: number[] = [];
  private _eligible = 0;
  private _first = 0;

  add(r: ToolRequest, llmStart: number, llmRank: number): void {
    const last = this._groups[this._groups.length - 1];
    if (last && last.llm === r.llmSpanId) last.list.push(r);
    else this._groups.push({ start: llmStart, rank: llmRank, llm: r.llmSpanId, list: [r], next: 0 });
  }

  seal(): void {
    sortIfNeeded(this._groups, (a, b) => a.start - b.start || a.rank - b.rank || 0);
  }

  take(t: number): ToolRequest | undefined {
    const groups = this._groups;
    while (this._eligible < groups.length && groups[this._eligible]!.start <= t)
      this._stack.push(this._eligible++);
    while (this._stack.length > 0) {
      const r = next(groups[this._stack[this._stack.length - 1]!]!);
      if (r) return r;
      this._stack.pop();
    }
    while (this._first < groups.length) {
      const r = next(groups[this._first]!);
      if (r) return r;
      this._first++;
    }
    return undefined;
  }
}

function pushQueue(
  map: Map<string, { list: ToolRequest[]; next: number }>,
  key: string,
  r: ToolRequest,
): void {
  const q = map.get(key);
  if (q) q.list.push(r);
  else map.set(key, { list: [r], next: 0 });
}

function singleString(args: unknown): string | undefined {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return undefined;
  let only: unknown;
  let count = 0;
  for (const key in args) {
    if (++count > 1) return undefined;
    only = (args as Record<string, unknown>)[key];
  }
  return typeof only === 'string' ? only : undefined;
}

function next(group: { list: ToolRequest[]; next: number }): ToolRequest | undefined {
  while (group.next < group.list.length && group.list[group.next]!.execution) group.next++;
  return group.list[group.next];
}

/** Mastra 0.24 keeps call ids only in chunk/step outputs: lend them to executions that lack one. */
function lendHintIds(executions: ToolExecution[], hints: Array<MessageCall & { spanId: string }>): void {
  if (hints.length === 0) return;
  const used = new Set<string>();
  for (const e of executions) if (e.callId) used.add(e.callId);
  const byKey = new Map<string, string[]>();
  const byName = new Map<string, string[]>();
  for (const h of hints) {
    if (!h.callId || used.has(h.callId)) continue;
    if (h.args !== undefined) push(byKey, callKey(h.name, h.args), h.callId);
    push(byName, h.name, h.callId);
  }
  const take = (list: string[] | undefined): string | undefined => {
    if (!list) return undefined;
    for (const id of list) if (!used.has(id)) return id;
    return undefined;
  };
  for (const e of executions) {
    if (e.callId) continue;
    const id =
      (e.args !== undefined ? take(byKey.get(callKey(e.name, e.args))) : undefined) ??
      take(byName.get(e.name));
    if (id) {
      e.callId = id;
      used.add(id);
    }
  }
}

/** Call ids and (name, canonical args) keys of every execution and request of the trace, built on first use. */
class SeenCalls {
  private _ids: Set<string> | undefined;
  private _keys: Set<string> | undefined;

  constructor(private readonly _states: RunState[]) {}

  hasId(id: string): boolean {
    if (!this._ids) {
      this._ids = new Set();
      for (const st of this._states) {
        for (const e of st.run.executions) if (e.callId) this._ids.add(e.callId);
        for (const r of st.run.requests) if (r.callId) this._ids.add(r.callId);
      }
    }
    return this._ids.has(id);
  }

  hasKey(key: string): boolean {
    if (!this._keys) {
      this._keys = new Set();
      for (const st of this._states) {
        for (const e of st.run.executions) this._keys.add(callKey(e.name, e.args));
        for (const r of st.run.requests) this._keys.add(callKey(r.name, r.args));
      }
    }
    return this._keys.has(key);
  }
}

function buildHistory(st: RunState, seen: SeenCalls): void {
  const run = st.run;
  const out: HistoryCall[] = [];
  if (st.history.length === 0 && st.inputCalls.length === 0) {
    run.history = out;
    return;
  }
  const kept = new Set<string>();
  for (const h of st.history) keep(out, kept, h, keyOf(h));
  if (st.inputCalls.length === 0) {
    run.history = out;
    return;
  }
  for (const c of st.inputCalls)
    if (c.fromHistory) keep(out, kept, historyEntry(c, c.spanId, 'part_flag'), keyOf(c));
  // Every LLM input repeats the conversation so far: decide each distinct call once.
  const decided = new Set<string>();
  for (const c of st.inputCalls) {
    if (c.fromHistory) continue;
    const own = keyOf(c);
    if (decided.has(own)) continue;
    decided.add(own);
    if (c.callId !== undefined && seen.hasId(c.callId)) continue;
    if (seen.hasKey(callKey(c.name, c.args))) continue;
    keep(out, kept, historyEntry(c, c.spanId, 'input_messages'), own);
  }
  run.history = out;
}

function keep(out: HistoryCall[], kept: Set<string>, h: HistoryCall, key: string): void {
  if (kept.has(key)) return;
  kept.add(key);
  out.push(h);
}

function keyOf(c: { name: string; callId?: string | undefined; args?: unknown }): string {
  return c.callId ? 'id:' + c.callId : 'key:' + callKey(c.name, c.args);
}

function historyEntry(
  call: { name: string; callId?: string | undefined; args?: unknown },
  spanId: string,
  reason: HistoryCall['reason'],
): HistoryCall {
  const h: HistoryCall = { name: call.name, spanId, reason };
  if (call.callId !== undefined) h.callId = call.callId;
  if (call.args !== undefined) h.args = call.args;
  return h;
}

function callKey(name: string, args: unknown): string {
  return name + '\u0000' + canonicalArgs(args);
}

function isEmptyRecord(v: unknown): boolean {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  for (const _ in v) return false;
  return true;
}

/** Executions and request-only calls by (time, causal rank); an execution goes first on a tie. */
function mergeByTime(
  executions: ToolExecution[],
  execRanks: number[],
  requestOnly: ToolExecution[],
  times: number[],
  ranks: number[],
): ToolExecution[] {
  if (requestOnly.length === 0) return executions.slice();
  const order = requestOnly.map((_, k) => k);
  sortIfNeeded(order, (a, b) =>
    before(times[a]!, ranks[a]!, times[b]!, ranks[b]!)
      ? before(times[b]!, ranks[b]!, times[a]!, ranks[a]!)
        ? a - b
        : -1
      : 1,
  );
  const out: ToolExecution[] = [];
  let i = 0;
  let j = 0;
  while (i < executions.length || j < order.length) {
    const e = executions[i];
    const k = order[j];
    if (k === undefined || (e !== undefined && before(e.start, execRanks[i]!, times[k]!, ranks[k]!))) {
      out.push(e!);
      i++;
    } else {
      out.push(requestOnly[k]!);
      j++;
    }
  }
  return out;
}

function before(t1: number, r1: number, t2: number, r2: number): boolean {
  return t1 < t2 || (t1 === t2 && (Number.isNaN(r1) || Number.isNaN(r2) || r1 <= r2));
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

function compareSpans(a: Node, b: Node): number {
  if (a.start !== b.start) return a.start - b.start;
  if (a.rank !== b.rank && !Number.isNaN(a.rank) && !Number.isNaN(b.rank)) return a.rank - b.rank;
  const ae = a.end ?? Number.POSITIVE_INFINITY;
  const be = b.end ?? Number.POSITIVE_INFINITY;
  if (ae !== be) return ae < be ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function byRunStart(a: AgentRun, b: AgentRun): number {
  if (a.start !== b.start) return a.start - b.start;
  return a.spanId < b.spanId ? -1 : a.spanId > b.spanId ? 1 : 0;
}

/** Spans mostly arrive in start order: check in linear time before paying for a sort. */
function sortIfNeeded<T>(list: T[], compare: (a: T, b: T) => number): void {
  for (let i = 1; i < list.length; i++) {
    if (compare(list[i - 1]!, list[i]!) > 0) {
      list.sort(compare);
      return;
    }
  }
}

function toolFacts(node: Node): ToolFacts | undefined {
  if (node.tool) return node.tool;
  const adapter = node.adapter;
  if (!adapter) return undefined;
  try {
    return adapter.tool(node.span);
  } catch {
    return undefined;
  }
}

function llmFacts(node: Node): LlmFacts | undefined {
  if (node.llm) return node.llm;
  const adapter = node.adapter;
  if (!adapter) return undefined;
  try {
    return adapter.llmOutput(node.span);
  } catch {
    return undefined;
  }
}

// Adapter calls that may throw are wrapped in module functions, not closures: they run per span.
function safeAgent(adapter: ConventionAdapter, span: SpanLike): AgentFacts | undefined {
  try {
    return adapter.agent(span);
  } catch {
    return undefined;
  }
}

function safeLlmInput(
  adapter: ConventionAdapter,
  span: SpanLike,
): ReturnType<ConventionAdapter['llmInput']> | undefined {
  try {
    return adapter.llmInput(span);
  } catch {
    return undefined;
  }
}

/** The problems of one trace: a class rather than a closure, built once per reconstruction. */
class ProblemLog {
  readonly problems: Problem[] = [];
  constructor(private readonly _traceId: string) {}

  add(code: string, message: string, spanId?: string): void {
    const p: Problem = { code, message };
    if (this._traceId) p.traceId = this._traceId;
    if (spanId) p.spanId = spanId;
    this.problems.push(p);
  }
}

/** Every check of `normalise` passes (no fix, no problem). */
function isWellFormed(s: Partial<SpanLike>): boolean {
  const a = s.attributes;
  const code = s.status?.code;
  const r = s.resource;
  return (
    typeof s.spanId === 'string' &&
    s.spanId !== '' &&
    typeof s.traceId === 'string' &&
    typeof s.name === 'string' &&
    typeof a === 'object' &&
    a !== null &&
    !Array.isArray(a) &&
    Array.isArray(s.events) &&
    typeof s.startTime === 'number' &&
    Number.isFinite(s.startTime) &&
    (s.endTime === undefined || (typeof s.endTime === 'number' && Number.isFinite(s.endTime))) &&
    (code === 0 || code === 1 || code === 2) &&
    (s.parentSpanId === undefined || typeof s.parentSpanId === 'string') &&
    s.kind !== undefined &&
    (r === undefined || (typeof r === 'object' && r !== null && !Array.isArray(r)))
  );
}

/**
 * A span with every field reconstruction reads in a usable type, or undefined for
 * something that is not a span at all. Fixes are recorded as problems.
 */
function normalise(value: unknown, index: number, log: ProblemLog): SpanLike | undefined {
  if (typeof value !== 'object' || value === null) {
    log.add('span_invalid', `item ${index} is not a span`);
    return undefined;
  }
  const s = value as Partial<SpanLike>;
  // Spans from the processor and the OTLP reader are well formed: check before building the fixer.
  if (isWellFormed(s)) return s as SpanLike;
  let span = s as SpanLike;
  const fix = (patch: Partial<SpanLike>): void => {
    if (span === s) span = { ...s } as SpanLike;
    Object.assign(span, patch);
  };
  if (typeof s.spanId !== 'string' || s.spanId === '') {
    fix({ spanId: `missing-span-id-${index}` });
    log.add(
      'span_missing_id',
      `span ${index} ("${String(s.name ?? '')}") has no span id; given ${span.spanId}`,
      span.spanId,
    );
  }
  if (typeof s.traceId !== 'string') fix({ traceId: '' });
  if (typeof s.name !== 'string') {
    fix({ name: '' });
    log.add('span_missing_name', `span ${span.spanId} has no name`, span.spanId);
  }
  if (typeof s.attributes !== 'object' || s.attributes === null || Array.isArray(s.attributes)) {
    if (s.attributes !== undefined)
      log.add('attributes_invalid', `span ${span.spanId} has unreadable attributes`, span.spanId);
    fix({ attributes: {} });
  }
  if (!Array.isArray(s.events)) fix({ events: [] });
  if (typeof s.startTime !== 'number' || !Number.isFinite(s.startTime)) {
    log.add('span_missing_start', `span ${span.spanId} has no start time`, span.spanId);
    fix({ startTime: 0 });
  }
  if (s.endTime !== undefined && (typeof s.endTime !== 'number' || !Number.isFinite(s.endTime))) {
    fix({ endTime: undefined });
  }
  const code = s.status?.code;
  if (code !== 0 && code !== 1 && code !== 2) fix({ status: { code: 0 } });
  if (typeof s.parentSpanId !== 'string' && s.parentSpanId !== undefined) fix({ parentSpanId: undefined });
  if (span.kind === undefined) fix({ kind: 0 });
  if (
    s.resource !== undefined &&
    (typeof s.resource !== 'object' || s.resource === null || Array.isArray(s.resource))
  ) {
    fix({ resource: undefined });
  }
  return span;
}
