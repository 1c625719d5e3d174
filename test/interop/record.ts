/**
 * Records every interop scenario as a committed fixture:
 *   test/fixtures/<framework>/<scenario>.otlp.json   OTLP/JSON ExportTraceServiceRequest
 *   test/fixtures/<framework>/<scenario>.truth.json  ground truth (what really ran)
 *
 *   npx tsx test/interop/record.ts [framework...]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NEXT_INSTALLED, runScenario, SCENARIOS } from './harness/run-scenario.js';
import { spansToOtlpJson } from './harness/spans-to-otlp-json.js';
import type { Framework } from './harness/types.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../..');
const fixturesRoot = join(repoRoot, 'test/fixtures');

const requested = process.argv.slice(2) as Framework[];
// AI SDK 7 and Mastra 1 need their own install (npm ci --prefix test/interop/next); skipped without it.
const frameworks =
  requested.length > 0
    ? requested
    : (Object.keys(SCENARIOS) as Framework[]).filter(
        (f) => NEXT_INSTALLED || (f !== 'ai-sdk-v7' && f !== 'mastra-v1'),
      );

for (const framework of frameworks) {
  const dir = join(fixturesRoot, framework);
  mkdirSync(dir, { recursive: true });
  for (const scenario of SCENARIOS[framework]) {
    const { spans, groundTruth } = await runScenario(framework, scenario);
    const otlp = spansToOtlpJson(spans, [repoRoot]);
    writeFileSync(join(dir, `${scenario}.otlp.json`), `${JSON.stringify(otlp, null, 1)}\n`);
    writeFileSync(join(dir, `${scenario}.truth.json`), `${JSON.stringify(groundTruth, null, 2)}\n`);
    console.log(`${framework}/${scenario}: ${spans.length} spans, ${groundTruth.runs.length} runs`);
  }
}
// Mastra's exporter and the OpenAI Agents SDK keep timers alive.
process.exit(0);
