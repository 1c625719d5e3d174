import type { Attributes } from '@opentelemetry/api';
import type { DataPoint, MetricData } from '@opentelemetry/sdk-metrics';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import type { AgentRun, Policy, Rule, Scorer, ScorerResult } from '../../src/types.js';

/** A real MeterProvider whose metrics are read on demand. */
export function createMetrics() {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    meterProvider,
    /** Collects now and returns the latest value of every metric by instrument name. */
    async collect(): Promise<Map<string, MetricData>> {
      exporter.reset();
      await reader.forceFlush();
      const byName = new Map<string, MetricData>();
      for (const resourceMetrics of exporter.getMetrics()) {
        for (const scope of resourceMetrics.scopeMetrics) {
          for (const metric of scope.metrics) byName.set(metric.descriptor.name, metric);
        }
      }
      return byName;
    },
    shutdown: () => meterProvider.shutdown(),
  };
}

/** The value of the data point whose attributes include `match`, or undefined. */
export function pointValue(metric: MetricData | undefined, match: Attributes): unknown {
  const point = metric?.dataPoints.find((p: DataPoint<unknown>) =>
    Object.entries(match).every(([k, v]) => p.attributes[k] === v),
  );
  return point?.value;
}

export interface FakeScorerOptions {
  name?: string;
  kind?: string;
  /** Decides pass/fail from the run; default passes when the run has at least one execution. */
  judge?: (run: AgentRun) => boolean;
  throws?: boolean;
  async?: boolean;
  /** For async scorers: the promise the scorer returns (to hang, or resolve later). */
  promise?: (run: AgentRun) => Promise<ScorerResult>;
}

/** A tiny custom scorer (the public `Scorer` interface), recording every run it saw. */
export function fakeScorer(options: FakeScorerOptions = {}): Scorer & { seen: AgentRun[] } {
  const name = options.name ?? 'fake';
  const kind = options.kind ?? 'custom';
  const seen: AgentRun[] = [];
  const scorer = {
    name,
    kind,
    digest: `digest-${name}`,
    async: options.async ?? false,
    config: {},
    seen,
    score(run: AgentRun): ScorerResult | Promise<ScorerResult> {
      seen.push(run);
      if (options.throws) throw new Error(`${name} exploded`);
      if (options.promise) return options.promise(run);
      const passed = (options.judge ?? ((r) => r.executions.length > 0))(run);
      return {
        scorer: name,
        kind,
        passed,
        score: passed ? 1 : 0,
        label: passed ? 'pass' : 'fail',
        reason: passed ? 'ok' : `calls: ${run.executions.map((e) => e.name).join(',')}`,
        digest: `digest-${name}`,
        detail: {},
      };
    },
  };
  return scorer;
}

/** A code-built policy. */
export function policyOf(
  rules: Array<Partial<Rule> & { scorers: Scorer[] }>,
  extra: Partial<Policy> = {},
): Policy {
  return {
    version: 1,
    sampling: { ratio: 1 },
    judge: { maxPerMinute: 30, maxConcurrent: 2, escalateOn: [] },
    redact: { values: false },
    gates: {},
    digest: 'policy-digest',
    ...extra,
    rules: rules.map((rule, i) => ({
      name: rule.name ?? `rule${i}`,
      match: rule.match ?? { rootOnly: true },
      scorers: rule.scorers,
    })),
  };
}
