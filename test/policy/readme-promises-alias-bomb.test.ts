/**
 * docs/policy.md, policy files: "an alias bomb (more than 100 expansions) [is] refused the same way, at
 * the alias". `yaml-aliases.test.ts` refuses a bomb of 9^7 expansions, which any limit from a
 * few to millions refuses, so the number had no test. Here one scalar node is aliased just
 * under and just over 100 times.
 *
 * yaml's `maxAliasCount` counts the anchored node itself as the first of its uses: with 100,
 * 100 aliases were refused, one fewer than the docs/policy.md says; the code now passes 101. The test
 * pins 100 accepted and 101 refused: any other limit fails it.
 */
import { describe, expect, it } from 'vitest';
import { parsePolicyText } from '../../src/policy/load-policy.js';
import { PolicyError, type PolicyProblem } from '../../src/policy/policy-error.js';

/** A valid policy whose `equals` value holds `aliases` aliases of the tool name anchored above it. */
function policyWith(aliases: number): string {
  return `version: 1
rules:
  - name: r
    match: { agent: a }
    scorers:
      - kind: trajectory
        expected_tools: [&tool get_order]
        arg_constraints: { get_order: { order_id: { equals: [${Array(aliases).fill('*tool').join(', ')}] } } }
`;
}

/** Column (1-based) of the first alias on line 8. */
const FIRST_ALIAS_COLUMN = '        arg_constraints: { get_order: { order_id: { equals: ['.length + 1;

function problemsOf(text: string): PolicyProblem[] {
  try {
    parsePolicyText(text);
  } catch (err) {
    if (err instanceof PolicyError) return err.problems;
    throw err;
  }
  throw new Error('expected a PolicyError');
}

describe('docs/policy.md: an alias bomb (more than 100 expansions) is refused at the alias', () => {
  it('100 aliases of one node are read as 100 copies of it', () => {
    const policy = parsePolicyText(policyWith(100));
    const config = policy.rules[0]!.scorers[0]!.config as {
      arg_constraints: { get_order: { order_id: { equals: string[] } } };
    };
    expect(config.arg_constraints.get_order.order_id.equals).toEqual(Array(100).fill('get_order'));
  });

  it('101 aliases of one node are refused as a problem of the file, at the first alias', () => {
    expect(problemsOf(policyWith(101))).toEqual([
      {
        path: '',
        message: 'aliases expand too often (Excessive alias count indicates a resource exhaustion attack)',
        line: 8,
        column: FIRST_ALIAS_COLUMN,
      },
    ]);
  });
});
