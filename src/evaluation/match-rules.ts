import type { AgentRun, Policy, Rule, RuleMatch } from '../types.js';

/** What rule matching reads: the run's name, its span and resource attributes, and whether it is nested. */
export interface RunIdentity {
  agent: string;
  /** Run-span plus resource attributes, for `match.attributes`. */
  attributes: Record<string, unknown>;
  /** True when an agent run encloses this one (rules are `root_only` by default). */
  nested: boolean;
}

/** The identity of a reconstructed run. */
export function runIdentity(run: AgentRun): RunIdentity {
  return { agent: run.agent, attributes: run.attributes, nested: run.parent !== undefined };
}

/** The policy's rules that apply to a run, in policy order. */
export function matchRules(identity: RunIdentity, policy: Policy): Rule[] {
  const rules: Rule[] = [];
  for (const rule of policy.rules) if (ruleMatches(identity, rule.match)) rules.push(rule);
  return rules;
}

export function ruleMatches(identity: RunIdentity, match: RuleMatch): boolean {
  if (match.rootOnly && identity.nested) return false;
  if (match.agent !== undefined && !globMatches(match.agent, identity.agent)) return false;
  if (match.attributes) {
    for (const [key, expected] of Object.entries(match.attributes)) {
      if (!attributeEquals(identity.attributes[key], expected)) return false;
    }
  }
  return true;
}

/** A glob split at its stars: literal segments in which `?` matches any one character. */
interface CompiledGlob {
  segments: string[];
  /** No star at all: the one segment must span the whole text. */
  exact: boolean;
}

const globCache = new Map<string, CompiledGlob>();

function compile(glob: string): CompiledGlob {
  let compiled = globCache.get(glob);
  if (compiled === undefined) {
    compiled = { segments: glob.split('*'), exact: !glob.includes('*') };
    globCache.set(glob, compiled);
  }
  return compiled;
}

/**
 * `*` = any run of characters, `?` = one character; everything else is literal. Matched
 * without backtracking across stars: the first segment is anchored at the start, the last
 * at the end, and each middle one is taken at its leftmost place (always a correct choice
 * for `*`-globs), so the cost is at most pattern length × text length, never exponential
 * whatever the pattern (`*a*a*a*…b` on a long name included).
 */
export function globMatches(glob: string, text: string): boolean {
  const { segments, exact } = compile(glob);
  const first = segments[0]!;
  if (exact) return first.length === text.length && segmentAt(first, text, 0);
  const last = segments[segments.length - 1]!;
  if (first.length + last.length > text.length) return false;
  if (!segmentAt(first, text, 0) || !segmentAt(last, text, text.length - last.length)) return false;
  let from = first.length;
  const until = text.length - last.length;
  for (let i = 1; i < segments.length - 1; i++) {
    const segment = segments[i]!;
    if (segment === '') continue;
    const at = findSegment(segment, text, from, until);
    if (at < 0) return false;
    from = at + segment.length;
  }
  return true;
}

/** Whether `segment` (with `?` wildcards) matches `text` at `at`. */
function segmentAt(segment: string, text: string, at: number): boolean {
  for (let i = 0; i < segment.length; i++) {
    const c = segment.charCodeAt(i);
    if (c !== 63 /* ? */ && c !== text.charCodeAt(at + i)) return false;
  }
  return true;
}

/** The leftmost place in `[from, until)` where `segment` fits entirely, or -1. */
function findSegment(segment: string, text: string, from: number, until: number): number {
  for (let at = from; at + segment.length <= until; at++) if (segmentAt(segment, text, at)) return at;
  return -1;
}

function attributeEquals(actual: unknown, expected: string | number | boolean): boolean {
  if (actual === expected) return true;
  // OTLP intValue may arrive as a string or bigint depending on the decoder.
  if (typeof expected === 'number') {
    if (typeof actual === 'bigint') return Number(actual) === expected;
    if (typeof actual === 'string' && actual.trim() !== '') return Number(actual) === expected;
  }
  return false;
}
