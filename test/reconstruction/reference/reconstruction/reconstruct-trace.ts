import type { AgentRun, ReconstructedTrace, SpanLike } from '../../../../src/types.js';
import { assignRuns } from './assign-runs.js';
import { buildCalls } from './build-calls.js';
import { buildHistory, SeenCalls } from './build-history.js';
import { indexSpans } from './index-spans.js';
import { readFacts, type SpanReading } from './read-facts.js';
import { reparentHandoffs } from './reparent-handoffs.js';
import { byRunStart, push, sortIfNeeded } from './trace-model.js';
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
 * Rebuilds the agent runs of one trace: owning run = nearest agent
 * ancestor; implicit runs where tools have no agent; nested and handoff runs; requests
 * joined to executions; request-only calls; history kept apart. Linear in the number of
 * spans (plus sorting), iterative (no recursion), and never throws on bad input: what it
 * cannot read lands in `problems`. Each phase is a module of its own.
 */
export function reconstructTrace(
  spans: SpanLike[],
  readings?: ReadonlyArray<SpanReading | undefined>,
): ReconstructedTrace {
  // 1-3. Index spans, link parents, break cycles (`readings[i]`, from `readAhead`, spares re-reading `spans[i]`).
  const { traceId, log, nodes } = indexSpans(spans, readings);
  // 4. Read the spans that matter with the adapter that claimed them.
  readFacts(nodes);
  // 5-6. Order children; walk the tree once for history, agents and implicit-run anchors.
  const walk = walkTree(nodes);
  // 7. Runs, and what each span contributes to the run that owns it.
  const { states, topLevel } = assignRuns(nodes, walk, traceId, log);
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

  return { traceId, runs: topLevel, problems: log.problems };
}
