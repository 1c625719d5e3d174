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
  type Convention,
  implicitRunAroundAgents,
  Program,
  root,
  runInterleaved,
} from '../helpers/random-traces.js';
import { spansToOtlpJson } from '../interop/harness/spans-to-otlp-json.js';

const POLICY = `version: 1
rules:
  - name: support
    match: { agent: "support*" }
    scorers:
      - kind: trajectory
        expected_tools: [lookup]
        forbidden_tools: [delete]
        max_calls: 4
        max_repeats: 1
        arg_constraints: { lookup: { id: { equals: 1 } } }
      - kind: tool_order
        expected_tool_order: [lookup, reply]
      - kind: reliability
        expected_tool_calls: [lookup]
        allow_additional_tool_calls: true
  - name: members
    match: { agent: "*", root_only: false }
    scorers:
      - kind: trajectory
        name: no_delete
        forbidden_tools: [delete]
`;

const dir = mkdtempSync(join(tmpdir(), 'toolwatch-score-differential-'));
const policyFile = join(dir, 'policy.yaml');
writeFileSync(policyFile, POLICY);
const policy = parsePolicyText(POLICY);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const key = (v: Verdict) => `${v.trace_id}\u0000${v.span_id}\u0000${v.rule}`;
const sorted = (verdicts: readonly Verdict[]) =>
  [...verdicts].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));

describe('toolwatch score and offline evaluation agree on random traces', () => {
  it('gives the same verdicts, however the spans are ordered and split over lines', {
    timeout: 120_000,
  }, async () => {
    let file = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(root, { minLength: 1, maxLength: 3 }),
        fc.array(fc.nat({ max: 5 }), { maxLength: 200 }),
        fc.array(fc.nat(), { minLength: 200, maxLength: 200 }),
        fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 50 }),
        fc.array(fc.constantFrom<Convention>('gen_ai', 'ai_sdk', 'openinference'), {
          minLength: 3,
          maxLength: 3,
        }),
        async (trees, order, arrival, sizes, conventions) => {
          fc.pre(!trees.some(implicitRunAroundAgents));
          const exporter = new InMemorySpanExporter();
          const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
          runInterleaved(new Program(provider.getTracer('fuzz')), trees, order, conventions);
          const spans = [...exporter.getFinishedSpans()];
          await provider.shutdown();
          const offline = await evaluateTraces(spansToOtlpJson(spans), policy);

          // Spans in a random order, a random number per line (one OTLP/JSON request each).
          const shuffled = spans
            .map((span, i) => ({ span, key: arrival[i % arrival.length]! * 1000 + i }))
            .sort((a, b) => a.key - b.key)
            .map((s) => s.span);
          let text = '';
          for (let at = 0, r = 0; at < shuffled.length; r++) {
            const size = sizes[r % sizes.length]!;
            text += `${JSON.stringify(spansToOtlpJson(shuffled.slice(at, at + size)))}\n`;
            at += size;
          }
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
