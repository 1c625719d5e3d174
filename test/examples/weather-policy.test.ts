// examples/policies/weather.yaml is the policy that matches the recorded framework traces:
// the README's in-repo `toolwatch score` line must give verdicts, and the right ones.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { evaluateTraces } from '../../src/evaluation/evaluate-traces.js';
import { loadPolicy } from '../../src/policy/load-policy.js';
import type { Verdict } from '../../src/types.js';

const FRAMEWORKS = [
  'ai-sdk',
  'ai-sdk-v7',
  'langchain',
  'langchain-message-tool-calls',
  'mastra',
  'mastra-v1',
  'openai-agents',
];
const policy = await loadPolicy('examples/policies/weather.yaml');

async function score(framework: string, scenario: string): Promise<Verdict[]> {
  const text = readFileSync(`test/fixtures/${framework}/${scenario}.otlp.json`, 'utf8');
  return evaluateTraces(text, policy);
}

const labels = (v: Verdict) => v.results.map((r) => r.label);

describe.each(FRAMEWORKS)('examples/policies/weather.yaml on the %s recordings', (framework) => {
  it('passes the clean runs', async () => {
    for (const scenario of ['multi_step', 'parallel_calls', 'stream_multi_step']) {
      const verdicts = await score(framework, scenario);
      // Judged, each scorer passing, not a skipped record (an agent span never ended).
      expect(
        verdicts.map((v) => [v.agent, v.rule, v.passed, labels(v)]),
        scenario,
      ).toEqual([['weather_agent', 'weather', true, ['pass', 'pass']]]);
    }
  });

  it('flags the forbidden launchRockets request and the failing tool', async () => {
    const [rockets, ...more] = await score(framework, 'unknown_tool');
    if (framework === 'mastra') {
      // Mastra 0.24 aborts and never exports the agent span: no run to judge (a known gap).
      expect(rockets).toBeUndefined();
    } else {
      expect(more).toEqual([]);
      expect(rockets?.passed).toBe(false);
      const trajectory = rockets!.results.find((r) => r.kind === 'trajectory')!;
      expect(trajectory.reason).toContain('forbidden tool launchRockets');
    }

    const [failing] = await score(framework, 'tool_error');
    expect(failing?.passed).toBe(false);
  });

  it('credits the orchestrator with its researcher’s lookup', async () => {
    const verdicts = await score(framework, 'subagent_as_tool');
    expect(verdicts.map((v) => [v.agent, v.rule, v.passed, labels(v)])).toEqual([
      ['orchestrator', 'delegation', true, ['pass']],
    ]);
  });
});
