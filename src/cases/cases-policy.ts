import { isPolicy } from '../policy/define-policy.js';
import { parsePolicy } from '../policy/parse-policy.js';
import type { Policy } from '../types.js';
import { ATTR_TOOLWATCH_CASE_ID } from './case-id.js';
import { CASE_ONLY_KEYS, type EvalCase } from './eval-case.js';

export interface CasesPolicyOptions {
  /**
   * Sampling, judge budget, redaction and gates: a built policy, or the policy-file form
   * (`{ gates: …, judge: … }`, snake_case, `rules` optional). Rules here are not used: the
   * cases are the rules. Default: the policy defaults, no gates.
   */
  base?: Policy | Record<string, unknown>;
  /**
   * Add an `llm_judge` (`trajectory_grounding`, every run sampled) to cases with
   * `answer_facts`. Default false: without a judge it could only report errors.
   */
  judge?: boolean;
}

/**
 * The policy an eval dataset stands for: one rule per case, named by its id, matching runs
 * whose span carries `toolwatch.case.id` = id, with a `trajectory` scorer built from the
 * case's fields (+ an `llm_judge` for `answer_facts` when `judge` is set). Built through
 * `parsePolicy` from the policy-file form, so it is checked and digested like any policy.
 */
export function casesPolicy(cases: readonly EvalCase[], options: CasesPolicyOptions = {}): Policy {
  const base = options.base;
  const rules = cases.map((c) => {
    const trajectory: Record<string, unknown> = { kind: 'trajectory' };
    for (const [key, value] of Object.entries(c)) if (!CASE_ONLY_KEYS.has(key)) trajectory[key] = value;
    const scorers: Array<Record<string, unknown>> = [trajectory];
    if (options.judge && c.answer_facts && c.answer_facts.length > 0) {
      scorers.push({
        kind: 'llm_judge',
        prompt: 'trajectory_grounding',
        answer_facts: c.answer_facts,
        sampling: { ratio: 1 },
      });
    }
    return {
      name: c.id,
      match: { attributes: { [ATTR_TOOLWATCH_CASE_ID]: c.id }, root_only: true },
      scorers,
      ...(c.guard !== undefined ? { guard: c.guard } : {}),
    };
  });
  const settings: Record<string, unknown> = {};
  if (base && !isPolicy(base)) {
    for (const [key, value] of Object.entries(base)) if (key !== 'rules') settings[key] = value;
  }
  const policy = parsePolicy({
    version: 1,
    ...settings,
    ...(base && isPolicy(base)
      ? {
          sampling: { ratio: base.sampling.ratio },
          judge: {
            max_per_minute: base.judge.maxPerMinute,
            max_concurrent: base.judge.maxConcurrent,
            escalate_on: base.judge.escalateOn,
          },
          redact: { values: base.redact.values },
          gates: base.gates,
        }
      : {}),
    rules,
  });
  // A code hook is not part of the file form: carried over after checking, as definePolicy does.
  if (base && isPolicy(base) && base.redact.prompt)
    policy.redact = { ...policy.redact, prompt: base.redact.prompt };
  return policy;
}

/** Each case's `tags` by its rule name, for reports grouped by tag. */
export function caseTags(cases: readonly EvalCase[]): Map<string, readonly string[]> {
  return new Map(cases.filter((c) => c.tags && c.tags.length > 0).map((c) => [c.id, c.tags!]));
}
