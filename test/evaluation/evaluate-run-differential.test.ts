import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluateRunSync } from '../../src/evaluation/evaluate-run.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { toolOrder } from '../../src/scorers/tool-order.js';
import type { AgentRun, Rule, Scorer, ScorerResult } from '../../src/types.js';
import { inMemoryRun } from '../helpers/in-memory-run.js';
import { evaluateRunSync as referenceEvaluateRunSync } from '../scorers/reference/evaluate-run.js';

/**
 * `evaluateRunSync` against its previous implementation (kept verbatim under
 * test/scorers/reference): random mixes of deterministic scorers, judges, custom scorers
 * with valid, invalid, throwing and promise results, sampling ratios and escalation.
 */

type Behaviour =
  | 'pass'
  | 'fail'
  | 'error'
  | 'skipped'
  | 'null'
  | 'weird'
  | 'nan'
  | 'throws'
  | 'promise'
  | 'tool_order';

function customScorer(name: string, behaviour: Behaviour, ratio: number | undefined): Scorer {
  if (behaviour === 'tool_order') {
    return toolOrder({
      name,
      expectedToolOrder: ['a', 'b'],
      ...(ratio !== undefined ? { sampling: { ratio } } : {}),
    });
  }
  const result = (label: string, score: number): ScorerResult =>
    ({
      scorer: name,
      kind: 'custom',
      passed: label === 'pass',
      score,
      label,
      reason: null,
      digest: 'd',
      detail: {},
    }) as ScorerResult;
  return {
    name,
    kind: 'custom',
    digest: 'd',
    async: false,
    ...(ratio !== undefined ? { sampling: { ratio } } : {}),
    config: {},
    score(): ScorerResult {
      switch (behaviour) {
        case 'pass':
        case 'fail':
        case 'error':
        case 'skipped':
          return result(behaviour, behaviour === 'pass' ? 1 : 0);
        case 'null':
          return null as unknown as ScorerResult;
        case 'weird':
          return result('weird', 1);
        case 'nan':
          return result('pass', Number.NaN);
        case 'throws':
          throw new Error(`${name} broke`);
        case 'promise':
          return Promise.resolve(result('pass', 1)) as unknown as ScorerResult;
      }
    },
  } as Scorer;
}

function judge(name: string, ratio: number | undefined): Scorer {
  return {
    name,
    kind: 'llm_judge',
    digest: 'j',
    async: true,
    ...(ratio !== undefined ? { sampling: { ratio } } : {}),
    config: {},
    score: async () => ({}) as ScorerResult,
  } as unknown as Scorer;
}

const ratioArb = fc.option(fc.constantFrom(0, 0.3, 0.5, 1), { nil: undefined });
const scorerArb = fc.oneof(
  fc.record({
    judge: fc.constant(false),
    behaviour: fc.constantFrom<Behaviour>(
      'pass',
      'fail',
      'error',
      'skipped',
      'null',
      'weird',
      'nan',
      'throws',
      'promise',
      'tool_order',
    ),
    ratio: ratioArb,
  }),
  fc.record({ judge: fc.constant(true), behaviour: fc.constant<Behaviour>('pass'), ratio: ratioArb }),
);

describe('evaluateRunSync gives the evaluation of its previous implementation', () => {
  it('on random scorer mixes, sampling and escalation', () => {
    fc.assert(
      fc.property(
        fc.array(scorerArb, { minLength: 1, maxLength: 6 }),
        fc.constantFrom(0, 0.25, 0.5, 1),
        fc.subarray(['failure', 'error_span'] as Array<'failure' | 'error_span'>),
        fc.stringMatching(/^[0-9a-f]{32}$/),
        fc.boolean(),
        fc.array(fc.constantFrom('a', 'b', 'c'), { maxLength: 4 }),
        (specs, ratio, escalateOn, traceId, hasErrorSpan, names) => {
          // Names repeat on purpose: results are ordered by the last scorer of a name.
          const scorers = specs.map((s, i) => {
            const name = `s${i % 4}`;
            return s.judge ? judge(name, s.ratio) : customScorer(name, s.behaviour, s.ratio);
          });
          const policy = definePolicy({
            sampling: { ratio },
            judge: { escalateOn },
            rules: [{ name: 'r', match: { agent: '*' }, scorers: [toolOrder({ expectedTool: 'a' })] }],
          });
          // Built by hand: a policy refuses duplicate names, a hand-made rule need not.
          const rule: Rule = { ...policy.rules[0]!, scorers };
          const run: AgentRun = {
            ...inMemoryRun(names.map((name) => ({ name, status: 'ok' as const }))),
            traceId,
            hasErrorSpan,
          };
          const got = evaluateRunSync(run, rule, policy);
          const want = referenceEvaluateRunSync(run, rule, policy);
          expect(JSON.stringify(got)).toBe(JSON.stringify(want));
          expect(got).toStrictEqual(want);
          expect(got.pending).toEqual(want.pending);
        },
      ),
      { seed: 86, numRuns: 3000 },
    );
  });
});
