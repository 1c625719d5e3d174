import { describe, expect, it } from 'vitest';
import {
  addEvaluationEvents,
  evaluationEventAttributes,
  evaluationExplanation,
} from '../../src/emission/events.js';
import type { ScorerResult } from '../../src/types.js';

const failing: ScorerResult = {
  scorer: 'traj',
  kind: 'trajectory',
  passed: false,
  score: 0.65,
  label: 'fail',
  reason: 'get_order_detail.order_id: expected A1024, got B9999',
  digest: 'abc',
  detail: {
    errors: [
      {
        code: 'arg_mismatch',
        tool: 'get_order_detail',
        field: 'order_id',
        message: 'expected A1024, got B9999',
      },
      { code: 'forbidden_tool', tool: 'submit_refund', message: 'submit_refund executed' },
    ],
  },
};

describe('evaluation events', () => {
  it('carries the documented attributes', () => {
    expect(evaluationEventAttributes(failing)).toEqual({
      'gen_ai.evaluation.name': 'traj',
      'gen_ai.evaluation.score.value': 0.65,
      'gen_ai.evaluation.score.label': 'fail',
      'gen_ai.evaluation.explanation': failing.reason,
      'toolwatch.scorer.kind': 'trajectory',
      'toolwatch.scorer.digest': 'abc',
    });
  });

  it('keeps values out of the explanation when the policy redacts them', () => {
    const text = evaluationExplanation(failing, { values: true });
    expect(text).not.toContain('A1024');
    expect(text).not.toContain('B9999');
    expect(text).toBe('fail; arg_mismatch(get_order_detail.order_id); forbidden_tool(submit_refund)');
    const reliability = {
      ...failing,
      kind: 'reliability',
      detail: { missing_tool_calls: ['check_refund_policy'] },
    };
    expect(evaluationExplanation(reliability, { values: true })).toBe(
      'fail; missing_tool_calls: check_refund_policy',
    );
  });

  it('reports a non-finite score as 0 and adds one event per result', () => {
    const events: Array<[string, unknown]> = [];
    addEvaluationEvents({ addEvent: (name, attributes) => events.push([name, attributes]) }, [
      failing,
      { ...failing, score: Number.NaN },
    ]);
    expect(events.map(([name]) => name)).toEqual(['gen_ai.evaluation.result', 'gen_ai.evaluation.result']);
    expect((events[1]![1] as Record<string, unknown>)['gen_ai.evaluation.score.value']).toBe(0);
  });
});
