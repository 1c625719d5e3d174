import type { LlmFacts, LlmInputFacts } from './span-facts.js';

/** An LLM span's output facts with its input facts added (what `ConventionAdapter.llm` returns). */
export function mergeLlmFacts(output: LlmFacts | undefined, input: LlmInputFacts): LlmFacts | undefined {
  if (!output) return undefined;
  const merged: LlmFacts = { ...output, inputCalls: input.inputCalls };
  const refusals = [...input.refusals, ...(output.refusals ?? [])];
  if (refusals.length > 0) merged.refusals = refusals;
  else delete merged.refusals;
  return merged;
}

export const NO_INPUT: LlmInputFacts = Object.freeze({ inputCalls: [], refusals: [] }) as LlmInputFacts;

/** Size of an input attribute as a progress measure: text length, or element count of a structured value. */
export function inputSize(value: unknown): number {
  if (typeof value === 'string') return value.length;
  if (Array.isArray(value)) return value.length;
  return 0;
}
