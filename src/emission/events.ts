import type { Attributes } from '@opentelemetry/api';
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
 * argument values, so the explanation is rebuilt from the result's structure: the label,
 * error codes with the tool and field they concern, and tool names — keys, never values.
 */
export function evaluationExplanation(result: ScorerResult, redact?: RedactOptions): string {
  if (!redact?.values) return result.reason ?? '';
  // Built by concatenation: this runs for every result of every judged run.
  let text: string = result.label;
  const detail = result.detail;
  if (detail === undefined || detail === null) return text;
  const errors = detail.errors;
  if (Array.isArray(errors)) {
    for (const error of errors) {
      if (error === null || typeof error !== 'object') continue;
      const { code, tool, field } = error as { code?: unknown; tool?: unknown; field?: unknown };
      if (typeof code !== 'string') continue;
      let where = typeof tool === 'string' ? tool : '';
      if (typeof field === 'string') where = typeof tool === 'string' ? `${where}.${field}` : field;
      text += where ? `; ${code}(${where})` : `; ${code}`;
    }
  }
  text = appendNames(text, 'missing_tool_calls', detail.missing_tool_calls);
  return appendNames(text, 'additional_tool_calls', detail.additional_tool_calls);
}

/** `; key: a, b` for the string names of a non-empty list; the text unchanged otherwise. */
function appendNames(text: string, key: string, names: unknown): string {
  if (!Array.isArray(names) || names.length === 0) return text;
  let list = '';
  let first = true;
  for (const name of names) {
    if (typeof name !== 'string') continue;
    list = first ? name : `${list}, ${name}`;
    first = false;
  }
  return `${text}; ${key}: ${list}`;
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
