import type { AgentRun, ReconstructedTrace, SpanLike } from '../types.js';
import { assignRuns, settleExecutions } from './assign-runs.js';
import { buildCalls } from './build-calls.js';
import { buildHistory, SeenCalls } from './build-history.js';
import { indexSpans } from './index-spans.js';
import { readFacts } from './read-facts.js';
import { reparentHandoffs } from './reparent-handoffs.js';
import type { SpanReading } from './trace-model.js';
import { byRunStart, push, type RunState, sortIfNeeded } from './trace-model.js';
import { walkTree } from './walk-tree.js';

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
 * Rebuilds the agent runs of one trace (docs/semantics.md): owning run = nearest agent
 * ancestor; implicit runs where tools have no agent; nested and handoff runs; requests
 * joined to executions; request-only calls; history kept apart. Linear in the number of
 * spans (plus sorting), iterative (no recursion), and never throws on bad input: what it
 * cannot read lands in `problems`. Each phase is a module of its own.
 *
 * Tool values a reading left unread (`readAhead` with `deferToolValues`): arguments are read
 * for the tools `argsRead` names, and for every tool when the trace's model calls carry
 * messages (requests, hints, input calls: joins and history compare arguments); the other
 * executions have no `args`. Results left unread are never read: no execution of theirs has
 * a `result`. With `argsRead`, agents' own input and output are not read either (`AgentRun.input`
 * and `output` stay unset: only judges and case matching read them, and judges declare no
 * `argsRead`). Without readings, every value is read.
 *
 * `prebuilt`: runs already rebuilt from their own subtrees, by span id. A run span among
 * `spans` with one (its subtree left out of `spans`) joins as that run, under the run that
 * owns its span, and is not rebuilt nor walked again (the processor judges a nested run from
 * its own spans and the runs below it so).
 */
export function reconstructTrace(
  spans: SpanLike[],
  readings?: ReadonlyArray<SpanReading | undefined>,
  argsRead?: ReadonlySet<string>,
  prebuilt?: ReadonlyMap<string, AgentRun>,
): ReconstructedTrace {
  // 1-3. Index spans, link parents, break cycles (`readings[i]`, from `readAhead`, spares re-reading `spans[i]`).
  const { traceId, log, nodes } = indexSpans(spans, readings);
  // 4. Read the spans that matter with the adapter that claimed them (with `argsRead`, no
  // scorer reads an agent's own input or output: they are left unread).
  readFacts(nodes, argsRead !== undefined);
  // 5-6. Order children; walk the tree once for history, agents and implicit-run anchors.
  const walk = walkTree(nodes);
  // 7. Runs, and what each span contributes to the run that owns it.
  const { states, topLevel } = assignRuns(nodes, walk, traceId, log, argsRead, prebuilt);
  if (argsRead !== undefined && carriesMessages(states)) for (const st of states) settleExecutions(st);
  // 8. Handoffs and team members: a run naming its source by graph.node.parent_id is its child.
  reparentHandoffs(states, topLevel);

  // 9. Executions, joins, request-only calls.
  for (const st of states) buildCalls(st);

  // 10. History: flagged spans, agent inputs, input messages matching nothing of this trace.
  const seen = new SeenCalls(states);
  for (const st of states) buildHistory(st, seen);

  // 11. Order nested runs, then hasErrorSpan bottom-up.
  sortIfNeeded(topLevel, byRunStart);
  // Each run starts from its own spans' status; only runs with nested runs need the walk.
  let nested = false;
  for (const st of states) {
    st.run.hasErrorSpan = st.ownError;
    if (st.run.children.length > 0) nested = true;
  }
  if (nested) orderNestedRuns(topLevel, prebuilt);

  return { traceId, runs: topLevel, problems: log.problems };
}

/** Whether some run has model requests, hints or input calls: joins and history then read arguments. */
function carriesMessages(states: RunState[]): boolean {
  for (const st of states)
    if (st.requests.length > 0 || st.hints.length > 0 || st.inputCalls.length > 0) return true;
  return false;
}

/**
 * Sorts nested runs and marks a run `hasErrorSpan` when one of its nested runs has it. Runs
 * `prebuilt` are final already: their subtrees are not walked again.
 */
function orderNestedRuns(topLevel: AgentRun[], prebuilt: ReadonlyMap<string, AgentRun> | undefined): void {
  const all: AgentRun[] = [];
  const stack = [...topLevel];
  while (stack.length > 0) {
    const run = stack.pop()!;
    all.push(run);
    if (run.children.length > 1) sortIfNeeded(run.children, byRunStart);
    for (const c of run.children) if (prebuilt === undefined || prebuilt.get(c.spanId) !== c) stack.push(c);
  }
  // Every run is reachable from the top level (handoffs never move a run under its own member),
  // and children come after their parent in `all`.
  for (let k = all.length - 1; k >= 0; k--) {
    const run = all[k]!;
    if (run.hasErrorSpan) continue;
    for (const c of run.children) if (c.hasErrorSpan) run.hasErrorSpan = true;
  }
}
