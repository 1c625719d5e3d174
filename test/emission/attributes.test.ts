import { describe, expect, it } from 'vitest';
import { failedScorers, verdictAttributes } from '../../src/emission/attributes.js';
import type { ScorerResult, Verdict } from '../../src/types.js';

function result(scorer: string, label: ScorerResult['label']): ScorerResult {
  return {
    scorer,
    kind: 'k',
    passed: label === 'pass',
    score: label === 'pass' ? 1 : 0,
    label,
    reason: null,
    digest: 'd',
    detail: {},
  };
}

function verdict(results: ScorerResult[], passed: boolean): Verdict {
  return {
    trace_id: 't',
    span_id: 's',
    agent: 'a',
    rule: 'refunds',
    passed,
    policy_digest: 'pd',
    sampled: true,
    results,
  };
}

describe('verdictAttributes', () => {
  it('names failed and errored scorers and asks to keep the trace', () => {
    const attrs = verdictAttributes(
      verdict(
        [result('a', 'pass'), result('b', 'fail'), result('c', 'error'), result('d', 'skipped')],
        false,
      ),
    );
    expect(attrs).toEqual({
      'toolwatch.evaluation.passed': false,
      'toolwatch.evaluation.failed': ['b', 'c'],
      'toolwatch.evaluation.rule': 'refunds',
      'toolwatch.evaluation.policy_digest': 'pd',
      'toolwatch.keep': true,
    });
  });

  it('does not keep a passing run', () => {
    const attrs = verdictAttributes(verdict([result('a', 'pass'), result('d', 'skipped')], true));
    expect(attrs['toolwatch.keep']).toBe(false);
    expect(attrs['toolwatch.evaluation.failed']).toEqual([]);
  });

  it('lists a scorer once even with several results', () => {
    expect(failedScorers([result('x', 'fail'), result('x', 'error')])).toEqual(['x']);
  });
});

describe('the summary attributes of a verdict no scorer judged', () => {
  it('carry no passed attribute (neither pass nor failure) and do not ask to keep the trace', () => {
    const attributes = verdictAttributes({ ...verdict([result('s', 'skipped')], true), passed: null });
    expect(attributes['toolwatch.evaluation.passed']).toBeUndefined();
    expect(attributes['toolwatch.keep']).toBe(false);
    expect(attributes['toolwatch.evaluation.failed']).toEqual([]);
  });
});
