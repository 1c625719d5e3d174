import type { z } from 'zod';

/**
 * The candidate a mistyped word most likely meant: the same word up to case, `_`/`-` and
 * camelCase (`forbiddenTools` → `forbidden_tools`), or the nearest by edit distance
 * (insertions, deletions, substitutions, adjacent swaps): one edit per four characters, at
 * least one and at most three.
 */
export function didYouMean(word: string, candidates: Iterable<string>): string | undefined {
  const wanted = normalize(word);
  const limit = Math.min(3, Math.max(1, Math.floor(wanted.length / 4)));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of candidates) {
    if (candidate === word) continue;
    const other = normalize(candidate);
    if (Math.abs(other.length - wanted.length) > limit) continue;
    const distance = editDistance(wanted, other);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

function normalize(word: string): string {
  return word.replace(/[_-]/g, '').toLowerCase();
}

/** Optimal string alignment distance (Damerau–Levenshtein without repeated edits of a substring). */
function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) rows.push([i]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = d;
    }
  }
  return rows[a.length]![b.length]!;
}

type Def = {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  in?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
  getter?: () => z.ZodType;
};

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The object schemas a (possibly wrapped or union) schema stands for. */
function objectsOf(schema: z.ZodType, depth = 0): Def[] {
  if (depth > 20) return [];
  const def = defOf(schema);
  if (def.type === 'object') return [def];
  if (def.innerType) return objectsOf(def.innerType, depth + 1);
  if (def.type === 'pipe' && def.in) return objectsOf(def.in, depth + 1);
  if (def.type === 'lazy' && def.getter) return objectsOf(def.getter(), depth + 1);
  if (def.type === 'union' && def.options) return def.options.flatMap((o) => objectsOf(o, depth + 1));
  return [];
}

/** The schemas reached from `schema` by one path segment. */
function childrenOf(schema: z.ZodType, key: PropertyKey, depth = 0): z.ZodType[] {
  if (depth > 20) return [];
  const def = defOf(schema);
  if (def.innerType) return childrenOf(def.innerType, key, depth + 1);
  if (def.type === 'pipe' && def.in) return childrenOf(def.in, key, depth + 1);
  if (def.type === 'lazy' && def.getter) return childrenOf(def.getter(), key, depth + 1);
  if (def.type === 'union' && def.options) return def.options.flatMap((o) => childrenOf(o, key, depth + 1));
  if (def.type === 'object' && typeof key === 'string' && def.shape && Object.hasOwn(def.shape, key))
    return [def.shape[key]!];
  if (def.type === 'array' && typeof key === 'number' && def.element) return [def.element];
  if (def.type === 'record' && def.valueType) return [def.valueType];
  return [];
}

/** The keys an object at `path` inside `schema` accepts (for did-you-mean on unknown keys). */
export function knownKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let nodes = [schema];
  for (const key of path) nodes = nodes.flatMap((node) => childrenOf(node, key));
  return [
    ...new Set(nodes.flatMap((node) => objectsOf(node).flatMap((def) => Object.keys(def.shape ?? {})))),
  ];
}
