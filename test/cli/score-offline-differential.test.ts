/**
 * `toolwatch score` (streaming JSON Lines, spans grouped by trace in its window, verdicts
 * written as traces complete) against `evaluateTraces` on the same spans: seeded random
 * traces, their spans shuffled and split over lines, must get the same verdicts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { evaluateTraces } from '../../src/evaluation/evaluate-traces.js';
import { parsePolicyText } from '../../src/policy/load-policy.js';
import type { Verdict } from '../../src/types.js';
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

const dir = mkdtempSync(join(tmpdir(), 'toolwatch-score-differential-'));
const policyFile = join(dir, 'policy.yaml');
writeFileSync(policyFile, DIFFERENTIAL_POLICY);
const policy = parsePolicyText(DIFFERENTIAL_POLICY);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const key = (v: Verdict) => `${v.trace_id}\u0000${v.span_id}\u0000${v.rule}`;
const sorted = (verdicts: readonly Verdict[]) =>
  [...verdicts].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));

describe('toolwatch score and offline evaluation agree on random traces', () => {
  it('gives the same verdicts, however the spans are ordered and split over lines', {
    timeout: 300_000,
  }, async () => {
    let file = 0;
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

          // Spans in a random order, a random number per line (one OTLP/JSON request each).
          let text = '';
          for (const line of delivered(spans, sent)) text += `${JSON.stringify(spansToOtlpJson(line))}\n`;
          const input = join(dir, `traces-${file++}.jsonl`);
          writeFileSync(input, text);
          let out = '';
          const io = {
            stdout: (t: string) => {
              out += t;
            },
            stderr: () => {},
          };
          expect(await main(['score', input, '--policy', policyFile], io)).toBe(0);
          const scored = out
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line) as Verdict);
          expect(sorted(scored)).toEqual(sorted(offline));
        },
      ),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 60), seed: Number(process.env.FUZZ_SEED ?? 20261208) },
    );
  });
});
