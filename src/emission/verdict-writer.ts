import type { Attributes, HrTime, Span, SpanContext, TracerProvider } from '@opentelemetry/api';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace-base';
import { ATTR_TOOLWATCH_EVALUATION_SKIPPED, EVENT_GEN_AI_EVALUATION_RESULT } from '../semconv.js';
import type { RedactOptions, ScorerResult, Verdict } from '../types.js';
import { verdictAttributes } from './attributes.js';
import { decoratedSpan } from './decorated-span.js';
import { addEvaluationEvents, evaluationEventAttributes } from './events.js';

/** Where a verdict's telemetry goes: the ending span itself, a decorated view of it, or a new span. */
export type Placement = 'inline' | 'view' | 'span';

export interface VerdictWriterOptions {
  redact: RedactOptions;
  /** Creates `evaluate {agent}` spans. Default: the global tracer provider at the time of emission. */
  tracerProvider?: TracerProvider;
  /** Called when something could not be written as asked (the kind, a message). */
  problem: (kind: string, message: string, error?: unknown) => void;
}

/** The span limits an SDK 2.x span enforces, read where the SDK keeps them. */
interface LimitedSpan {
  _spanLimits?: {
    attributeCountLimit?: number;
    eventCountLimit?: number;
    attributePerEventCountLimit?: number;
    attributeValueLengthLimit?: number;
  };
  _attributesCount?: number;
}

/**
 * Writes verdicts as docs/metrics.md says: summary attributes and one event per result on the
 * agent span while it ends, or on a new `evaluate {agent}` span parented to (and linked to)
 * it. The application's data comes first: a span without room for every verdict attribute
 * and event under its limits (the SDK would silently drop our attributes, or evict the
 * application's oldest events for ours) gets nothing, and the verdict goes on an `evaluate`
 * span instead.
 */
export class VerdictWriter {
  private _emittedSpans = false;
  private _flushing = false;

  constructor(private readonly _options: VerdictWriterOptions) {}

  /**
   * Writes `verdict` where `placement` says; returns the decorated view when it is `view`
   * (wrapping mode: the span has ended and cannot be written any more).
   */
  write(span: ReadableSpan, verdict: Verdict, placement: Placement): ReadableSpan | undefined {
    return this._writeTelemetry(
      span,
      verdict.agent,
      verdictTelemetry(verdict, this._options.redact),
      verdict.results,
      placement,
      false,
    );
  }

  /**
   * `write` with the telemetry already built, shared by every run it is written for
   * (records that are the same for every run are built once): stored as copies.
   */
  writeTelemetry(
    span: ReadableSpan,
    agent: string,
    telemetry: VerdictTelemetry,
    results: readonly ScorerResult[],
    placement: Placement,
  ): ReadableSpan | undefined {
    return this._writeTelemetry(span, agent, telemetry, results, placement, true);
  }

  private _writeTelemetry(
    span: ReadableSpan,
    agent: string,
    telemetry: VerdictTelemetry,
    results: readonly ScorerResult[],
    placement: Placement,
    shared: boolean,
  ): ReadableSpan | undefined {
    if (placement === 'view') return decoratedSpan(span, telemetry.attributes, results, this._options.redact);
    if (placement === 'inline') {
      if (hasRoom(span, telemetry.attributes, telemetry.events.length)) {
        (span as unknown as Span).setAttributes(telemetry.attributes);
        // Stamped with the span's end (set before `onEnding`): no clock read per event.
        appendEvents(span, telemetry.events, endTimeOf(span), shared);
        return undefined;
      }
      this._options.problem(
        'span_full',
        `agent span ${span.spanContext().spanId} has no room for the verdict under its span limits: written on an evaluate span`,
      );
    }
    this.evaluateSpan(span.spanContext(), agent, telemetry.attributes, results);
    return undefined;
  }

  /**
   * Marks the span of a run that is not judged with its one attribute,
   * `toolwatch.evaluation.skipped: reason`, when the span can still carry it: written in place
   * (if it has room under its limits), or on the view handed on. A run span that has ended
   * (`span` placement) gets nothing: a new span for one attribute would cost more than the
   * record it replaces, and the metrics count the run either way.
   */
  markSkipped(span: ReadableSpan, reason: string, placement: Placement): ReadableSpan | undefined {
    if (placement === 'view') return decoratedSpan(span, skippedMark(reason), NO_RESULTS);
    if (placement === 'inline' && hasRoom(span, skippedMark(reason), 0)) {
      (span as unknown as Span).setAttribute(ATTR_TOOLWATCH_EVALUATION_SKIPPED, reason);
    }
    return undefined;
  }

  /** A new `evaluate {agent}` span in the run's trace, parented to and linked to the run span. */
  evaluateSpan(
    runSpan: SpanContext,
    agent: string,
    attributes: Attributes,
    results: readonly ScorerResult[],
  ): void {
    try {
      const provider = this._options.tracerProvider ?? trace.getTracerProvider();
      const tracer = provider.getTracer('toolwatch');
      const parent = trace.setSpanContext(ROOT_CONTEXT, runSpan);
      const span = tracer.startSpan(
        `evaluate ${agent}`,
        { attributes, links: [{ context: runSpan }] },
        parent,
      );
      if (!span.isRecording()) {
        this._options.problem(
          'emit_not_recording',
          'evaluate spans are not recorded: register a tracer provider globally or pass tracerProvider',
        );
      }
      addEvaluationEvents(span, results, this._options.redact);
      span.end();
      this._emittedSpans = true;
    } catch (error) {
      this._options.problem('emit', 'emitting the evaluation span failed', error);
    }
  }

  /** Results emitted on new spans during a flush must reach the exporters before it returns. */
  async flush(): Promise<void> {
    if (!this._emittedSpans || this._flushing) return;
    this._emittedSpans = false;
    const provider = (this._options.tracerProvider ?? trace.getTracerProvider()) as TracerProvider & {
      forceFlush?: () => Promise<void>;
      getDelegate?: () => TracerProvider & { forceFlush?: () => Promise<void> };
    };
    const flushable = provider.forceFlush ? provider : provider.getDelegate?.();
    if (!flushable?.forceFlush) return;
    this._flushing = true;
    try {
      await flushable.forceFlush();
    } finally {
      this._flushing = false;
    }
  }
}

const NO_RESULTS: readonly ScorerResult[] = [];
const SKIPPED_MARKS = new Map<string, Attributes>();

/** The one attribute of a skipped run's span, built once per reason. */
function skippedMark(reason: string): Attributes {
  let mark = SKIPPED_MARKS.get(reason);
  if (mark === undefined) {
    mark = { [ATTR_TOOLWATCH_EVALUATION_SKIPPED]: reason };
    SKIPPED_MARKS.set(reason, mark);
  }
  return mark;
}

/** A verdict as span data: the summary attributes and one event's attributes per result. */
export interface VerdictTelemetry {
  attributes: Attributes;
  events: Attributes[];
}

export function verdictTelemetry(verdict: Verdict, redact: RedactOptions): VerdictTelemetry {
  const events: Attributes[] = [];
  for (const result of verdict.results) events.push(evaluationEventAttributes(result, redact));
  return { attributes: verdictAttributes(verdict), events };
}

/** A copy of the ending span's end time, or undefined (the SDK then reads its clock) when it is not set yet. */
function endTimeOf(span: ReadableSpan): HrTime | undefined {
  const end = span.endTime;
  if (end === undefined || (end[0] === 0 && end[1] === 0)) return undefined;
  return [end[0], end[1]];
}

/**
 * Appends one evaluation event per attribute set to a span while it ends. The SDK's
 * `addEvent` checks and copies every attribute twice; an event the SDK would store
 * unchanged (strings, numbers and booleans, within the per-event count and value-length
 * limits, a time given) is stored as it would be, without that work: the same object shape,
 * copied when its attributes are shared by every run. Anything else goes through `addEvent`.
 */
function appendEvents(
  span: ReadableSpan,
  events: readonly Attributes[],
  time: HrTime | undefined,
  shared: boolean,
): void {
  const limits = (span as unknown as LimitedSpan)._spanLimits;
  const stored = span.events as TimedEvent[];
  const direct = time !== undefined && limits !== undefined && Array.isArray(stored) && span.ended === false;
  for (const attributes of events) {
    if (direct && storedUnchanged(attributes, limits)) {
      stored.push({
        name: EVENT_GEN_AI_EVALUATION_RESULT,
        attributes: shared ? { ...attributes } : attributes,
        time,
        droppedAttributesCount: 0,
      });
    } else {
      (span as unknown as Span).addEvent(EVENT_GEN_AI_EVALUATION_RESULT, attributes, time);
    }
  }
}

/** Whether the SDK would store these event attributes as they are (nothing dropped, truncated or copied differently). */
function storedUnchanged(attributes: Attributes, limits: NonNullable<LimitedSpan['_spanLimits']>): boolean {
  const perEvent = limits.attributePerEventCountLimit ?? Number.POSITIVE_INFINITY;
  const length = limits.attributeValueLengthLimit ?? Number.POSITIVE_INFINITY;
  let count = 0;
  for (const key in attributes) {
    const value = attributes[key];
    if (typeof value === 'string') {
      if (value.length > length) return false;
    } else if (typeof value !== 'number' && typeof value !== 'boolean') return false;
    if (++count > perEvent) return false;
  }
  return true;
}

/** Whether the span takes every attribute and event of a verdict without dropping any of its own. */
function hasRoom(span: ReadableSpan, attributes: Attributes, events: number): boolean {
  const limited = span as unknown as LimitedSpan;
  const limits = limited._spanLimits;
  if (limits === undefined) return true;
  const eventLimit = limits.eventCountLimit;
  if (eventLimit !== undefined && span.events.length + events > eventLimit) return false;
  const attributeLimit = limits.attributeCountLimit;
  if (attributeLimit === undefined) return true;
  let count = limited._attributesCount ?? Object.keys(span.attributes).length;
  for (const key in attributes) if (!(key in span.attributes)) count++;
  return count <= attributeLimit;
}
