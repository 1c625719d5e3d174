import type { AgentRun } from '../../../../src/types.js';
import { push, type RunState } from './trace-model.js';

/**
 * Phase 8 of reconstruction: handoffs and team members. A run naming its source by
 * `graph.node.parent_id` is that run's child, wherever its span sits in the span tree.
 */
export function reparentHandoffs(states: RunState[], topLevel: AgentRun[]): void {
  // Most traces name no source (only OpenInference graphs do): nothing to index.
  let named = false;
  for (const st of states) if (st.facts?.parentNodeId) named = true;
  if (!named) return;
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
