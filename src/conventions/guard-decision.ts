import {
  ATTR_TOOLWATCH_GUARD_DECISION,
  ATTR_TOOLWATCH_GUARD_ENFORCED,
  ATTR_TOOLWATCH_GUARD_REASON,
} from '../semconv.js';
import type { SpanLike } from '../types.js';
import { readString, readTrue } from './read-values.js';
import type { ToolFacts } from './span-facts.js';

/**
 * A tool span on which a guard refused the call (`toolwatch.guard.decision = deny`,
 * `toolwatch.guard.enforced = true`) stands for a call that never ran, whatever the
 * convention: the framework may still have opened the span and answered the model with the
 * reason. Marks the facts so, with the guard's reason as the refusal; a decision that was
 * only observed changes nothing (the tool ran).
 */
export function applyGuardDecision(facts: ToolFacts, span: SpanLike): void {
  const a = span.attributes;
  if (a[ATTR_TOOLWATCH_GUARD_DECISION] === undefined) return;
  if (readString(a[ATTR_TOOLWATCH_GUARD_DECISION]) !== 'deny' || !readTrue(a[ATTR_TOOLWATCH_GUARD_ENFORCED]))
    return;
  facts.notRun = true;
  facts.guardRefused = true;
  facts.status = 'refused';
  facts.errorMessage = readString(a[ATTR_TOOLWATCH_GUARD_REASON]) ?? 'refused by the toolwatch guard';
}
