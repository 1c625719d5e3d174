import { describe, expect, it } from 'vitest';
import { ToolwatchGateway } from '../../src/gateway/toolwatch-gateway.js';
import { parsePolicyText } from '../../src/policy/load-policy.js';
import { protobufOf, recordRun } from './helpers.js';

describe('gateway with llm_judge scorers', () => {
  it('calls the judge for complete traces and keeps one judge budget across batches', async () => {
    const policy = parsePolicyText(`version: 1
judge: { max_per_minute: 2, max_concurrent: 1 }
rules:
  - name: support
    match: { agent: support_agent }
    scorers:
      - kind: llm_judge
        prompt: tool_appropriateness
        sampling: { ratio: 1.0 }
`);
    let calls = 0;
    // A scripted judge: every tool call it is shown was appropriate.
    const counting = {
      default: ({ prompt }: { prompt: string }) => {
        calls++;
        const names = /TOOLS THE AGENT ACTUALLY CALLED: (.*)/.exec(prompt)?.[1] ?? 'None';
        const called = names === 'None' ? [] : names.split(', ');
        return JSON.stringify({
          evaluations: called.map((toolCalled) => ({
            toolCalled,
            wasAppropriate: true,
            reasoning: 'scripted',
          })),
          missingTools: [],
        });
      },
    };
    let now = 0;
    const gateway = new ToolwatchGateway({ policy, judges: counting, decisionWaitMs: 10, now: () => now });
    const labels: string[] = [];
    for (let i = 0; i < 4; i++) {
      // One trace per batch: each tick judges one trace with its own evaluateTraces call.
      gateway.ingest(protobufOf(recordRun(['lookup_account'])), 'http');
      now += 1000;
      await gateway.tick();
    }
    for (const label of ['pass', 'skipped']) {
      labels.push(
        `${label}=${gateway.registry.value('toolwatch_evaluations_total', {
          'gen_ai.evaluation.name': 'llm_judge',
          'gen_ai.evaluation.score.label': label,
          'gen_ai.agent.name': 'support_agent',
          'toolwatch.rule': 'support',
        })}`,
      );
    }
    expect(calls).toBe(2);
    expect(labels).toEqual(['pass=2', 'skipped=2']);
    await gateway.close(100);
  });
});
