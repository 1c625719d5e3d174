import type { Attributes, Histogram, Meter, MeterProvider } from '@opentelemetry/api';
import { createNoopMeter } from '@opentelemetry/api';
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_EVALUATION_NAME,
  ATTR_GEN_AI_EVALUATION_SCORE_LABEL,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_OUTCOME,
  ATTR_REASON,
  ATTR_TOOLWATCH_GUARD_DECISION,
  ATTR_TOOLWATCH_GUARD_KIND,
  ATTR_TOOLWATCH_MISUSE_KIND,
  ATTR_TOOLWATCH_RULE,
  ATTR_TOOLWATCH_TOOL_STATUS,
  METRIC_TOOLWATCH_EVALUATION_SCORE,
  METRIC_TOOLWATCH_EVALUATIONS,
  METRIC_TOOLWATCH_JUDGE_CALLS,
  METRIC_TOOLWATCH_PROCESSOR_SPANS_DROPPED,
  METRIC_TOOLWATCH_PROCESSOR_TRACES_BUFFERED,
  METRIC_TOOLWATCH_RUNS_SKIPPED,
  METRIC_TOOLWATCH_RUNS_UNMATCHED,
  METRIC_TOOLWATCH_TOOL_EXECUTIONS,
  METRIC_TOOLWATCH_TOOL_GUARD_DECISIONS,
  METRIC_TOOLWATCH_TOOL_MISUSE,
} from '../semconv.js';
import type { MisuseKind, Policy, ResultLabel, ScorerResult, ToolStatus } from '../types.js';
import { type AggregatedCounter, aggregatedCounter } from './aggregated-counter.js';
import { cappedName } from './capped-name.js';

/** Name of the meter toolwatch asks the `MeterProvider` for. */
export const TOOLWATCH_METER_NAME = 'toolwatch';

export type JudgeCallOutcome = 'ok' | 'error' | 'skipped_budget';

/**
 * What happened to a guarded call: `deny` (refused), `would_deny` (a rule denies it but does
 * not enforce: observe mode, or no guard), `allow`; `error` when the guard itself failed.
 */
export type GuardOutcome = 'allow' | 'deny' | 'would_deny' | 'error';

export interface ToolwatchMetricsOptions {
  /** Where the instruments live. Default: a no-op meter, so metrics cost nothing unless asked for. */
  meterProvider?: MeterProvider;
  /** When given, every (scorer, label) and (rule, misuse kind) series it implies is created at 0. */
  policy?: Policy;
}

const LABELS: readonly ResultLabel[] = ['pass', 'fail', 'error', 'skipped'];
const MISUSE_KINDS: readonly MisuseKind[] = ['forbidden', 'unexpected', 'call_budget', 'repeated_call'];
/** The reasons a matched run is not judged in process: its series start at 0 for every rule. */
const SKIP_REASONS: readonly string[] = ['sampled_out', 'incomplete_trace'];
const GLOB_CHARS = /[*?[\]{}]/;

/**
 * Every instrument of docs/metrics.md in one place. Counters start at 0 for the series a policy
 * implies, because Prometheus' `increase()` cannot see a series' first sample: an alert on the
 * first failure needs the series to exist before it. Counters are summed in process and read
 * by the meter's readers when they collect (`AggregatedCounter`): recording one costs a few
 * map lookups rather than the SDK's hashing of the attribute set, which would otherwise be the
 * largest part of a run's cost on the hot path.
 */
export class ToolwatchMetrics {
  private readonly _evaluations: AggregatedCounter;
  private readonly _score: Histogram;
  private readonly _toolExecutions: AggregatedCounter;
  private readonly _misuse: AggregatedCounter;
  private readonly _guardDecisions: AggregatedCounter;
  private readonly _judgeCalls: AggregatedCounter;
  private readonly _runsSkipped: AggregatedCounter;
  private readonly _spansDropped: AggregatedCounter;
  private readonly _tracesBuffered: AggregatedCounter;
  private readonly _runsUnmatched: AggregatedCounter;
  /** False with the no-op meter: per-run records then skip all work. */
  private readonly _recording: boolean;

  constructor(options: ToolwatchMetricsOptions = {}) {
    this._recording = options.meterProvider !== undefined;
    const meter: Meter = options.meterProvider
      ? options.meterProvider.getMeter(TOOLWATCH_METER_NAME)
      : createNoopMeter();
    this._evaluations = aggregatedCounter(
      meter,
      METRIC_TOOLWATCH_EVALUATIONS,
      { unit: '{evaluation}', description: 'Scorer results, by scorer, label, agent and rule.' },
      [
        ATTR_GEN_AI_EVALUATION_NAME,
        ATTR_GEN_AI_EVALUATION_SCORE_LABEL,
        ATTR_GEN_AI_AGENT_NAME,
        ATTR_TOOLWATCH_RULE,
      ],
    );
    this._score = meter.createHistogram(METRIC_TOOLWATCH_EVALUATION_SCORE, {
      unit: '1',
      description: 'Scores in [0, 1], by scorer and agent.',
      advice: { explicitBucketBoundaries: [0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1] },
    });
    this._toolExecutions = aggregatedCounter(
      meter,
      METRIC_TOOLWATCH_TOOL_EXECUTIONS,
      { unit: '{execution}', description: 'Tool executions seen in agent runs, by tool, status and agent.' },
      [ATTR_GEN_AI_TOOL_NAME, ATTR_TOOLWATCH_TOOL_STATUS, ATTR_GEN_AI_AGENT_NAME],
    );
    this._misuse = aggregatedCounter(
      meter,
      METRIC_TOOLWATCH_TOOL_MISUSE,
      {
        unit: '{event}',
        description: 'Live tool misuse (forbidden, unexpected, call budget, repeated call).',
      },
      [ATTR_TOOLWATCH_MISUSE_KIND, ATTR_GEN_AI_TOOL_NAME, ATTR_GEN_AI_AGENT_NAME, ATTR_TOOLWATCH_RULE],
    );
    this._guardDecisions = aggregatedCounter(
      meter,
      METRIC_TOOLWATCH_TOOL_GUARD_DECISIONS,
      {
        unit: '{decision}',
        description:
          'Guard decisions on tool calls (allow, deny, would_deny, error), by check kind, tool, agent and rule.',
      },
      [
        ATTR_TOOLWATCH_GUARD_DECISION,
        ATTR_TOOLWATCH_GUARD_KIND,
        ATTR_GEN_AI_TOOL_NAME,
        ATTR_GEN_AI_AGENT_NAME,
        ATTR_TOOLWATCH_RULE,
      ],
    );
    this._judgeCalls = aggregatedCounter(
      meter,
      METRIC_TOOLWATCH_JUDGE_CALLS,
      { unit: '{call}', description: 'LLM judge calls, by scorer and outcome.' },
      [ATTR_GEN_AI_EVALUATION_NAME, ATTR_OUTCOME],
    );
    this._runsSkipped = aggregatedCounter(
      meter,
      METRIC_TOOLWATCH_RUNS_SKIPPED,
      {
        unit: '{run}',
        description: 'Matched runs not judged (out of the sample, incomplete), by rule and reason.',
      },
      [ATTR_TOOLWATCH_RULE, ATTR_REASON],
    );
    this._spansDropped = aggregatedCounter(
      meter,
      METRIC_TOOLWATCH_PROCESSOR_SPANS_DROPPED,
      { unit: '{span}', description: 'Spans the processor could not keep for evaluation, by reason.' },
      [ATTR_REASON],
    );
    this._tracesBuffered = aggregatedCounter(
      meter,
      METRIC_TOOLWATCH_PROCESSOR_TRACES_BUFFERED,
      { unit: '{trace}', description: 'Agent traces currently held in memory by the processor.' },
      [],
      'up_down',
    );
    this._runsUnmatched = aggregatedCounter(
      meter,
      METRIC_TOOLWATCH_RUNS_UNMATCHED,
      { unit: '{run}', description: 'Outermost agent runs no rule of the policy matched, by agent.' },
      [ATTR_GEN_AI_AGENT_NAME],
    );
    if (options.policy) this.initialize(options.policy);
  }

  /**
   * Creates the zero series of a policy. The agent attribute is set when a rule names one agent
   * literally; for glob rules the agent is unknown until a run arrives, so it is left out.
   */
  initialize(policy: Policy): void {
    for (const rule of policy.rules) {
      const agent = literalAgent(rule.match.agent);
      for (const scorer of rule.scorers) {
        for (const label of LABELS) {
          const attributes: Attributes = {
            [ATTR_GEN_AI_EVALUATION_NAME]: scorer.name,
            [ATTR_GEN_AI_EVALUATION_SCORE_LABEL]: label,
            [ATTR_TOOLWATCH_RULE]: rule.name,
          };
          if (agent !== undefined) attributes[ATTR_GEN_AI_AGENT_NAME] = agent;
          this._evaluations.seed(attributes);
        }
      }
      for (const kind of MISUSE_KINDS) {
        const attributes: Attributes = {
          [ATTR_TOOLWATCH_MISUSE_KIND]: kind,
          [ATTR_TOOLWATCH_RULE]: rule.name,
        };
        if (agent !== undefined) attributes[ATTR_GEN_AI_AGENT_NAME] = agent;
        this._misuse.seed(attributes);
      }
      for (const reason of SKIP_REASONS) {
        this._runsSkipped.seed({ [ATTR_TOOLWATCH_RULE]: rule.name, [ATTR_REASON]: reason });
      }
    }
  }

  recordResult(result: ScorerResult, agent: string, rule: string): void {
    if (!this._recording) return;
    const name = cappedName(agent);
    this._evaluations.add(1, result.scorer, result.label, name, rule);
    // Skipped results carry no score worth averaging.
    if (result.label !== 'skipped' && Number.isFinite(result.score)) {
      this._score.record(result.score, {
        [ATTR_GEN_AI_EVALUATION_NAME]: result.scorer,
        [ATTR_GEN_AI_AGENT_NAME]: name,
      });
    }
  }

  recordToolExecution(tool: string, status: ToolStatus, agent: string): void {
    if (!this._recording) return;
    this._toolExecutions.add(1, cappedName(tool), status, cappedName(agent));
  }

  recordMisuse(kind: MisuseKind, tool: string, agent: string, rule: string): void {
    if (!this._recording) return;
    this._misuse.add(1, kind, cappedName(tool), cappedName(agent), rule);
  }

  /** One guard decision; `kind` and `rule` are empty for an allow, `agent` when no run was found. */
  recordGuardDecision(outcome: GuardOutcome, kind: string, tool: string, agent: string, rule: string): void {
    if (!this._recording) return;
    this._guardDecisions.add(1, outcome, kind, cappedName(tool), cappedName(agent), rule);
  }

  recordJudgeCall(scorer: string, outcome: JudgeCallOutcome): void {
    if (!this._recording) return;
    this._judgeCalls.add(1, scorer, outcome);
  }

  /** An outermost agent run no rule matched (so it got no verdict). */
  recordUnmatchedRun(agent: string): void {
    if (this._recording) this._runsUnmatched.add(1, cappedName(agent));
  }

  /** A matched run got a `skipped` record under `rule` instead of a verdict (coverage: compare with `toolwatch.evaluations`). */
  recordRunSkipped(rule: string, reason: string): void {
    if (this._recording) this._runsSkipped.add(1, rule, reason);
  }

  recordSpansDropped(reason: string, count = 1): void {
    if (this._recording && count > 0) this._spansDropped.add(count, reason);
  }

  tracesBuffered(delta: number): void {
    if (this._recording) this._tracesBuffered.add(delta);
  }
}

function literalAgent(glob: string | undefined): string | undefined {
  return glob !== undefined && !GLOB_CHARS.test(glob) ? cappedName(glob) : undefined;
}
