import type { Attributes } from '@opentelemetry/api';
import {
  ATTR_GEN_AI_TOOL_CALL_DECISION_OUTCOME,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_TOOLWATCH_GUARD_DECISION,
  ATTR_TOOLWATCH_GUARD_ENFORCED,
  ATTR_TOOLWATCH_GUARD_KIND,
  ATTR_TOOLWATCH_GUARD_REASON,
  ATTR_TOOLWATCH_GUARD_RULE,
  EVENT_GEN_AI_TOOL_CALL_DECISION,
} from '../semconv.js';
import type { ToolCallDecision } from '../types.js';

/**
 * What a denial writes on the tool call's span: toolwatch's attributes (the policy's decision,
 * whether it was enforced, the rule, the check, the reasons), which reconstruction reads in
 * every convention. Only for `deny` decisions: an allow writes nothing.
 */
export function decisionAttributes(decision: ToolCallDecision): Attributes {
  const attributes: Attributes = {
    [ATTR_TOOLWATCH_GUARD_DECISION]: decision.decision,
    [ATTR_TOOLWATCH_GUARD_ENFORCED]: decision.enforced,
    [ATTR_TOOLWATCH_GUARD_REASON]: decision.reasons.join('; '),
  };
  if (decision.rule !== undefined) attributes[ATTR_TOOLWATCH_GUARD_RULE] = decision.rule;
  if (decision.kind !== undefined) attributes[ATTR_TOOLWATCH_GUARD_KIND] = decision.kind;
  return attributes;
}

/**
 * The proposed pre-execution decision event (`gen_ai.tool.call.decision`), with what was
 * actually done: `deny` when the call was refused, `allow` when a rule only observed it.
 */
export const DECISION_EVENT = EVENT_GEN_AI_TOOL_CALL_DECISION;

export function decisionEventAttributes(
  decision: ToolCallDecision,
  tool: string,
  callId?: string,
): Attributes {
  const attributes: Attributes = {
    [ATTR_GEN_AI_TOOL_CALL_DECISION_OUTCOME]: decision.allowed ? 'allow' : 'deny',
    [ATTR_GEN_AI_TOOL_NAME]: tool,
  };
  if (callId !== undefined) attributes[ATTR_GEN_AI_TOOL_CALL_ID] = callId;
  return attributes;
}
