/**
 * Every upstream ReliabilityEval unit test (with upstream's "Full result at HEAD"
 * column as the expectation), its telemetry case, and probes derived from its rules.
 */

import type { ReliabilityOptions } from '../../src/scorers/reliability.js';
import { PyFloat } from '../../src/util/python-json.js';
import { type AgnoNode, call } from './agno-cases.js';

export const ANN = ' (requested but refused/errored \u2014 execution matching, new in 2.8.0)';

export interface ExpectedReliability {
  status: 'PASSED' | 'FAILED';
  passed?: string[];
  failed?: string[];
  additional?: string[];
  missing?: string[];
  passedArgs?: string[];
  failedArgs?: string[];
}

export interface ReliabilityCase {
  id: string;
  run: AgnoNode;
  options: ReliabilityOptions;
  expected: ExpectedReliability;
}

const strict = (exp: string[] | null, extra: Partial<ReliabilityOptions> = {}): ReliabilityOptions => ({
  expectedToolCalls: exp,
  ...extra,
});
const lenient = (exp: string[] | null, extra: Partial<ReliabilityOptions> = {}): ReliabilityOptions => ({
  expectedToolCalls: exp,
  allowAdditionalToolCalls: true,
  ...extra,
});
const team = (tools: AgnoNode['tools'], members: AgnoNode[]): AgnoNode => ({ kind: 'team', tools, members });
const agent = (tools: AgnoNode['tools'], extra: Partial<AgnoNode> = {}): AgnoNode => ({ tools, ...extra });

export const UPSTREAM_RELIABILITY_CASES: ReliabilityCase[] = [
  {
    id: '01 exact_match_passes',
    run: agent(['multiply']),
    options: strict(['multiply']),
    expected: { status: 'PASSED', passed: ['multiply'] },
  },
  {
    id: '02 show_spinner_disabled',
    run: agent(['multiply']),
    options: strict(['multiply']),
    expected: { status: 'PASSED', passed: ['multiply'] },
  },
  {
    id: '03 exact_match_fails_on_unexpected_tool',
    run: agent(['multiply', 'exponentiate']),
    options: strict(['multiply']),
    expected: { status: 'FAILED', failed: ['exponentiate'], passed: ['multiply'] },
  },
  {
    id: '04 fails_on_missing_expected_tool',
    run: agent(['multiply']),
    options: strict(['multiply', 'exponentiate']),
    expected: { status: 'FAILED', passed: ['multiply'], missing: ['exponentiate'] },
  },
  {
    id: '05 fails_when_no_tools_called',
    run: agent(null),
    options: strict(['multiply']),
    expected: { status: 'FAILED', missing: ['multiply'] },
  },
  {
    id: '06 successful_call_still_passes',
    run: agent([call('search', 'explicit-ok')]),
    options: strict(['search']),
    expected: { status: 'PASSED', passed: ['search'] },
  },
  {
    id: '07 refused_call_no_longer_passes',
    run: agent([], { requests: [['search']] }),
    options: strict(['search']),
    expected: { status: 'FAILED', missing: [`search${ANN}`] },
  },
  {
    id: '08 errored_execution_no_longer_passes',
    run: agent([call('search', 'err')]),
    options: strict(['search']),
    expected: { status: 'FAILED', missing: [`search${ANN}`] },
  },
  {
    id: '09 none_tool_call_error_passes',
    run: agent(['search']),
    options: strict(['search']),
    expected: { status: 'PASSED', passed: ['search'] },
  },
  {
    id: '10 approved_hitl_call_still_passes',
    run: agent([call('delete_file', 'hitl-approved')]),
    options: strict(['delete_file']),
    expected: { status: 'PASSED', passed: ['delete_file'] },
  },
  {
    id: '11 rejected_hitl_call_fails',
    run: agent([call('delete_file', 'hitl-rejected')]),
    options: strict(['delete_file']),
    expected: { status: 'FAILED', missing: [`delete_file${ANN}`] },
  },
  {
    id: '12 retry_that_succeeds_still_passes',
    run: agent([call('search', 'err'), 'search']),
    options: strict(['search']),
    expected: { status: 'PASSED', passed: ['search'] },
  },
  {
    id: '13 strict_mode_fails_on_errored_additional_call',
    run: agent(['multiply', call('exponentiate', 'err')]),
    options: strict(['multiply']),
    expected: { status: 'FAILED', failed: ['exponentiate'], passed: ['multiply'] },
  },
  {
    id: '14a failure_message_names_execution_matching',
    run: agent([call('search', 'err')], { requests: [['search']] }),
    options: strict(['search']),
    expected: { status: 'FAILED', missing: [`search${ANN}`] },
  },
  {
    id: '14b failure_message_names_execution_matching (no evidence)',
    run: agent(null),
    options: strict(['search']),
    expected: { status: 'FAILED', missing: ['search'] },
  },
  {
    id: '15 team_member_executions_matched',
    run: team(['delegate_task_to_member'], [agent(['multiply'])]),
    options: lenient(['multiply']),
    expected: { status: 'PASSED', passed: ['multiply'], additional: ['delegate_task_to_member'] },
  },
  {
    id: '16 nested_team_member_executions_matched',
    run: team(null, [team(null, [agent(['multiply'])])]),
    options: strict(['multiply']),
    expected: { status: 'PASSED', passed: ['multiply'] },
  },
  {
    id: '17a nested_team_depth_two_delegations_policed_like_depth_zero',
    run: team(null, [team(null, [team(['delegate_task_to_member'], [agent(['multiply'])])])]),
    options: strict(['multiply']),
    expected: { status: 'FAILED', failed: ['delegate_task_to_member'], passed: ['multiply'] },
  },
  {
    id: '17b nested_team_depth_two_delegations (both expected)',
    run: team(null, [team(null, [team(['delegate_task_to_member'], [agent(['multiply'])])])]),
    options: strict(['multiply', 'delegate_task_to_member']),
    expected: { status: 'PASSED', passed: ['delegate_task_to_member', 'multiply'] },
  },
  {
    id: '18 from_history_requests_ignored',
    run: agent(['multiply'], { historyRequests: ['prior_tool'] }),
    options: strict(['multiply']),
    expected: { status: 'PASSED', passed: ['multiply'] },
  },
  {
    id: '19 from_history_request_does_not_annotate_missing',
    run: agent([], { historyRequests: ['search'] }),
    options: strict(['search']),
    expected: { status: 'FAILED', missing: ['search'] },
  },
  {
    id: '20 subset_matching_passes_with_extra_calls',
    run: agent(['multiply', 'exponentiate']),
    options: lenient(['multiply']),
    expected: { status: 'PASSED', passed: ['multiply'], additional: ['exponentiate'] },
  },
  {
    id: '21 subset_matching_still_fails_on_missing',
    run: agent(['exponentiate']),
    options: lenient(['multiply']),
    expected: { status: 'FAILED', additional: ['exponentiate'], missing: ['multiply'] },
  },
  {
    id: '22 argument_validation_passes',
    run: agent([call('multiply', 'ok', { a: 10, b: 5 })]),
    options: strict(['multiply'], { expectedToolCallArguments: { multiply: { a: 10, b: 5 } } }),
    expected: { status: 'PASSED', passed: ['multiply'], passedArgs: ['multiply'] },
  },
  {
    id: '23 argument_check_matches_tool_args',
    run: agent([call('multiply', 'ok', { a: 10, b: 5 })]),
    options: strict(['multiply'], { expectedToolCallArguments: { multiply: { a: 10 } } }),
    expected: { status: 'PASSED', passed: ['multiply'], passedArgs: ['multiply'] },
  },
  {
    id: '24 argument_check_ignores_errored_execution',
    run: agent([call('multiply', 'err', { a: 10, b: 5 }), call('multiply', 'ok', { a: 1, b: 1 })]),
    options: strict(['multiply'], { expectedToolCallArguments: { multiply: { a: 10, b: 5 } } }),
    expected: { status: 'FAILED', passed: ['multiply'], failedArgs: ['multiply'] },
  },
  {
    id: '25 argument_validation_fails_on_wrong_args',
    run: agent([call('multiply', 'ok', { a: 10, b: 3 })]),
    options: strict(['multiply'], { expectedToolCallArguments: { multiply: { a: 10, b: 5 } } }),
    expected: { status: 'FAILED', passed: ['multiply'], failedArgs: ['multiply'] },
  },
  {
    id: '26 argument_validation_partial_match',
    run: agent([call('multiply', 'ok', { a: 10, b: 5, c: 99 })]),
    options: strict(['multiply'], { expectedToolCallArguments: { multiply: { a: 10 } } }),
    expected: { status: 'PASSED', passed: ['multiply'], passedArgs: ['multiply'] },
  },
  {
    id: '27 argument_validation_fails_when_tool_not_called',
    run: agent([call('add', 'ok', { a: 1, b: 2 })]),
    options: lenient(null, { expectedToolCallArguments: { multiply: { a: 10 } } }),
    expected: { status: 'FAILED', passed: ['add'], failedArgs: ['multiply'] },
  },
  {
    id: '28 argument_validation_multiple_calls_any_match',
    run: agent([call('multiply', 'ok', { a: 1, b: 2 }), call('multiply', 'ok', { a: 10, b: 5 })]),
    options: strict(['multiply'], { expectedToolCallArguments: { multiply: { a: 10, b: 5 } } }),
    expected: { status: 'PASSED', passed: ['multiply', 'multiply'], passedArgs: ['multiply'] },
  },
  {
    id: '29 argument_validation_multiple_specs',
    run: agent([call('add', 'ok', { a: 2, b: 2 }), call('add', 'ok', { a: 3, b: 3 })]),
    options: strict(['add'], {
      expectedToolCallArguments: {
        add: [
          { a: 2, b: 2 },
          { a: 3, b: 3 },
        ],
      },
    }),
    expected: { status: 'PASSED', passed: ['add', 'add'], passedArgs: ['add'] },
  },
  {
    id: '30 argument_validation_multiple_specs_one_missing',
    run: agent([call('add', 'ok', { a: 2, b: 2 })]),
    options: strict(['add'], {
      expectedToolCallArguments: {
        add: [
          { a: 2, b: 2 },
          { a: 3, b: 3 },
        ],
      },
    }),
    expected: { status: 'FAILED', passed: ['add'], failedArgs: ['add'] },
  },
  {
    id: '31 argument_validation_none_arguments',
    run: agent(['multiply']),
    options: strict(['multiply'], { expectedToolCallArguments: { multiply: { a: 10 } } }),
    expected: { status: 'FAILED', passed: ['multiply'], failedArgs: ['multiply'] },
  },
  {
    id: '32 argument_validation_fails_when_no_tools_called',
    run: agent(null),
    options: strict(null, { expectedToolCallArguments: { multiply: { a: 10 } } }),
    expected: { status: 'FAILED', failedArgs: ['multiply'] },
  },
  {
    id: '33 collects_all_tool_calls_across_messages',
    run: agent(['add', 'subtract', 'multiply']),
    options: strict(['add', 'subtract', 'multiply']),
    expected: { status: 'PASSED', passed: ['add', 'subtract', 'multiply'] },
  },
  {
    id: '34 does_not_mutate_original_messages',
    run: agent([call('add', 'ok', { a: 1, b: 2 }), call('multiply', 'ok', { a: 3, b: 4 })]),
    options: strict(['add', 'multiply']),
    expected: { status: 'PASSED', passed: ['add', 'multiply'] },
  },
  {
    id: '35 missing_tool_not_double_counted_in_arg_checks',
    run: agent([call('add', 'ok', { a: 1 })]),
    options: lenient(['multiply'], { expectedToolCallArguments: { multiply: { a: 10 } } }),
    expected: { status: 'FAILED', additional: ['add'], missing: ['multiply'] },
  },
  {
    id: '36 combined_subset_and_argument_check',
    run: agent([call('multiply', 'ok', { a: 10, b: 5 }), call('exponentiate', 'ok', { base: 50, exp: 2 })]),
    options: lenient(['multiply'], { expectedToolCallArguments: { multiply: { a: 10, b: 5 } } }),
    expected: {
      status: 'PASSED',
      passed: ['multiply'],
      additional: ['exponentiate'],
      passedArgs: ['multiply'],
    },
  },
  {
    id: '37a strict_mode_fails_on_refused_additional_call',
    run: agent(['search'], { requests: [['search', 'delete_db']] }),
    options: strict(['search']),
    expected: { status: 'FAILED', failed: ['delete_db'], passed: ['search'] },
  },
  {
    id: '37b strict_mode_fails_on_refused_additional_call (lenient)',
    run: agent(['search'], { requests: [['search', 'delete_db']] }),
    options: lenient(['search']),
    expected: { status: 'PASSED', passed: ['search'], additional: ['delete_db'] },
  },
  {
    id: '38 duplicate_expected_names_satisfied_by_one_call',
    run: agent(['search']),
    options: strict(['search', 'search']),
    expected: { status: 'PASSED', passed: ['search'] },
  },
  {
    id: '39 passed_tool_calls_keeps_one_entry_per_execution',
    run: agent(['search', 'search']),
    options: strict(['search']),
    expected: { status: 'PASSED', passed: ['search', 'search'] },
  },
  {
    id: '40 still_paused_call_fails',
    run: agent([call('delete_file', 'paused')]),
    options: strict(['delete_file']),
    expected: { status: 'FAILED', missing: [`delete_file${ANN}`] },
  },
  {
    id: 'telemetry: request-only evidence',
    run: agent(null, { requests: [['test_tool']] }),
    options: strict(['test_tool']),
    expected: { status: 'FAILED', missing: [`test_tool${ANN}`] },
  },
];

/** Edge cases derived from agno's rules. */
export const PROBE_RELIABILITY_CASES: ReliabilityCase[] = [
  {
    id: 'E1 duplicate expected name, never run: reported twice',
    run: agent(['other']),
    options: lenient(['search', 'search']),
    expected: { status: 'FAILED', additional: ['other'], missing: ['search', 'search'] },
  },
  {
    id: 'E2 expected [] strict: any call fails, request-only too',
    run: agent(['a'], { requests: [['zeta', 'beta']] }),
    options: strict([]),
    expected: { status: 'FAILED', failed: ['a', 'beta', 'zeta'] },
  },
  {
    id: 'E3 expected [] lenient: calls are additional',
    run: agent(['a', 'a']),
    options: lenient([]),
    expected: { status: 'PASSED', additional: ['a', 'a'] },
  },
  {
    id: 'E4 expected None, no arguments: vacuous pass listing clean calls',
    run: agent(['a', call('b', 'err'), 'a'], { requests: [['c']] }),
    options: strict(null),
    expected: { status: 'PASSED', passed: ['a', 'a'] },
  },
  {
    id: 'E5 strict: unexpected paused call fails as an attempt',
    run: agent(['search', call('delete_file', 'paused')]),
    options: strict(['search']),
    expected: { status: 'FAILED', passed: ['search'], failed: ['delete_file'] },
  },
  {
    id: 'E9 True == 1 under Python equality',
    run: agent([call('f', 'ok', { flag: true })]),
    options: strict(['f'], { expectedToolCallArguments: { f: { flag: 1 } } }),
    expected: { status: 'PASSED', passed: ['f'], passedArgs: ['f'] },
  },
  {
    id: 'E10 1 == 1.0 and no string coercion',
    run: agent([call('f', 'ok', { n: 1, s: '5' })]),
    options: strict(['f'], { expectedToolCallArguments: { f: [{ n: new PyFloat(1) }, { s: 5 }] } }),
    expected: { status: 'FAILED', passed: ['f'], failedArgs: ['f'] },
  },
  {
    id: 'E12 nested values must be entirely equal',
    run: agent([call('f', 'ok', { filter: { a: 1, b: 2 }, tags: ['x', 'y'] })]),
    options: strict(['f'], { expectedToolCallArguments: { f: { filter: { a: 1 } } } }),
    expected: { status: 'FAILED', passed: ['f'], failedArgs: ['f'] },
  },
  {
    id: 'E12b nested equal values match',
    run: agent([call('f', 'ok', { filter: { a: 1, b: 2 }, tags: ['x', 'y'] })]),
    options: strict(['f'], {
      expectedToolCallArguments: { f: { filter: { b: 2, a: 1 }, tags: ['x', 'y'] } },
    }),
    expected: { status: 'PASSED', passed: ['f'], passedArgs: ['f'] },
  },
  {
    id: 'E13 empty spec list passes when there is a candidate',
    run: agent(['f']),
    options: strict(['f'], { expectedToolCallArguments: { f: [] } }),
    expected: { status: 'PASSED', passed: ['f'], passedArgs: ['f'] },
  },
  {
    id: 'E14 empty spec matches any clean execution',
    run: agent([call('f', 'ok', { q: 1 })]),
    options: strict(['f'], { expectedToolCallArguments: { f: {} } }),
    expected: { status: 'PASSED', passed: ['f'], passedArgs: ['f'] },
  },
  {
    id: 'E15 None spec value needs the key present with None',
    run: agent([call('f', 'ok', { q: 1 })]),
    options: strict(['f'], { expectedToolCallArguments: { f: { missing: null } } }),
    expected: { status: 'FAILED', passed: ['f'], failedArgs: ['f'] },
  },
  {
    id: 'E16 None spec value matches a present None',
    run: agent([call('f', 'ok', { q: null })]),
    options: strict(['f'], { expectedToolCallArguments: { f: { q: null } } }),
    expected: { status: 'PASSED', passed: ['f'], passedArgs: ['f'] },
  },
  {
    id: 'E17 tool only in arguments is still unexpected in strict mode',
    run: agent(['search', call('lookup', 'ok', { id: 1 })]),
    options: strict(['search'], { expectedToolCallArguments: { lookup: { id: 1 } } }),
    expected: { status: 'FAILED', passed: ['search'], failed: ['lookup'], passedArgs: ['lookup'] },
  },
  {
    id: 'E22 arguments only: argument checks decide',
    run: agent([call('f', 'ok', { q: 1 }), 'g']),
    options: strict(null, { expectedToolCallArguments: { f: { q: 1 } } }),
    expected: { status: 'PASSED', passed: ['f', 'g'], passedArgs: ['f'] },
  },
  {
    id: 'R6 request-only names: sorted, once each, after executions, skipped when executed',
    run: agent(['zulu', call('mike', 'err')], { requests: [['yankee', 'alpha', 'mike'], ['yankee']] }),
    options: strict(['search']),
    expected: { status: 'FAILED', failed: ['zulu', 'mike', 'alpha', 'yankee'], missing: ['search'] },
  },
  {
    id: 'R7 request of an expected tool annotates, execution elsewhere does not matter',
    run: agent(['a'], { requests: [['b']] }),
    options: strict(['a', 'b', 'c']),
    expected: { status: 'FAILED', passed: ['a'], missing: [`b${ANN}`, 'c'] },
  },
  {
    id: 'R8 argument order follows the dict, once per tool',
    run: agent([call('b', 'ok', { x: 1 }), call('a', 'ok', { x: 2 })]),
    options: strict(null, { expectedToolCallArguments: { b: { x: 2 }, a: { x: 2 }, c: { x: 1 } } }),
    expected: { status: 'FAILED', passed: ['b', 'a'], passedArgs: ['a'], failedArgs: ['b', 'c'] },
  },
  {
    id: 'R8 paused execution is no argument candidate',
    run: agent([call('f', 'paused', { q: 1 })]),
    options: lenient(null, { expectedToolCallArguments: { f: { q: 1 } } }),
    expected: { status: 'FAILED', failedArgs: ['f'] },
  },
  {
    id: 'R11 names are case-sensitive',
    run: agent(['Search']),
    options: lenient(['search']),
    expected: { status: 'FAILED', additional: ['Search'], missing: ['search'] },
  },
  {
    id: 'R2 members: requests in member messages annotate the leader expectation',
    run: team(['delegate_task_to_member'], [agent([], { requests: [['search']] })]),
    options: lenient(['search']),
    expected: { status: 'FAILED', additional: ['delegate_task_to_member'], missing: [`search${ANN}`] },
  },
  {
    id: 'R2 members: pre-order, leader first then each subtree',
    run: team(['t0'], [team(['t1'], [agent(['t2'])]), agent(['t3'])]),
    options: strict(['t3', 't2', 't1', 't0']),
    expected: { status: 'PASSED', passed: ['t0', 't1', 't2', 't3'] },
  },
];
