import { describe, expect, it } from 'vitest';
import { reliability } from '../../src/scorers/reliability.js';
import { redactedExplanation, resultMisuse } from '../../src/scorers/result-readers.js';
import { trajectory } from '../../src/scorers/trajectory.js';
import type { AgentRun, ScorerResult } from '../../src/types.js';
import { type InMemoryCall, inMemoryRun } from '../helpers/in-memory-run.js';

function call(name: string, args: Record<string, unknown> = {}): InMemoryCall {
  return { name, status: 'ok', args };
}

describe('what a scorer kind says about its own results', () => {
  const run: AgentRun = inMemoryRun([
    call('refund', { id: 'A1' }),
    call('lookup', { id: 'secret-value' }),
    call('lookup', { id: 'secret-value' }),
    call('lookup', { id: 'secret-value' }),
  ]);

  it('trajectory: misuse from its errors (forbidden, call budget, repeats), explanation without values', () => {
    const scorer = trajectory({
      forbiddenTools: ['refund'],
      maxCalls: 2,
      maxRepeats: 2,
      argConstraints: { lookup: { id: { equals: 'other' } } },
    });
    const result = scorer.score(run, { redact: { values: true } });
    expect(resultMisuse(result)).toEqual([
      { kind: 'forbidden', tool: 'refund' },
      { kind: 'call_budget', tool: '' },
      { kind: 'repeated_call', tool: 'lookup' },
    ]);
    const text = redactedExplanation(result);
    expect(text).toBe(
      'fail; forbidden_tool(refund); call_budget_exceeded; repeated_call(lookup); arg_mismatch(lookup.id)',
    );
    expect(text).not.toContain('secret-value');
  });

  it('reliability: the tools missing; no misuse', () => {
    const scorer = reliability({ expectedToolCalls: ['check_policy'] });
    const result = scorer.score(run) as ScorerResult;
    expect(redactedExplanation(result)).toBe('fail; missing_tool_calls: check_policy');
    expect(resultMisuse(result)).toEqual([]);
  });

  it('a custom kind: the documented convention (errors, then the tool lists), and no misuse even with trajectory codes', () => {
    const custom: ScorerResult = {
      scorer: 'mine',
      kind: 'custom_policy',
      passed: false,
      score: 0,
      label: 'fail',
      reason: 'value 42 is wrong',
      digest: 'd',
      detail: {
        errors: [{ code: 'forbidden_tool', tool: 'refund', field: 'id', message: 'value 42' }],
        missing_tool_calls: ['lookup'],
      },
    };
    expect(redactedExplanation(custom)).toBe('fail; forbidden_tool(refund.id); missing_tool_calls: lookup');
    expect(resultMisuse(custom)).toEqual([]);
  });
});
