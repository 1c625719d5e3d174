import { describe, expect, it } from 'vitest';
import { reconstructTrace } from '../../src/reconstruction/reconstruct-trace.js';
import { reliability } from '../../src/scorers/reliability.js';
import { toolCalls } from '../../src/scorers/tool-calls.js';
import type { AgentRun } from '../../src/types.js';
import { encloseChildren, SpanFactory } from '../helpers/span-like.js';

/**
 * A call a person rejected at an approval step is an agno `ToolExecution`
 * with `tool_call_error` (agno keeps it with `confirmed=False`); a call refused before it
 * could run (tool-call limit, unknown tool, invalid arguments) is only a requested name.
 * The same request, once denied at approval and once refused as unknown, through the
 * GenAI-semconv decision event each framework can emit.
 */
function runWith(outcome: 'deny' | 'unknown_tool'): AgentRun {
  const f = new SpanFactory();
  const agent = f.make('invoke_agent files', {
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': 'files',
  });
  const request = JSON.stringify([
    {
      role: 'assistant',
      parts: [{ type: 'tool_call', id: 'c1', name: 'delete_file', arguments: { path: '/etc/hosts' } }],
    },
  ]);
  const events =
    outcome === 'deny'
      ? [
          {
            name: 'gen_ai.tool.call.decision',
            time: 0,
            attributes: { 'gen_ai.tool.call.decision.outcome': 'deny', 'gen_ai.tool.call.id': 'c1' },
          },
        ]
      : [];
  const llm1 = f.make(
    'chat m',
    { 'gen_ai.operation.name': 'chat', 'gen_ai.output.messages': request },
    { parent: agent, events },
  );
  const answer = JSON.stringify([
    {
      role: 'tool',
      parts: [
        {
          type: 'tool_call_response',
          id: 'c1',
          response: 'Error: The requested tool does not exist or is not available.',
        },
      ],
    },
  ]);
  const llm2 = f.make(
    'chat m',
    { 'gen_ai.operation.name': 'chat', ...(outcome === 'deny' ? {} : { 'gen_ai.input.messages': answer }) },
    { parent: agent },
  );
  return reconstructTrace(encloseChildren([agent, llm1, llm2])).runs[0]!;
}

describe('agno evidence: approval rejections are executions with error, refusals only requested names', () => {
  it('both runs hold one refused request-only call; only the denied one is a rejection', () => {
    for (const outcome of ['deny', 'unknown_tool'] as const) {
      const run = runWith(outcome);
      expect(run.calls.map((c) => [c.name, c.status, c.requestOnly])).toEqual([
        ['delete_file', 'refused', true],
      ]);
      expect(run.calls[0]!.request?.rejected ?? false).toBe(outcome === 'deny');
    }
  });

  it('ToolCallScorer: the rejected call is an execution without a clean run; the refused one leaves none', () => {
    const scorer = toolCalls({ expectedTools: ['delete_file'], allowAdditional: true });
    const denied = scorer.score(runWith('deny')) as { reason: string | null; passed: boolean };
    const refused = scorer.score(runWith('unknown_tool')) as { reason: string | null; passed: boolean };
    expect(denied).toMatchObject({
      passed: false,
      reason: "expected tool 'delete_file' has no clean execution",
    });
    expect(refused).toMatchObject({
      passed: false,
      reason: "run has no tool executions; expected tool 'delete_file' has no clean execution",
    });
  });

  it('ReliabilityEval: the rejected call fails as an errored execution; the refused one is a missing request', () => {
    const strict = reliability({ expectedToolCalls: [], allowAdditionalToolCalls: false });
    const denied = strict.score(runWith('deny')) as { detail: Record<string, unknown> };
    expect(denied.detail).toMatchObject({ eval_status: 'FAILED', failed_tool_calls: ['delete_file'] });
    const expected = reliability({ expectedToolCalls: ['delete_file'], allowAdditionalToolCalls: false });
    for (const outcome of ['deny', 'unknown_tool'] as const) {
      const result = expected.score(runWith(outcome)) as { detail: Record<string, unknown> };
      expect(result.detail).toMatchObject({
        eval_status: 'FAILED',
        missing_tool_calls: [
          'delete_file (requested but refused/errored — execution matching, new in 2.8.0)',
        ],
      });
    }
  });
});
