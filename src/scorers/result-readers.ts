import type { ScorerResult } from '../types.js';
import { reliabilityResults } from './reliability.js';
import { appendToolLists, explainErrors, type ResultMisuse, type ResultReader } from './result-reader.js';
import { trajectoryResults } from './trajectory.js';

/** The readers of the kinds that declare one; every other kind (custom scorers too) gets the default. */
const READERS: ReadonlyMap<string, ResultReader> = new Map([
  ['trajectory', trajectoryResults],
  ['reliability', reliabilityResults],
]);

/**
 * The convention for custom scorers: `detail.errors` entries `{ code, tool?, field? }`, then
 * the tool names of `detail.missing_tool_calls` and `detail.additional_tool_calls`.
 */
const DEFAULT_READER: ResultReader = {
  explainRedacted: (result) => appendToolLists(explainErrors(result), result.detail),
};
const NO_MISUSE: readonly ResultMisuse[] = [];

/** The explanation of a result without argument values, as its scorer kind gives it. */
export function redactedExplanation(result: ScorerResult): string {
  return (READERS.get(result.kind) ?? DEFAULT_READER).explainRedacted(result);
}

/** The misuse a result shows, as its scorer kind reads it (none for kinds without a reader). */
export function resultMisuse(result: ScorerResult): readonly ResultMisuse[] {
  return READERS.get(result.kind)?.misuse?.(result) ?? NO_MISUSE;
}
