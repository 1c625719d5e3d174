/**
 * Mastra 0.24.9 (AI tracing through @mastra/otel-exporter 0.3.3, scripted LanguageModelV2) run
 * offline against toolwatch's reconstruction: live spans and the committed OTLP/JSON fixtures.
 */
import { describe, expect, it } from 'vitest';
import { describeInterop } from './describe-interop.js';
import { runScenario } from './harness/run-scenario.js';

describeInterop('mastra', {
  isToolSpan: (span) => span.name.startsWith('tool.execute '),
  knownGaps: [
    // Mastra 0.24 aborts on an unknown tool and never ends the agent/chat/step spans, so only two
    // orphan `chunk:` spans are exported: no span names the agent. Lost by the framework, not by toolwatch.
    'live:unknown_tool',
    'fixture:unknown_tool',
  ],
});

describe('mastra unknown_tool', () => {
  it('the framework logs the unknown tool (held back from the test output, asserted here)', async () => {
    const { frameworkErrors } = await runScenario('mastra', 'unknown_tool');
    expect(frameworkErrors?.some((line) => line.includes('Tool launchRockets not found'))).toBe(true);
  });
});
