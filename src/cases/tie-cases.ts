import type { TraceGroup } from '../input/trace-window.js';
import type { PolicyProblem } from '../policy/policy-error.js';
import { reconstructTrace } from '../reconstruction/reconstruct-trace.js';
import type { AgentRun, Policy, Rule } from '../types.js';
import { ATTR_TOOLWATCH_CASE_ID } from './case-id.js';
import type { EvalCase } from './eval-case.js';
import { CasesError } from './load-cases.js';

export interface CaseTieOptions {
  /** Also tie traces without the attribute by their first user message. Default false. */
  matchInput?: boolean;
  /** The case file's name, for the error about cases that share an input. Default none. */
  source?: string;
}

/**
 * Chooses, for a complete trace, the case it belongs to and returns the policy to judge it
 * with: the cases policy restricted to that case's rule, matching the outermost run whatever
 * span carries `toolwatch.case.id` (the rollout span, the agent span, or a harness span
 * above it). The policy keeps its digest: verdicts name the whole dataset's policy.
 */
export function caseSelector(
  policy: Policy,
  cases: readonly EvalCase[],
  options: CaseTieOptions = {},
): (group: TraceGroup) => Policy | undefined {
  const views = new Map<string, Policy>();
  for (const rule of policy.rules) {
    const view: Rule = { ...rule, match: { rootOnly: true } };
    views.set(rule.name, { ...policy, rules: [view] });
  }
  const byInput = new Map<string, string>();
  if (options.matchInput) {
    // Two cases with one input cannot be told apart by it: every such run went to the later
    // case without a word. Refused, like any other problem of the case file.
    const first = new Map<string, number>();
    const problems: PolicyProblem[] = [];
    cases.forEach((c, i) => {
      const text = firstUserText(c.input);
      if (text === undefined) return;
      const key = normalize(text);
      const other = first.get(key);
      if (other !== undefined) {
        problems.push({
          path: `cases[${i}].input`,
          message: `the same input as cases[${other}] (${JSON.stringify(cases[other]!.id)}), ignoring whitespace and case: --match-input cannot tell their runs apart`,
        });
      } else {
        first.set(key, i);
        byInput.set(key, c.id);
      }
    });
    if (problems.length > 0) throw new CasesError(problems, options.source);
  }
  return (group) => {
    for (const span of group.spans) {
      const id = span.attributes[ATTR_TOOLWATCH_CASE_ID];
      if (typeof id === 'string' && views.has(id)) return views.get(id);
    }
    if (!options.matchInput) return undefined;
    let runs: AgentRun[];
    try {
      runs = reconstructTrace(group.spans).runs;
    } catch {
      return undefined;
    }
    // Breadth first, outermost runs first. A queue read by index and filled one run at a
    // time: `push(...children)` overflowed the stack at ~120,000 child runs (exit 3), and
    // `shift()` made the walk quadratic.
    const queue = [...runs];
    for (let i = 0; i < queue.length; i++) {
      const run = queue[i]!;
      const text = firstUserText(run.input);
      if (text !== undefined) {
        const id = byInput.get(normalize(text));
        return id === undefined ? undefined : views.get(id);
      }
      for (const child of run.children) queue.push(child);
    }
    return undefined;
  };
}

/** Input texts that differ only in whitespace or case are the same input. */
function normalize(text: string): string {
  return text.trim().replace(/\s+/g, ' ').toLowerCase();
}

/**
 * The first user message of an input as frameworks record it: text, `{ prompt }`,
 * `{ messages: […] }`, a message list, or a message whose content is text or text parts.
 */
export function firstUserText(input: unknown, depth = 0): string | undefined {
  if (depth > 6 || input === null || input === undefined) return undefined;
  if (typeof input === 'string') {
    const trimmed = input.trim();
    if ((trimmed.startsWith('{') || trimmed.startsWith('[')) && depth === 0) {
      try {
        return firstUserText(JSON.parse(trimmed), depth + 1) ?? trimmed;
      } catch {
        return input;
      }
    }
    return input;
  }
  if (Array.isArray(input)) {
    const user = input.find((m) => m && typeof m === 'object' && (m as { role?: unknown }).role === 'user');
    if (user)
      return contentText(
        (user as { content?: unknown; parts?: unknown }).content ?? (user as { parts?: unknown }).parts,
      );
    return input.length > 0 ? firstUserText(input[0], depth + 1) : undefined;
  }
  if (typeof input === 'object') {
    const o = input as Record<string, unknown>;
    if (typeof o.prompt === 'string') return o.prompt;
    if (Array.isArray(o.prompt)) return firstUserText(o.prompt, depth + 1);
    if (Array.isArray(o.messages)) return firstUserText(o.messages, depth + 1);
    if (o.role === 'user') return contentText(o.content ?? o.parts);
    if (typeof o.input === 'string' || (o.input && typeof o.input === 'object'))
      return firstUserText(o.input, depth + 1);
  }
  return undefined;
}

function contentText(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const texts = content
      .map((p) =>
        typeof p === 'string'
          ? p
          : p && typeof p === 'object'
            ? ((p as { text?: unknown; content?: unknown }).text ?? (p as { content?: unknown }).content)
            : undefined,
      )
      .filter((t): t is string => typeof t === 'string');
    return texts.length > 0 ? texts.join('\n') : undefined;
  }
  return undefined;
}
