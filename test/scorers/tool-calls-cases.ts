/**
 * Every upstream ToolCallScorer unit test (with upstream's "Full Score at HEAD" as the
 * expectation) and probes derived from its rules.
 */
import type { ToolCallsOptions } from '../../src/scorers/tool-calls.js';
import { PyFloat } from '../../src/util/python-json.js';
import { type AgnoNode, call } from './agno-cases.js';

export interface ToolCallsCase {
  id: string;
  run: AgnoNode;
  options: ToolCallsOptions;
  expected: { value: number; passed: boolean; reason: string | null; checks: number; satisfied: number };
}

const MEMBER_NOTE = 'member tool executions were not inspected (member matching is out of scope for 2.8.0)';
const agent = (tools: AgnoNode['tools'], extra: Partial<AgnoNode> = {}): AgnoNode => ({ tools, ...extra });
const team = (tools: AgnoNode['tools'], members: AgnoNode[]): AgnoNode => ({ kind: 'team', tools, members });
const r = (value: number, passed: boolean, reason: string | null, checks: number, satisfied: number) => ({
  value,
  passed,
  reason,
  checks,
  satisfied,
});

export const UPSTREAM_TOOL_CALLS_CASES: ToolCallsCase[] = [
  {
    id: '01 counts_approved_hitl',
    run: agent([call('delete_file', 'hitl-approved')]),
    options: { expectedTools: ['delete_file'] },
    expected: r(1, true, null, 1, 1),
  },
  {
    id: '02 rejects_rejected_hitl',
    run: agent([call('delete_file', 'hitl-rejected')]),
    options: { expectedTools: ['delete_file'] },
    expected: r(0, false, "expected tool 'delete_file' has no clean execution", 1, 0),
  },
  {
    id: '03 none_error_counts_as_success',
    run: agent(['search']),
    options: { expectedTools: ['search'] },
    expected: r(1, true, null, 1, 1),
  },
  {
    id: '04 rejects_refused',
    run: agent(null, { requests: [['search']] }),
    options: { expectedTools: ['search'] },
    expected: r(0, false, "run has no tool executions; expected tool 'search' has no clean execution", 1, 0),
  },
  {
    id: '05 rejects_errored',
    run: agent([call('search', 'err')]),
    options: { expectedTools: ['search'] },
    expected: r(0, false, "expected tool 'search' has no clean execution", 1, 0),
  },
  {
    id: '06a argument_subset',
    run: agent([call('search', 'ok', { query: 'agno', limit: 5 })]),
    options: { expectedTools: ['search'], arguments: { search: { query: 'agno' } } },
    expected: r(1, true, null, 2, 2),
  },
  {
    id: '06b argument mismatch',
    run: agent([call('search', 'ok', { query: 'agno', limit: 5 })]),
    options: { expectedTools: ['search'], arguments: { search: { query: 'other' } } },
    expected: r(0.5, false, "no clean 'search' execution matches arguments {'query': 'other'}", 2, 1),
  },
  {
    id: '06c no type coercion',
    run: agent([call('search', 'ok', { limit: '5' })]),
    options: { expectedTools: ['search'], arguments: { search: { limit: 5 } } },
    expected: r(0.5, false, "no clean 'search' execution matches arguments {'limit': 5}", 2, 1),
  },
  {
    id: '06d errored execution fails both checks',
    run: agent([call('search', 'err', { query: 'agno' })]),
    options: { expectedTools: ['search'], arguments: { search: { query: 'agno' } } },
    expected: r(
      0,
      false,
      "expected tool 'search' has no clean execution; no clean 'search' execution matches arguments {'query': 'agno'}",
      2,
      0,
    ),
  },
  {
    id: '07 no_tools_scores_zero',
    run: agent(null),
    options: { expectedTools: ['search'] },
    expected: r(0, false, "run has no tool executions; expected tool 'search' has no clean execution", 1, 0),
  },
  {
    id: '08 value_is_fraction_of_checks',
    run: agent([call('search', 'ok', { query: 'agno' })]),
    options: { expectedTools: ['search', 'summarize'], arguments: { search: { query: 'agno' } } },
    expected: r(0.6666666666666666, false, "expected tool 'summarize' has no clean execution", 3, 2),
  },
  {
    id: '09a set semantics: duplicates are one check',
    run: agent(['search', 'summarize']),
    options: { expectedTools: ['search', 'search'] },
    expected: r(1, true, null, 1, 1),
  },
  {
    id: '09b strict: additional clean call',
    run: agent(['search', 'summarize']),
    options: { expectedTools: ['search'], allowAdditional: false },
    expected: r(1, false, "additional tool calls not allowed: ['summarize']", 1, 1),
  },
  {
    id: '09c lenient default',
    run: agent(['search', 'summarize']),
    options: { expectedTools: ['search'] },
    expected: r(1, true, null, 1, 1),
  },
  {
    id: '10 ignores_per_task_expected',
    run: agent(['search']),
    options: { expectedTools: ['search'] },
    expected: r(1, true, null, 1, 1),
  },
  {
    id: '11 team_top_level_only',
    run: team(['delegate_task_to_member'], [agent(['multiply'])]),
    options: { expectedTools: ['multiply'] },
    expected: r(0, false, `expected tool 'multiply' has no clean execution; ${MEMBER_NOTE}`, 1, 0),
  },
  {
    id: '12 nested_team_members_named_in_reason',
    run: team(['delegate_task_to_member'], [team(null, [agent(['multiply'])])]),
    options: { expectedTools: ['multiply'] },
    expected: r(0, false, `expected tool 'multiply' has no clean execution; ${MEMBER_NOTE}`, 1, 0),
  },
  {
    id: '14a arguments_only_strict_mode_satisfiable',
    run: agent([call('search', 'ok', { query: 'agno' })]),
    options: { expectedTools: [], arguments: { search: { query: 'agno' } }, allowAdditional: false },
    expected: r(1, true, null, 1, 1),
  },
  {
    id: '14b arguments only, strict, extra clean call',
    run: agent([call('search', 'ok', { query: 'agno' }), 'summarize']),
    options: { expectedTools: [], arguments: { search: { query: 'agno' } }, allowAdditional: false },
    expected: r(1, false, "additional tool calls not allowed: ['summarize']", 1, 1),
  },
  {
    id: '15 rejects_still_paused',
    run: agent([call('delete_file', 'paused')]),
    options: { expectedTools: ['delete_file'] },
    expected: r(0, false, "expected tool 'delete_file' has no clean execution", 1, 0),
  },
  {
    id: '16 test_scorer: all scorers have sync score',
    run: agent(null),
    options: { expectedTools: ['search'] },
    expected: r(0, false, "run has no tool executions; expected tool 'search' has no clean execution", 1, 0),
  },
];

export const PROBE_TOOL_CALLS_CASES: ToolCallsCase[] = [
  {
    id: 'S1 strict ignores an errored unexpected call',
    run: agent(['search', call('other', 'err')]),
    options: { expectedTools: ['search'], allowAdditional: false },
    expected: r(1, true, null, 1, 1),
  },
  {
    id: 'S2 strict ignores a paused unexpected call',
    run: agent(['search', call('delete_file', 'paused')]),
    options: { expectedTools: ['search'], allowAdditional: false },
    expected: r(1, true, null, 1, 1),
  },
  {
    id: 'S3 strict ignores request-only (refused) calls',
    run: agent(['search'], { requests: [['search', 'delete_db']] }),
    options: { expectedTools: ['search'], allowAdditional: false },
    expected: r(1, true, null, 1, 1),
  },
  {
    id: 'S4 argument check counted when the tool is missing',
    run: agent(['other']),
    options: { expectedTools: ['search'], arguments: { search: { q: 1 } } },
    expected: r(
      0,
      false,
      "expected tool 'search' has no clean execution; no clean 'search' execution matches arguments {'q': 1}",
      2,
      0,
    ),
  },
  {
    id: 'T4 additional list is sorted and de-duplicated',
    run: agent(['zz', 'search', 'aa', 'zz']),
    options: { expectedTools: ['search'], allowAdditional: false },
    expected: r(1, false, "additional tool calls not allowed: ['aa', 'zz']", 1, 1),
  },
  {
    id: 'T5 note order: no executions, names, arguments, additional never, member note last',
    run: team(null, [agent(['x'])]),
    options: { expectedTools: ['x'], arguments: { y: {} }, allowAdditional: false },
    expected: r(
      0,
      false,
      `run has no tool executions; expected tool 'x' has no clean execution; no clean 'y' execution matches arguments {}; ${MEMBER_NOTE}`,
      2,
      0,
    ),
  },
  {
    id: 'T5 members without tools add no note',
    run: team(['search'], [agent(null), team([], [agent([])])]),
    options: { expectedTools: ['search'] },
    expected: r(1, true, null, 1, 1),
  },
  {
    id: 'T5 a member with only a paused call carries tools',
    run: team(['search'], [agent([call('x', 'paused')])]),
    options: { expectedTools: ['search'] },
    expected: r(1, true, MEMBER_NOTE, 1, 1),
  },
  {
    id: 'T3 Python repr of specs (True, None, floats, nested, quotes)',
    run: agent([call('f', 'ok', { a: 1 })]),
    options: {
      expectedTools: ['f'],
      arguments: {
        f: [{ a: 1 }, { a: true, b: null, c: 1.5, d: [1, 'x'], e: { k: "it's" }, i: new PyFloat(1) }],
      },
    },
    expected: r(
      2 / 3,
      false,
      `no clean 'f' execution matches arguments {'a': True, 'b': None, 'c': 1.5, 'd': [1, 'x'], 'e': {'k': "it's"}, 'i': 1.0}`,
      3,
      2,
    ),
  },
  {
    id: 'T3 each spec is a check; any clean candidate may satisfy each',
    run: agent([call('add', 'ok', { a: 2 }), call('add', 'err', { a: 3 }), call('add', 'ok', { a: 4 })]),
    options: { expectedTools: ['add'], arguments: { add: [{ a: 2 }, { a: 3 }, { a: 4.0 }] } },
    expected: r(0.75, false, "no clean 'add' execution matches arguments {'a': 3}", 4, 3),
  },
  {
    id: 'T3 True == 1 in argument specs',
    run: agent([call('f', 'ok', { flag: 1 })]),
    options: { expectedTools: [], arguments: { f: { flag: true } } },
    expected: r(1, true, null, 1, 1),
  },
  {
    id: 'T2 execution with no arguments reads as {}',
    run: agent(['f']),
    options: { expectedTools: [], arguments: { f: [{}, { q: null }] } },
    expected: r(0.5, false, "no clean 'f' execution matches arguments {'q': None}", 2, 1),
  },
];
