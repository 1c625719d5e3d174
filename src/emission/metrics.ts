import type { Attributes, Counter, Histogram, Meter, MeterProvider, UpDownCounter } from '@opentelemetry/api';
import { createNoopMeter } from '@opentelemetry/api';
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_EVALUATION_NAME,
  ATTR_GEN_AI_EVALUATION_SCORE_LABEL,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_TOOLWATCH_MISUSE_KIND,
  ATTR_TOOLWATCH_RULE,
  ATTR_TOOLWATCH_TOOL_STATUS,
  METRIC_TOOLWATCH_EVALUATION_SCORE,
  METRIC_TOOLWATCH_EVALUATIONS,
  METRIC_TOOLWATCH_JUDGE_CALLS,
  METRIC_TOOLWATCH_PROCESSOR_SPANS_DROPPED,
  METRIC_TOOLWATCH_PROCESSOR_TRACES_BUFFERED,
  METRIC_TOOLWATCH_TOOL_EXECUTIONS,
  METRIC_TOOLWATCH_TOOL_MISUSE,
} from '../semconv.js';
import type { MisuseKind, Policy, ResultLabel, ScorerResult, ToolStatus } from '../types.js';

/** Name of the meter toolwatch asks the `MeterProvider` for. */
export const TOOLWATCH_METER_NAME = 'toolwatch';

export type JudgeCallOutcome = 'ok' | 'error' | 'skipped_budget';

export interface ToolwatchMetricsOptions {
  /** Where the instruments live. Default: a no-op meter, so metrics cost nothing unless asked for. */
  meterProvider?: MeterProvider;
  /** When given, every (scorer, label) and (rule, misuse kind) series it implies is created at 0. */
  policy?: Policy;
}

const LABELS: readonly ResultLabel[] = ['pass', 'fail', 'error', 'skipped'];
const MISUSE_KINDS: readonly MisuseKind[] = ['forbidden', 'unexpected', 'call_budget', 'repeated_call'];
const GLOB_CHARS = /[*?[\]{}]/;

/**
 * Every instrument of interfaces.md in one place. Counters start at 0 for the series a policy
 * implies, because Prometheus' `increase()` cannot see a series' first sample: an alert on the
 * first failure needs the series to exist before it.
 */
export class ToolwatchMetrics {
  private readonly _evaluations: Counter;
  private readonly _score: Histogram;
  private readonly _toolExecutions: Counter;
  private readonly _misuse: Counter;
  private readonly _judgeCalls: Counter;
  private readonly _spansDropped: Counter;
  private readonly _tracesBuffered: UpDownCounter;
  /** False with the no-op meter: per-run records then skip building their attribute sets. */
  private readonly _recording: boolean;

  constructor(options: ToolwatchMetricsOptions = {}) {
    this._recording = options.meterProvider !== undefined;
    const meter: Meter = options.meterProvider
      ? options.meterProvider.getMeter(TOOLWATCH_METER_NAME)
      : createNoopMeter();
    this._evaluations = meter.createCounter(METRIC_TOOLWATCH_EVALUATIONS, {
      unit: '{evaluation}',
      description: 'Scorer results, by scorer, label, agent and rule.',
    });
    this._score = meter.createHistogram(METRIC_TOOLWATCH_EVALUATION_SCORE, {
      unit: '1',
      description: 'Scores in [0, 1], by scorer and agent.',
      advice: { explicitBucketBoundaries: [0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1] },
    });
    this._toolExecutions = meter.createCounter(METRIC_TOOLWATCH_TOOL_EXECUTIONS, {
      unit: '{execution}',
      description: 'Tool executions seen in agent runs, by tool, status and agent.',
    });
    this._misuse = meter.createCounter(METRIC_TOOLWATCH_TOOL_MISUSE, {
      unit: '{event}',
      description: 'Live tool misuse (forbidden, unexpected, call budget, repeated call).',
    });
    this._judgeCalls = meter.createCounter(METRIC_TOOLWATCH_JUDGE_CALLS, {
      unit: '{call}',
      description: 'LLM judge calls, by scorer and outcome.',
    });
    this._spansDropped = meter.createCounter(METRIC_TOOLWATCH_PROCESSOR_SPANS_DROPPED, {
      unit: '{span}',
      description: 'Spans the processor could not keep for evaluation, by reason.',
    });
    this._tracesBuffered = meter.createUpDownCounter(METRIC_TOOLWATCH_PROCESSOR_TRACES_BUFFERED, {
      unit: '{trace}',
      description: 'Agent traces currently held in memory by the processor.',
    });
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
          this._evaluations.add(0, attributes);
        }
      }
      for (const kind of MISUSE_KINDS) {
        const attributes: Attributes = {
          [ATTR_TOOLWATCH_MISUSE_KIND]: kind,
          [ATTR_TOOLWATCH_RULE]: rule.name,
        };
        if (agent !== undefined) attributes[ATTR_GEN_AI_AGENT_NAME] = agent;
        this._misuse.add(0, attributes);
      }
    }
  }

  recordResult(result: ScorerResult, agent: string, rule: string): void {
    if (!this._recording) return;
    this._evaluations.add(1, {
      [ATTR_GEN_AI_EVALUATION_NAME]: result.scorer,
      [ATTR_GEN_AI_EVALUATION_SCORE_LABEL]: result.label,
      [ATTR_GEN_AI_AGENT_NAME]: agent,
      [ATTR_TOOLWATCH_RULE]: rule,
    });
    // Skipped results carry no score worth averaging.
    if (result.label !== 'skipped' && Number.isFinite(result.score)) {
      this._score.record(result.score, {
        [ATTR_GEN_AI_EVALUATION_NAME]: result.scorer,
        [ATTR_GEN_AI_AGENT_NAME]: agent,
      });
    }
  }

  recordToolExecution(tool: string, status: ToolStatus, agent: string): void {
    if (!this._recording) return;
    this._toolExecutions.add(1, {
      [ATTR_GEN_AI_TOOL_NAME]: tool,
      [ATTR_TOOLWATCH_TOOL_STATUS]: status,
      [ATTR_GEN_AI_AGENT_NAME]: agent,
    });
  }

  recordMisuse(kind: MisuseKind, tool: string, agent: string, rule: string): void {
    if (!this._recording) return;
    this._misuse.add(1, {
      [ATTR_TOOLWATCH_MISUSE_KIND]: kind,
      [ATTR_GEN_AI_TOOL_NAME]: tool,
      [ATTR_GEN_AI_AGENT_NAME]: agent,
      [ATTR_TOOLWATCH_RULE]: rule,
    });
  }

  recordJudgeCall(scorer: string, outcome: JudgeCallOutcome): void {
    this._judgeCalls.add(1, { [ATTR_GEN_AI_EVALUATION_NAME]: scorer, outcome });
  }

  recordSpansDropped(reason: string, count = 1): void {
    if (count > 0) this._spansDropped.add(count, { reason });
  }

  tracesBuffered(delta: number): void {
    this._tracesBuffered.add(delta);
  }
}

function literalAgent(glob: string | undefined): string | undefined {
  return glob !== undefined && !GLOB_CHARS.test(glob) ? glob : undefined;
}
