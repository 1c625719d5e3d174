import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { Verdict } from '../../../src/types.js';

/** What one verdict looks like in telemetry: the summary attributes and one event per result. */
export interface EmittedVerdict {
  /** `span`: written on the agent span itself; `evaluate`: on an `evaluate {agent}` span parented to it. */
  where: 'span' | 'evaluate';
  spanId: string;
  passed: unknown;
  failed: unknown;
  rule: unknown;
  policyDigest: unknown;
  events: Array<Record<string, unknown>>;
}

/** The telemetry a verdict must produce, derived from the verdict object alone. */
export function expectedTelemetry(verdict: Verdict) {
  return {
    passed: verdict.passed,
    failed: [
      ...new Set(
        verdict.results.filter((r) => r.label === 'fail' || r.label === 'error').map((r) => r.scorer),
      ),
    ],
    rule: verdict.rule,
    policyDigest: verdict.policy_digest,
    events: verdict.results.map((r) => ({
      name: r.scorer,
      score: r.score,
      label: r.label,
      explanation: r.reason ?? '',
      kind: r.kind,
      digest: r.digest,
    })),
  };
}

function read(span: ReadableSpan, where: EmittedVerdict['where'], spanId: string): EmittedVerdict {
  return {
    where,
    spanId,
    passed: span.attributes['toolwatch.evaluation.passed'],
    failed: span.attributes['toolwatch.evaluation.failed'],
    rule: span.attributes['toolwatch.evaluation.rule'],
    policyDigest: span.attributes['toolwatch.evaluation.policy_digest'],
    events: span.events
      .filter((e) => e.name === 'gen_ai.evaluation.result')
      .map((e) => ({
        name: e.attributes?.['gen_ai.evaluation.name'],
        score: e.attributes?.['gen_ai.evaluation.score.value'],
        label: e.attributes?.['gen_ai.evaluation.score.label'],
        explanation: e.attributes?.['gen_ai.evaluation.explanation'],
        kind: e.attributes?.['toolwatch.scorer.kind'],
        digest: e.attributes?.['toolwatch.scorer.digest'],
      })),
  };
}

/**
 * Every verdict written into telemetry: on exported agent spans (in place) and on the
 * processor's own `evaluate {agent}` spans (keyed by the run span they are parented to).
 */
export function emittedVerdicts(
  exported: readonly ReadableSpan[],
  emitted: readonly ReadableSpan[],
): EmittedVerdict[] {
  const found: EmittedVerdict[] = [];
  for (const span of exported) {
    if (span.attributes['toolwatch.evaluation.rule'] !== undefined) {
      found.push(read(span, 'span', span.spanContext().spanId));
    }
  }
  for (const span of emitted) {
    if (!span.name.startsWith('evaluate ')) continue;
    const parent = span.parentSpanContext?.spanId;
    const linked = span.links.some((l) => l.context.spanId === parent);
    // An evaluate span that is not parented to (and linked to) its run span is reported as such.
    found.push(read(span, 'evaluate', linked && parent !== undefined ? parent : `unlinked:${span.name}`));
  }
  return found;
}
