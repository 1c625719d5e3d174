import { readTrue } from '../conventions/read-values.js';
import { ATTR_TOOLWATCH_FROM_HISTORY } from '../semconv.js';
import { i32, type Node, sortIndexesIfNeeded, u8 } from './trace-model.js';

/** Per node (by index), what the pre-order walk found; `order` lists nodes parents first. */
export interface TreeWalk {
  /** Node indexes, parents first: the first `visited` entries of a pooled array. */
  order: Int32Array;
  visited: number;
  /** 1 for a span flagged as history, or below one. */
  history: Uint8Array;
  /** 1 for an agent span that is a run (not history, not a wrapper). */
  runAgent: Uint8Array;
  /** 1 when a tool span lies between the node and its nearest agent ancestor (agent-as-tool, delegation). */
  toolBetween: Uint8Array;
  /** 1 for the outermost span of an implicit run (tools with no agent above). */
  implicit: Uint8Array;
}

/**
 * Phases 5-6 of reconstruction: children and roots in (start, rank, end, id) order, then one
 * pre-order walk for history flags, nearest agent ancestors and implicit-run anchors.
 */
export function walkTree(nodes: Node[]): TreeWalk {
  const n = nodes.length;
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
  // Pooled: each node is visited at most once, so both hold at most n entries.
  const order = i32(5, n, 0);
  let visited = 0;
  const history = u8(1, n);
  const runAgent = u8(2, n);
  const agentAnc = i32(1, n, -1);
  const anchor = i32(2, n, 0);
  // A tool span lies between the node and its nearest agent ancestor (agent-as-tool, delegation).
  const toolBetween = u8(3, n);
  {
    const stack = i32(6, n, 0);
    let top = 0;
    for (let r = roots.length - 1; r >= 0; r--) stack[top++] = roots[r]!;
    while (top > 0) {
      const i = stack[--top]!;
      order[visited++] = i;
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
      if (children) for (let c = children.length - 1; c >= 0; c--) stack[top++] = children[c]!;
    }
  }
  const implicit = u8(4, n);
  for (let i = 0; i < n; i++) {
    if (history[i] === 1 || runAgent[i] === 1 || agentAnc[i] !== -1) continue;
    const node = nodes[i]!;
    if (node.role === 'tool' || (node.role === 'llm' && node.hasRequests === true)) implicit[anchor[i]!] = 1;
  }

  return { order, visited, history, runAgent, toolBetween, implicit };
}

/** The OpenAI Agents bridge's synthetic trace root (the SDK's default workflow name). */
const AGENT_WORKFLOW = 'Agent workflow';
const NO_CHILDREN: readonly number[] = [];
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
