import type { Attributes } from '@opentelemetry/api';
import { redactedExplanation } from '../scorers/result-readers.js';
import {
  ATTR_GEN_AI_EVALUATION_EXPLANATION,
  ATTR_GEN_AI_EVALUATION_NAME,
  ATTR_GEN_AI_EVALUATION_SCORE_LABEL,
  ATTR_GEN_AI_EVALUATION_SCORE_VALUE,
  ATTR_TOOLWATCH_SCORER_DIGEST,
  ATTR_TOOLWATCH_SCORER_KIND,
  EVENT_GEN_AI_EVALUATION_RESULT,
} from '../semconv.js';
import type { RedactOptions, ScorerResult } from '../types.js';

/** Anything events can be added to: an SDK `Span` while it is ending, or a new span. */
export interface EventSink {
  addEvent(name: string, attributes?: Attributes): unknown;
}

/**
 * The explanation emitted for a result. With `redact.values`, free-text reasons may quote
 * argument values, so the explanation is the one the result's scorer kind builds from its
 * structure (keys, never values).
 */
export function evaluationExplanation(result: ScorerResult, redact?: RedactOptions): string {
  if (!redact?.values) return result.reason ?? '';
  return redactedExplanation(result);
}

/** Attributes of one `gen_ai.evaluation.result` event (docs/metrics.md). */
export function evaluationEventAttributes(result: ScorerResult, redact?: RedactOptions): Attributes {
  return {
    [ATTR_GEN_AI_EVALUATION_NAME]: result.scorer,
    // Attribute values must be finite; a scorer that produced NaN reports 0 rather than nothing.
    [ATTR_GEN_AI_EVALUATION_SCORE_VALUE]: Number.isFinite(result.score) ? result.score : 0,
    [ATTR_GEN_AI_EVALUATION_SCORE_LABEL]: result.label,
    [ATTR_GEN_AI_EVALUATION_EXPLANATION]: evaluationExplanation(result, redact),
    [ATTR_TOOLWATCH_SCORER_KIND]: result.kind,
    [ATTR_TOOLWATCH_SCORER_DIGEST]: result.digest,
  };
}

/** Adds one `gen_ai.evaluation.result` event per result, in result order. */
export function addEvaluationEvents(
  sink: EventSink,
  results: readonly ScorerResult[],
  redact?: RedactOptions,
): void {
  for (const result of results) {
    sink.addEvent(EVENT_GEN_AI_EVALUATION_RESULT, evaluationEventAttributes(result, redact));
  }
}
