/**
 * The gateway (spans arriving in any order, split over any number of requests, assembled
 * into traces and judged after the decision wait) against `evaluateTraces` on the same
 * spans: seeded random traces must get the same results, counted per scorer, label, agent
 * and rule (the gateway's `toolwatch_evaluations_total`).
 */
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluateTraces } from '../../src/evaluation/evaluate-traces.js';
import { ToolwatchGateway } from '../../src/gateway/toolwatch-gateway.js';
import { parsePolicyText } from '../../src/policy/load-policy.js';
import {
  conventions,
  DIFFERENTIAL_POLICY,
  delivered,
  delivery,
  implicitRunAroundAgents,
  interleaving,
  Program,
  runInterleaved,
  trees,
} from '../helpers/random-traces.js';
import { spansToOtlpJson } from '../interop/harness/spans-to-otlp-json.js';
import { protobufOf } from './helpers.js';

const policy = parsePolicyText(DIFFERENTIAL_POLICY);

describe('the gateway and offline evaluation agree on random traces', () => {
  it('counts the same results, however the spans are ordered and split into requests', {
    timeout: 300_000,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(
        trees,
        interleaving,
        delivery,
        conventions,
        async (drawn, order, sent, drawnConventions) => {
          fc.pre(!drawn.some(implicitRunAroundAgents));
          const exporter = new InMemorySpanExporter();
          const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
          runInterleaved(new Program(provider.getTracer('fuzz')), drawn, order, drawnConventions);
          const spans = [...exporter.getFinishedSpans()];
          await provider.shutdown();
          const offline = await evaluateTraces(spansToOtlpJson(spans), policy);

          let now = 0;
          const gateway = new ToolwatchGateway({ policy, decisionWaitMs: 100, now: () => now });
          for (const request of delivered(spans, sent)) {
            gateway.ingest(protobufOf(request), 'http');
            now += 10;
          }
          for (let i = 0; i < 5; i++) {
            now += 1000;
            await gateway.tick();
          }

          const expected = new Map<string, { labels: Record<string, string>; count: number }>();
          for (const verdict of offline) {
            for (const result of verdict.results) {
              const labels = {
                'gen_ai.evaluation.name': result.scorer,
                'gen_ai.evaluation.score.label': result.label,
                'gen_ai.agent.name': verdict.agent,
                'toolwatch.rule': verdict.rule,
              };
              const k = JSON.stringify(labels);
              const seen = expected.get(k) ?? { labels, count: 0 };
              seen.count++;
              expected.set(k, seen);
            }
          }
          const counted = [...expected.values()].map((e) => [
            e.labels,
            gateway.registry.value('toolwatch_evaluations_total', e.labels),
          ]);
          expect(counted).toEqual([...expected.values()].map((e) => [e.labels, e.count]));
          // Nothing else judged, and nothing left held.
          const results = offline.reduce((n, v) => n + v.results.length, 0);
          expect(gateway.registry.total('toolwatch_evaluations_total')).toBe(results);
          expect(gateway.registry.value('toolwatch_gateway_spans_held')).toBe(0);
          await gateway.close(100);
        },
      ),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 60), seed: Number(process.env.FUZZ_SEED ?? 20261207) },
    );
  });
});
