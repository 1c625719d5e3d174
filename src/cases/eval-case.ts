import type { ArgRule } from '../scorers/arg-rules.js';
import type { GuardCheck } from '../types.js';

/**
 * One eval-dataset case (its fields, plus `expected_order`,
 * `pass_threshold` and `tags`). Every trajectory option is accepted under its policy-file
 * name and means what it means in a policy: a case becomes a `trajectory` scorer.
 */
export interface EvalCase {
  /** Unique in the file; the rule name and the `toolwatch.case.id` value. */
  id: string;
  /** What the agent is asked: text, or chat messages. */
  input: unknown;
  /** Anything the agent needs besides the input (handed to the agent in rollouts). */
  context?: unknown;
  expected_tools?: string[];
  forbidden_tools?: string[];
  max_calls?: number;
  arg_constraints?: Record<string, Record<string, ArgRule>>;
  expected_order?: Array<[string, string]>;
  pass_threshold?: number;
  risk?: 'low' | 'medium' | 'high' | 'critical';
  intent?: string;
  /** Facts a correct answer states; checked by an `llm_judge` (trajectory_grounding) when a judge is configured. */
  answer_facts?: string[];
  tags?: string[];
  /**
   * The case's rule guards tool calls before they run (`checkToolCall`), as a policy rule's
   * `guard` key: `mode` enforce (default) or observe, `checks` (default all five).
   */
  guard?: { mode?: 'enforce' | 'observe'; checks?: GuardCheck[] };
  /** Other trajectory options (`order`, `max_repeats`, `weights`, `scope`) as in a policy. */
  [option: string]: unknown;
}

/** Case keys that are not trajectory options. */
export const CASE_ONLY_KEYS = new Set(['id', 'input', 'context', 'answer_facts', 'tags', 'guard']);
