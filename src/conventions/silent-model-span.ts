import type { SpanLike } from '../types.js';
import { classifySpan } from './classify.js';

/**
 * Whether a span is a model call that says nothing reconstruction reads: no tool calls asked
 * for or seen in its input, no tool definitions, no decisions (its adapter's `llmSaysNothing`).
 * Such a span adds nothing to its run but a place in the order of its model calls, so the
 * processor can let it go as it ends. False for any span an adapter cannot vouch for. Never
 * throws.
 */
export function isSilentModelSpan(span: SpanLike): boolean {
  const { role, adapter } = classifySpan(span);
  const saysNothing = role === 'llm' ? adapter?.claimed?.llmSaysNothing : undefined;
  if (saysNothing === undefined) return false;
  try {
    return saysNothing(span);
  } catch {
    return false;
  }
}
