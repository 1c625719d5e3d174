import YAML, { type Document, isAlias, isMap, isScalar, isSeq, LineCounter, type Node } from 'yaml';
import { PyFloat } from '../util/python-json.js';
import type { PolicyProblem } from './policy-error.js';
import { DEFAULT_POLICY_LIMITS } from './policy-limits.js';

/** Aliases of one node a policy or case file may hold (an alias bomb has far more). */
const MAX_ALIAS_EXPANSIONS = 100;

/** Where a policy path sits in the text (1-based), when the text has it. */
export type LocatePath = (path: string) => { line: number; column: number } | undefined;

/**
 * Parses policy text (YAML, or JSON, which YAML 1.2 reads the same way) into plain values.
 * Numbers written as floats (`1.0`, `2.5`, `1e3`, `.inf`) become `PyFloat`, so argument
 * values keep Python's int/float distinction and scorer digests match agno's. Syntax errors
 * are problems with their line and column; `locate` finds the line of a validation problem.
 * Aliases may add at most `maxAliasNodes` nodes when expanded (default 100,000).
 */
export function readPolicyText(
  text: string,
  { maxAliasNodes = DEFAULT_POLICY_LIMITS.maxAliasNodes }: { maxAliasNodes?: number } = {},
): {
  value: unknown;
  problems: PolicyProblem[];
  locate: LocatePath;
} {
  const lines = new LineCounter();
  // A byte-order mark (Windows editors) is not content; before a top-level list, yaml
  // reads it as a scalar and fails on every line.
  // Duplicate keys are found below: yaml's own check compares each key with every earlier
  // one (20,000 keys in one mapping: 3.4 s; 200,000: minutes).
  const doc = YAML.parseDocument(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, {
    keepSourceTokens: true,
    uniqueKeys: false,
    prettyErrors: false,
    lineCounter: lines,
  });
  const at = (offset: number) => {
    const { line, col } = lines.linePos(offset);
    return { line, column: col };
  };
  const locate: LocatePath = (path) => {
    const offset = offsetOf(doc.contents, pathSegments(path));
    return offset === undefined ? undefined : at(offset);
  };
  const errors: Array<{ offset: number; message: string }> = doc.errors.map((e) => ({
    offset: e.pos[0],
    message: firstLine(e.message),
  }));
  for (const offset of duplicateKeys(doc.contents))
    errors.push({ offset, message: 'Map keys must be unique' });
  if (errors.length > 0) return { value: undefined, problems: problemsAt(errors, at), locate };
  let firstAlias: number | undefined;
  YAML.visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value !== 'number') return;
      if (node.format === 'HEX' || node.format === 'OCT') return;
      const source = (node.srcToken as { source?: string } | undefined)?.source ?? '';
      if (/[.eE]|inf|nan/i.test(source)) (node as { value: unknown }).value = new PyFloat(node.value);
    },
    Alias(_key, node) {
      const offset = node.range?.[0] ?? 0;
      firstAlias ??= offset;
      // An alias inside the node it names makes a value that contains itself: every walk of
      // it (validation, the `__proto__` check) would never end. Ranges nest as nodes do.
      const range = node.resolve(doc)?.range;
      if (range && range[0] <= offset && offset < range[2])
        errors.push({ offset, message: `alias *${node.source} is inside the node it refers to (a cycle)` });
    },
  });
  if (errors.length > 0) return { value: undefined, problems: problemsAt(errors, at), locate };
  if (firstAlias !== undefined) {
    // Counted before anything is expanded: 100 aliases of one 20,000-tool list pass yaml's
    // per-node count below and expand to 2,000,000 nodes (4.4 s, 290 MB kept).
    const added = aliasExpansion(doc);
    if (added > maxAliasNodes) {
      const message = `aliases expand to ${added} nodes, over the limit of ${maxAliasNodes} (raise it with --max-policy-alias-nodes, or the maxAliasNodes option of loadPolicy)`;
      return { value: undefined, problems: [{ path: '', message, ...at(firstAlias) }], locate };
    }
  }
  let value: unknown;
  try {
    // yaml counts the anchored node as the first use of it: 101 allows 100 aliases of a node,
    // the documented limit (more than 100 expansions are refused).
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_EXPANSIONS + 1 });
  } catch (error) {
    // yaml refuses aliases that expand too often (a "billion laughs" file): a problem of the
    // file, not a crash, placed at its first alias (yaml does not say which one went over).
    const message = `aliases expand too often (${error instanceof Error ? firstLine(error.message) : String(error)})`;
    return { value: undefined, problems: [{ path: '', message, ...at(firstAlias ?? 0) }], locate };
  }
  return { value, problems: [], locate };
}

function problemsAt(
  errors: Array<{ offset: number; message: string }>,
  at: (offset: number) => { line: number; column: number },
): PolicyProblem[] {
  errors.sort((a, b) => a.offset - b.offset);
  return errors.map((e) => ({ path: '', message: e.message, ...at(e.offset) }));
}

/** Source offsets of every mapping key that repeats an earlier key of its mapping (as yaml's `uniqueKeys` check). */
function duplicateKeys(root: unknown): number[] {
  const out: number[] = [];
  // An explicit stack: the nesting is the file's.
  const pending: unknown[] = [root];
  for (let node = pending.pop(); pending.length > 0 || node !== undefined; node = pending.pop()) {
    if (isMap(node)) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        if (isScalar(pair.key)) {
          const value = pair.key.value;
          const key = `${typeof value}:${String(value)}`;
          if (seen.has(key)) out.push((pair.key as Node).range?.[0] ?? 0);
          else seen.add(key);
        }
        pending.push(pair.value);
      }
    } else if (isSeq(node)) for (const item of node.items) pending.push(item);
  }
  return out;
}

/**
 * How many nodes the document's aliases expand to: the size of every copy they stand for
 * (an alias inside an aliased node counted in each copy). Runs after the cycle check (a cycle
 * has no finite size); sizes are computed once per node, in one pass in document order, where
 * an anchor always comes before its aliases.
 */
function aliasExpansion(doc: Document): number {
  const expanded = new Map<unknown, number>();
  // The document's size with every alias expanded is its size as written (aliases not
  // counted) plus what the aliases expand to.
  let written = 0;
  // Post-order with an explicit stack: the nesting is the file's.
  const pending: Array<[unknown, boolean]> = [[doc.contents, false]];
  for (let top = pending.pop(); top !== undefined; top = pending.pop()) {
    const [node, childrenDone] = top;
    if (node === null || node === undefined || expanded.has(node)) continue;
    const children: unknown[] = [];
    if (isMap(node)) for (const pair of node.items) children.push(pair.key, pair.value);
    else if (isSeq(node)) children.push(...node.items);
    if (!childrenDone && children.length > 0) {
      pending.push([node, true]);
      for (let i = children.length - 1; i >= 0; i--) pending.push([children[i], false]);
      continue;
    }
    let size = 1;
    if (isAlias(node)) size = expanded.get(node.resolve(doc)) ?? 1;
    else {
      written++;
      for (const child of children) size += expanded.get(child) ?? 0;
    }
    expanded.set(node, size);
  }
  return (expanded.get(doc.contents) ?? 0) - written;
}

function firstLine(message: string): string {
  return message.split('\n')[0]!.trim();
}

/** `rules[0].match.attributes["deployment.environment"]` → `['rules', 0, 'match', 'attributes', 'deployment.environment']`. */
function pathSegments(path: string): Array<string | number> {
  const out: Array<string | number> = [];
  const segment = /\.?([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/y;
  for (let m = segment.exec(path); m; m = segment.exec(path)) {
    if (m[1] !== undefined) out.push(m[1]);
    else if (m[2] !== undefined) out.push(Number(m[2]));
    else out.push(JSON.parse(m[3]!) as string);
    if (segment.lastIndex >= path.length) break;
  }
  return out;
}

/**
 * The source offset of a path: the key of the last mapping entry found (an unknown key is
 * reported where it is written), or the deepest node that exists (a missing key is reported
 * at the mapping that lacks it).
 */
function offsetOf(root: unknown, path: Array<string | number>): number | undefined {
  let node = root as Node | null | undefined;
  let offset = node?.range?.[0];
  for (const key of path) {
    if (isMap(node)) {
      const pair = pairsOf(node).get(String(key));
      if (!pair) break;
      offset = (pair.key as Node).range?.[0] ?? offset;
      node = pair.value as Node | null;
    } else if (isSeq(node) && typeof key === 'number') {
      const item = node.items[key] as Node | undefined;
      if (!item) break;
      offset = item.range?.[0] ?? offset;
      node = item;
    } else break;
  }
  return offset;
}

type MapNode = Extract<Node, { items: unknown[] }> & { items: Array<{ key: unknown; value: unknown }> };

/**
 * A mapping's entries by key, built once per mapping: a file with many problems in one
 * mapping (20,000 unknown keys: 8 s) was located by a scan of the mapping per problem.
 */
const pairIndex = new WeakMap<object, Map<string, { key: unknown; value: unknown }>>();

function pairsOf(node: MapNode): Map<string, { key: unknown; value: unknown }> {
  let index = pairIndex.get(node);
  if (!index) {
    index = new Map();
    for (const pair of node.items) {
      if (!isScalar(pair.key)) continue;
      const key = String(pair.key.value);
      // The first entry of a key, as the scan found it.
      if (!index.has(key)) index.set(key, pair);
    }
    pairIndex.set(node, index);
  }
  return index;
}
