/**
 * The span attribute that ties a run to an eval-dataset case. Set by `runRollouts` on each
 * rollout span, or by a user's own harness on any span of the trace.
 */
export const ATTR_TOOLWATCH_CASE_ID = 'toolwatch.case.id';

/** The rollout's index within its case (0 … k−1), set by `runRollouts`. */
export const ATTR_TOOLWATCH_ROLLOUT_INDEX = 'toolwatch.rollout.index';
