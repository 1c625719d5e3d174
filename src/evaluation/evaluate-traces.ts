import { spansFromOtlpJson } from '../conventions/from-otlp-json.js';
import { reconstructTrace } from '../reconstruction/reconstruct-trace.js';
import { runsInOrder } from '../reconstruction/run-tree.js';
import type {
  AgentRun,
  JudgeFunction,
  Policy,
  Problem,
  ReconstructedTrace,
  Rule,
  ScorerResult,
  SpanLike,
  Verdict,
} from '../types.js';
import { completeRunAsync, evaluateRun, finalizeVerdict, type RunEvaluation } from './evaluate-run.js';
import { JudgeLimiter } from './judge-limiter.js';

export interface EvaluateTracesOptions {
  /** Judges by name for `llm_judge` scorers. Default none (judges then report `error`). */
  judges?: Record<string, JudgeFunction | unknown>;
  /** Clock for the judge budget. Default `Date.now`. */
  now?: () => number;
  /** Shared judge budget, e.g. across several calls. Default: a fresh one from the policy. */
  limiter?: JudgeLimiter;
  /** Decoding and reconstruction problems are appended here. Default: dropped. */
  problems?: Problem[];
  /**
   * The result's `unmatched` runs are also appended here, as whole `AgentRun`s (their calls
   * and nested runs included), for a caller that reads more than their ids and names: the
   * outermost runs no rule matched, in the order the result lists them. Default: not collected.
   */
  unmatched?: AgentRun[];
  signal?: AbortSignal;
}

/**
 * An unmatched run: an outermost agent run that no rule of the policy matched, so it got no
 * verdict. A nested run is part of its outermost run, never unmatched on its own.
 */
export interface UnmatchedRun {
  trace_id: string;
  span_id: string;
  agent: string;
}

/**
 * The verdicts (an array, as before), with what they were drawn from: how many outermost
 * agent runs the input held, and those no rule matched. `runs: 0` means no span was read as
 * an agent run of any convention toolwatch reads; a non-empty `unmatched` means rules whose
 * `match` (an agent glob, attributes) fits none of these runs.
 */
export type EvaluatedTraces = Verdict[] & {
  /** Outermost agent runs found (nested runs are part of theirs). */
  runs: number;
  /** Outermost runs no rule matched, trace by trace as the input gave them. */
  unmatched: UnmatchedRun[];
};

/** What judging a set of traces gives: verdicts, and the runs they were drawn from. */
export interface TraceJudgement {
  verdicts: Verdict[];
  /** Outermost agent runs found. */
  runs: number;
  unmatched: UnmatchedRun[];
  /**
   * With `keepFailingRuns`: for each verdict (same index), its run when the verdict failed,
   * for reports that show what was rebuilt.
   */
  failingRuns?: Array<AgentRun | undefined>;
}

interface Entry {
  run: AgentRun;
  rule: Rule;
  ruleIndex: number;
  evaluation: RunEvaluation;
}

/**
 * Evaluates traces offline with the same pipeline as the span processor (`evaluateRun`):
 * decode, group by trace, reconstruct runs, and for every run (nested runs too, for rules with
 * `root_only: false`) that a rule matches, one verdict per (run, rule). `input` is OTLP/JSON
 * (an `ExportTraceServiceRequest` object or text, JSON Lines, or an array of those) or
 * `SpanLike[]`. Verdicts are ordered by trace id, run start, span id, then rule order, so
 * the order of spans in the input never changes the output.
 */
export async function evaluateTraces(
  input: unknown,
  policy: Policy,
  options: EvaluateTracesOptions = {},
): Promise<EvaluatedTraces> {
  const problems = options.problems ?? [];
  const judgement = await judgeTraces(
    reconstructEach(decode(input, problems), problems),
    policy,
    options,
    problems,
    false,
  );
  // Not enumerable: the result still equals (deepStrictEqual, toEqual) the plain verdict array
  // callers compare it with.
  return Object.defineProperties(judgement.verdicts, {
    runs: { value: judgement.runs },
    unmatched: { value: judgement.unmatched },
  }) as EvaluatedTraces;
}

/**
 * `evaluateTraces` for the spans of one trace, already decoded and grouped (the CLI's trace
 * window): no shape check or regrouping per span, and no promise when no judge runs, so a
 * stream of small traces pays for neither. Same verdicts as `evaluateTraces(spans)`.
 */
export function evaluateTraceSpans(
  spans: SpanLike[],
  policy: Policy,
  options: EvaluateTracesOptions = {},
  keepFailingRuns = false,
): TraceJudgement | Promise<TraceJudgement> {
  const problems = options.problems ?? [];
  const traces: ReconstructedTrace[] = [];
  if (spans.length > 0) {
    const trace = reconstructOne(spans[0]!.traceId, spans, problems);
    if (trace) traces.push(trace);
  }
  return judgeTraces(traces, policy, options, problems, keepFailingRuns);
}

function judgeTraces(
  traces: ReconstructedTrace[],
  policy: Policy,
  options: EvaluateTracesOptions,
  problems: Problem[],
  keepFailingRuns: boolean,
): TraceJudgement | Promise<TraceJudgement> {
  const entries: Entry[] = [];
  const unmatched: UnmatchedRun[] = [];
  let runs = 0;
  let pending = 0;
  for (const trace of traces) {
    for (const p of trace.problems) problems.push(p);
    runs += trace.runs.length;
    for (const run of runsInOrder(trace.runs)) {
      const evaluations = evaluateRun(run, policy);
      if (evaluations.length === 0 && run.parent === undefined) {
        unmatched.push({ trace_id: run.traceId, span_id: run.spanId, agent: run.agent });
        options.unmatched?.push(run);
      }
      for (const evaluation of evaluations) {
        pending += evaluation.pending.length;
        entries.push({
          run,
          rule: evaluation.rule,
          ruleIndex: policy.rules.indexOf(evaluation.rule),
          evaluation,
        });
      }
    }
  }
  if (entries.length > 1) entries.sort(compareEntries);
  const judged = (verdicts: Verdict[]): TraceJudgement => ({
    verdicts,
    runs,
    unmatched,
    ...(keepFailingRuns
      ? { failingRuns: verdicts.map((v, i) => (v.passed === false ? entries[i]!.run : undefined)) }
      : {}),
  });
  if (pending === 0) return judged(entries.map((e) => e.evaluation.verdict));
  return runJudges(entries, policy, options).then(judged);
}

async function runJudges(
  entries: Entry[],
  policy: Policy,
  options: EvaluateTracesOptions,
): Promise<Verdict[]> {
  const limiter =
    options.limiter ??
    new JudgeLimiter(
      { maxPerMinute: policy.judge.maxPerMinute, maxConcurrent: policy.judge.maxConcurrent },
      options.now,
    );
  // One work item per judge call, taken in verdict order by as many workers as the budget
  // allows in flight: concurrency alone never refuses a call, and each call asks the limiter
  // as it is taken, so which calls the per-minute budget admits does not depend on latency.
  const items = entries.flatMap((e, i) => e.evaluation.pending.map((judge) => ({ e, i, judge })));
  const extras = entries.map(() => [] as ScorerResult[]);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const { e, i, judge } = items[next++]!;
      const results = await completeRunAsync(
        e.run,
        e.rule,
        policy,
        { pending: [judge], reasons: e.evaluation.reasons },
        {
          ...(options.judges ? { judges: options.judges } : {}),
          limiter,
          ...(options.signal ? { signal: options.signal } : {}),
        },
      );
      extras[i]!.push(...results);
    }
  };
  const workers = Math.max(1, Math.min(policy.judge.maxConcurrent, items.length));
  await Promise.all(Array.from({ length: workers }, worker));
  const verdicts = entries.map((e, i) =>
    extras[i]!.length > 0 ? finalizeVerdict(e.evaluation.verdict, extras[i]!, e.rule) : e.evaluation.verdict,
  );
  return verdicts;
}

/**
 * Each trace reconstructed on its own, so that a trace that breaks reconstruction costs
 * only its own verdicts (recorded as a problem) rather than the whole batch.
 */
function reconstructEach(spans: SpanLike[], problems: Problem[]): ReconstructedTrace[] {
  const groups = new Map<string, SpanLike[]>();
  for (const span of spans) {
    const group = groups.get(span.traceId);
    if (group) group.push(span);
    else groups.set(span.traceId, [span]);
  }
  const out: ReconstructedTrace[] = [];
  for (const [traceId, group] of groups) {
    const trace = reconstructOne(traceId, group, problems);
    if (trace) out.push(trace);
  }
  return out;
}

function reconstructOne(
  traceId: string,
  spans: SpanLike[],
  problems: Problem[],
): ReconstructedTrace | undefined {
  try {
    return reconstructTrace(spans);
  } catch (err) {
    problems.push({
      code: 'reconstruction_failed',
      message: `trace ${traceId} could not be reconstructed: ${err instanceof Error ? err.message : String(err)}`,
      traceId,
    });
    return undefined;
  }
}

function compareEntries(a: Entry, b: Entry): number {
  return (
    compareStrings(a.run.traceId, b.run.traceId) ||
    a.run.start - b.run.start ||
    compareStrings(a.run.spanId, b.run.spanId) ||
    a.ruleIndex - b.ruleIndex
  );
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Spans from any accepted input shape; what cannot be read lands in `problems`. */
export function decode(input: unknown, problems: Problem[]): SpanLike[] {
  if (Array.isArray(input)) {
    if (input.length > 0 && input.every(isSpanLike)) return input as SpanLike[];
    const out: SpanLike[] = [];
    for (const item of input) {
      if (isSpanLike(item)) out.push(item);
      else for (const span of spansFromOtlpJson(item, problems)) out.push(span);
    }
    return out;
  }
  return spansFromOtlpJson(input, problems);
}

function isSpanLike(value: unknown): value is SpanLike {
  if (value === null || typeof value !== 'object') return false;
  const s = value as Partial<SpanLike>;
  return (
    typeof s.traceId === 'string' &&
    typeof s.spanId === 'string' &&
    typeof s.startTime === 'number' &&
    typeof s.attributes === 'object' &&
    s.attributes !== null
  );
}
