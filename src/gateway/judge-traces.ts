import { verdictAttributes } from '../emission/attributes.js';
import { evaluationEventAttributes } from '../emission/events.js';
import type { ToolwatchMetrics } from '../emission/metrics.js';
import { skippedEvaluation } from '../evaluation/evaluate-run.js';
import { evaluateTraces, type UnmatchedRun } from '../evaluation/evaluate-traces.js';
import type { JudgeLimiter } from '../evaluation/judge-limiter.js';
import { appendToSpan, DoubleValue, type EventToAdd } from '../otlp/encode-values.js';
import type { RawSpan } from '../otlp/trace-request-splice.js';
import { resultMisuse } from '../scorers/result-readers.js';
import {
  ATTR_GEN_AI_EVALUATION_SCORE_VALUE,
  ATTR_TOOLWATCH_EVALUATION_FAILED,
  ATTR_TOOLWATCH_EVALUATION_PASSED,
  ATTR_TOOLWATCH_EVALUATION_SPAN_ID_CONFLICTS,
  ATTR_TOOLWATCH_KEEP,
  EVENT_GEN_AI_EVALUATION_RESULT,
} from '../semconv.js';
import type { JudgeFunction, Policy, Problem, Verdict } from '../types.js';
import { type BufferedTrace, listedConflicts } from './trace-assembler.js';

export interface JudgeOptions {
  judges?: Record<string, JudgeFunction | unknown>;
  /** One budget for the gateway's lifetime, so `max_per_minute` holds across batches. */
  limiter: JudgeLimiter;
  metrics: ToolwatchMetrics;
  problems: Problem[];
}

/**
 * Judges complete traces through `evaluateTraces` — the one pipeline the processor and the
 * CLI use — and writes each verdict onto its agent span's bytes: the summary attributes and
 * one `gen_ai.evaluation.result` event per result, as the processor does in `onEnding`.
 * Returns the traces' spans, ready to forward, the verdicts, and the runs no rule matched.
 */
export async function judgeTraces(
  traces: readonly BufferedTrace[],
  policy: Policy,
  options: JudgeOptions,
): Promise<{ spans: RawSpan[]; verdicts: Verdict[]; unmatched: UnmatchedRun[] }> {
  const spans = traces.flatMap((t) => t.spans);
  const judged =
    spans.length === 0
      ? undefined
      : await evaluateTraces(spans, policy, {
          ...(options.judges ? { judges: options.judges } : {}),
          limiter: options.limiter,
          problems: options.problems,
        });
  const verdicts = withoutPartialVerdicts(judged ?? [], traces, policy);
  const bySpan = new Map<string, Verdict[]>();
  for (const verdict of verdicts) {
    const key = verdict.trace_id + verdict.span_id;
    const list = bySpan.get(key);
    if (list) list.push(verdict);
    else bySpan.set(key, [verdict]);
    recordMetrics(verdict, options.metrics);
  }
  const raw: RawSpan[] = [];
  for (const trace of traces) {
    for (const span of trace.raw) {
      // A span that reused another's id was judged under its alias (see TraceAssembler.add).
      const key = span.traceId + (trace.aliases.get(span) ?? span.spanId);
      const list = bySpan.get(key);
      if (list) {
        const attributes = mergedAttributes(list);
        if (trace.conflicts.size > 0) {
          // Every verdict of the trace says so, and asks tail sampling to keep the trace.
          attributes[ATTR_TOOLWATCH_EVALUATION_SPAN_ID_CONFLICTS] = listedConflicts(trace);
          attributes[ATTR_TOOLWATCH_KEEP] = true;
        }
        span.bytes = appendToSpan(span.bytes, attributes, events(list, span, policy));
        bySpan.delete(key);
      }
      raw.push(span);
    }
  }
  return { spans: raw, verdicts, unmatched: judged?.unmatched ?? [] };
}

/**
 * A trace that reached its span limit was judged on the spans before it; every later one
 * passes unjudged, so a run padded with filler before a forbidden call would pass. Its runs
 * get `skipped: incomplete_trace` records instead, as the span processor's do past its limit.
 */
function withoutPartialVerdicts(
  verdicts: Verdict[],
  traces: readonly BufferedTrace[],
  policy: Policy,
): Verdict[] {
  const truncated = new Set<string>();
  for (const trace of traces) if (trace.full) truncated.add(trace.traceId);
  if (truncated.size === 0) return verdicts;
  return verdicts.map((v) => {
    const rule = truncated.has(v.trace_id) ? policy.rules.find((r) => r.name === v.rule) : undefined;
    if (!rule) return v;
    const subject = { traceId: v.trace_id, spanId: v.span_id, agent: v.agent };
    return skippedEvaluation(subject, rule, policy, 'incomplete_trace').verdict;
  });
}

/**
 * One set of summary attributes for a span several rules judged: failed if any verdict
 * failed, passed if some passed and none failed (absent when no rule judged the run), failed
 * scorers of all, keep if any; rule and digest of the first.
 */
function mergedAttributes(verdicts: readonly Verdict[]): Record<string, unknown> {
  const attributes: Record<string, unknown> = { ...verdictAttributes(verdicts[0]!) };
  for (const verdict of verdicts.slice(1)) {
    const next = verdictAttributes(verdict);
    const [a, b] = [attributes[ATTR_TOOLWATCH_EVALUATION_PASSED], next[ATTR_TOOLWATCH_EVALUATION_PASSED]];
    if (a === false || b === false) attributes[ATTR_TOOLWATCH_EVALUATION_PASSED] = false;
    else if (a === true || b === true) attributes[ATTR_TOOLWATCH_EVALUATION_PASSED] = true;
    attributes[ATTR_TOOLWATCH_KEEP] =
      attributes[ATTR_TOOLWATCH_KEEP] === true || next[ATTR_TOOLWATCH_KEEP] === true;
    const failed = new Set([
      ...(attributes[ATTR_TOOLWATCH_EVALUATION_FAILED] as string[]),
      ...(next[ATTR_TOOLWATCH_EVALUATION_FAILED] as string[]),
    ]);
    attributes[ATTR_TOOLWATCH_EVALUATION_FAILED] = [...failed];
  }
  return attributes;
}

function events(verdicts: readonly Verdict[], span: RawSpan, policy: Policy): EventToAdd[] {
  // At the span's end, where the processor adds them (`onEnding`); now for a span without one.
  const time = span.endTimeUnixNano > 0n ? span.endTimeUnixNano : BigInt(Date.now()) * 1_000_000n;
  return verdicts.flatMap((v) =>
    v.results.map((result) => {
      const attributes: Record<string, unknown> = evaluationEventAttributes(result, policy.redact);
      // A double on the wire, whole numbers included: one attribute, one type (the convention's).
      attributes[ATTR_GEN_AI_EVALUATION_SCORE_VALUE] = new DoubleValue(
        attributes[ATTR_GEN_AI_EVALUATION_SCORE_VALUE] as number,
      );
      return { name: EVENT_GEN_AI_EVALUATION_RESULT, timeUnixNano: time, attributes };
    }),
  );
}

/**
 * Results by scorer and label, and the misuse the results show, as their scorer kind reads
 * it: the gateway sees a run when it is complete, so misuse is counted from the verdict
 * rather than live.
 */
function recordMetrics(verdict: Verdict, metrics: ToolwatchMetrics): void {
  for (const result of verdict.results) {
    metrics.recordResult(result, verdict.agent, verdict.rule);
    for (const { kind, tool } of resultMisuse(result))
      metrics.recordMisuse(kind, tool, verdict.agent, verdict.rule);
  }
}
