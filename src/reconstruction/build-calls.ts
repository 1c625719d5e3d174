import type { MessageCall, RefusalFacts } from '../conventions/span-facts.js';
import type { ToolExecution, ToolRequest } from '../types.js';
import {
  callKey,
  compareSpans,
  type Node,
  type PendingRequest,
  push,
  type RunState,
  sortIfNeeded,
  sortIndexesIfNeeded,
} from './trace-model.js';

/** Read only, never written: the refusal lookups of a run that has nothing to look up. */
const NO_REFUSALS: ReadonlyMap<string, RefusalFacts> = new Map();

/**
 * Phase 9 of reconstruction: a run's executions in order, requests joined to them (by call
 * id, then name and canonical arguments, then order), and request-only calls (refused,
 * pending), merged into `calls`.
 */
export function buildCalls(st: RunState): void {
  const run = st.run;
  // Start, then causal rank (same-millisecond starts), then end, then span id.
  const execNodes = st.execNodes;
  let executions = st.executions;
  let execRanks: number[] | undefined;
  if (!inSpanOrder(execNodes)) {
    const count = executions.length;
    const order: number[] = new Array(count);
    for (let k = 0; k < count; k++) order[k] = k;
    sortIndexesIfNeeded(order, execNodes);
    const sorted: ToolExecution[] = new Array(count);
    execRanks = new Array(count);
    for (let k = 0; k < count; k++) {
      sorted[k] = executions[order[k]!]!;
      execRanks[k] = execNodes[order[k]!]!.rank;
    }
    executions = sorted;
    st.executions = executions;
  }
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
  // Most runs have no refusal to look up (made only when some request could use them).
  const lookUp = st.refusals.length > 0 && st.requests.length > 0;
  let refusalById = NO_REFUSALS;
  let refusalByName = NO_REFUSALS;
  if (lookUp) {
    const byId = new Map<string, RefusalFacts>();
    const byName = new Map<string, RefusalFacts>();
    for (const r of st.refusals) {
      if (r.callId) byId.set(r.callId, r);
      else if (r.name) byName.set(r.name, r);
    }
    refusalById = byId;
    refusalByName = byName;
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
    if (refusal && !refusal.pending) {
      req.refusal = refusal.text;
      // Rejected at an approval step: a failed execution to agno, not a call refused before it ran.
      if (refusal.rejected || (p.continued && refusal.error)) req.rejected = true;
    }
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
  addGuardRefusals(st, requestOnly, sortTimes, sortRanks);
  run.calls =
    requestOnly.length === 0
      ? executions.slice()
      : mergeByTime(executions, execRanks ?? ranksOf(execNodes), requestOnly, sortTimes, sortRanks);
  if (!run.toolDefinitions && st.llmDefinitions) run.toolDefinitions = st.llmDefinitions;
}
/**
 * Calls a guard refused whose model request was not recorded: a request-only call of the
 * run each, from the refused tool span. A refused span stands for the unanswered request with
 * its call id, else for one unanswered request of its tool; only when there is none is it a
 * call of its own (so a refusal the model's next input also shows is not counted twice).
 */
function addGuardRefusals(
  st: RunState,
  requestOnly: ToolExecution[],
  times: number[],
  ranks: number[],
): void {
  let unanswered: Map<string, number> | undefined;
  let ids: Set<string> | undefined;
  for (const r of st.refusals) {
    const call = r.notRunCall;
    if (call === undefined) continue;
    if (unanswered === undefined) {
      unanswered = new Map();
      ids = new Set();
      for (const p of st.requests) {
        const req = p.request;
        if (req.execution) continue;
        if (req.callId !== undefined) ids.add(req.callId);
        unanswered.set(req.name, (unanswered.get(req.name) ?? 0) + 1);
      }
    }
    if (call.callId !== undefined && ids!.has(call.callId)) continue;
    const left = unanswered.get(call.name) ?? 0;
    if (call.callId === undefined && left > 0) {
      unanswered.set(call.name, left - 1);
      continue;
    }
    requestOnly.push(call);
    times.push(call.start);
    ranks.push(Number.NaN);
  }
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

  // Nothing left to join (every request answered by its call id, the usual case): no queues to build.
  let open = false;
  for (const p of pending) if (!p.request.execution) open = true;
  if (!open) return;

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
/** True when the nodes are already in span order (the usual case: spans arrive as they started). */
function inSpanOrder(nodes: Node[]): boolean {
  for (let i = 1; i < nodes.length; i++) if (compareSpans(nodes[i - 1]!, nodes[i]!) > 0) return false;
  return true;
}
function ranksOf(nodes: Node[]): number[] {
  const out: number[] = new Array(nodes.length);
  for (let k = 0; k < nodes.length; k++) out[k] = nodes[k]!.rank;
  return out;
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
