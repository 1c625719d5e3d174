import type { Attributes } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { EVENT_GEN_AI_EVALUATION_RESULT } from '../semconv.js';
import type { RedactOptions, ScorerResult } from '../types.js';
import { mergeAttributes } from '../util/merge-attributes.js';
import { evaluationEventAttributes } from './events.js';

/**
 * The view of an ended span handed on in wrapping mode (SDKs without `onEnding`, where an
 * ended span can no longer be written): the span itself, through the prototype chain, with
 * the verdict's attributes and one `gen_ai.evaluation.result` event per result added at the
 * span's end time. The span is not changed.
 */
export function decoratedSpan(
  span: ReadableSpan,
  attributes: Attributes,
  results: readonly ScorerResult[],
  redact?: RedactOptions,
): ReadableSpan {
  const time = span.endTime;
  const events = [
    ...span.events,
    ...results.map((result) => ({
      name: EVENT_GEN_AI_EVALUATION_RESULT,
      time,
      attributes: evaluationEventAttributes(result, redact),
      droppedAttributesCount: 0,
    })),
  ];
  const view = Object.create(span) as ReadableSpan;
  Object.defineProperty(view, 'attributes', { value: mergeAttributes(span.attributes, attributes) });
  Object.defineProperty(view, 'events', { value: events });
  return view;
}
