import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { spansFromOtlpJson } from '../../src/conventions/from-otlp-json.js';
import { reconstructTraces } from '../../src/reconstruction/reconstruct-trace.js';
import { checkRegexSafety } from '../../src/scorers/safe-regex.js';
import { toolOrder } from '../../src/scorers/tool-order.js';
import { trajectory, trajectoryFromConfig, trajectoryLimits } from '../../src/scorers/trajectory.js';
import {
  type Scope,
  type TrajectoryOptions,
  type TrajectoryOrder,
  trajectoryConfigSchema,
} from '../../src/scorers/trajectory-config.js';
import type { AgentRun, HistoryCall, ToolExecution, ToolStatus } from '../../src/types.js';
import { configDigest } from '../../src/util/digest.js';
import { PyFloat } from '../../src/util/python-json.js';
import { roundHalfEven } from '../../src/util/round-half-even.js';
import { inMemoryRun } from '../helpers/in-memory-run.js';
import { type SpanNode, type ToolSpanStatus, TraceBuilder } from '../helpers/trace-builder.js';

interface Step {
  name: string;
  args?: unknown;
  /** `requested`: the model asked and nothing ran (request-only). */
  status?: ToolSpanStatus | 'requested';
}

function addSteps(agent: SpanNode, steps: Step[], prefix: string): void {
  steps.forEach((s, i) => {
    const id = `${prefix}${i}`;
    agent.llm({ toolCalls: [{ name: s.name, id, args: s.args ?? {} }] });
    if (s.status !== 'requested') {
      agent.tool(s.name, { id, args: s.args ?? {}, status: s.status ?? 'ok', result: { ok: true } });
    }
  });
}

function runOf(steps: Step[], build?: (agent: SpanNode) => void): AgentRun {
  const t = new TraceBuilder();
  const agent = t.agent('refund-agent');
  addSteps(agent, steps, 'call-');
  build?.(agent);
  agent.llm();
  const traces = reconstructTraces(spansFromOtlpJson(t.toOtlp()));
  expect(traces).toHaveLength(1);
  expect(traces[0]!.problems).toEqual([]);
  return traces[0]!.runs[0]!;
}

/** The `trajectory` entry of the `refunds` rule of examples/policies/refunds.yaml. */
const REFUNDS_YAML = {
  kind: 'trajectory',
  expected_tools: ['get_order_detail', 'check_refund_policy'],
  forbidden_tools: ['submit_refund'],
  max_calls: 3,
  arg_constraints: {
    get_order_detail: { order_id: { equals: 'A1024' }, include_history: { equals: true } },
  },
  expected_order: [['get_order_detail', 'check_refund_policy']],
  pass_threshold: 0.9,
  risk: 'high',
  intent: 'refund_check',
};

const refunds = () => trajectoryFromConfig(trajectoryConfigSchema.parse(REFUNDS_YAML));

const GET: Step = { name: 'get_order_detail', args: { order_id: 'A1024', include_history: true } };
const CHECK: Step = { name: 'check_refund_policy', args: { order_id: 'A1024' } };

const perTool = (calls: number, clean: number, firstOk: boolean, finalOk: boolean) => ({
  calls,
  clean,
  first_call_correct: firstOk,
  final_success: finalOk,
  retries: Math.max(0, calls - 1),
});

describe('trajectory: the refund example (the `refunds` rule)', () => {
  it('the good run passes every check with score 1.0', () => {
    const scorer = refunds();
    const r = scorer.score(runOf([GET, CHECK]));
    expect(r).toEqual({
      scorer: 'trajectory',
      kind: 'trajectory',
      passed: true,
      score: 1,
      label: 'pass',
      reason: null,
      digest: scorer.digest,
      detail: {
        score: 1,
        passed: true,
        tool_selection_pass: true,
        arg_accuracy: 1,
        order_pass: true,
        call_budget_pass: true,
        errors: [],
        calls: 2,
        precision: 1,
        recall: 1,
        per_tool: {
          get_order_detail: perTool(1, 1, true, true),
          check_refund_policy: perTool(1, 1, true, true),
        },
      },
    });
    expect(scorer.tags).toEqual({ risk: 'high', intent: 'refund_check' });
  });

  it('a forbidden submit_refund that executed fails tool selection', () => {
    const r = refunds().score(runOf([GET, CHECK, { name: 'submit_refund', args: { order_id: 'A1024' } }]));
    expect(r.passed).toBe(false);
    expect(r.label).toBe('fail');
    expect(r.score).toBe(0.65);
    expect(r.reason).toBe('forbidden tool submit_refund was executed (1 call)');
    expect(r.detail).toMatchObject({
      score: 0.65,
      passed: false,
      tool_selection_pass: false,
      arg_accuracy: 1,
      order_pass: true,
      call_budget_pass: true,
      errors: [
        {
          code: 'forbidden_tool',
          tool: 'submit_refund',
          message: 'forbidden tool submit_refund was executed (1 call)',
        },
      ],
      calls: 3,
      precision: 0.6667,
      recall: 1,
    });
  });

  it('a forbidden submit_refund that was only requested (refused) still counts, and says so', () => {
    const run = runOf([
      GET,
      CHECK,
      { name: 'submit_refund', args: { order_id: 'A1024' }, status: 'requested' },
    ]);
    expect(run.calls.map((c) => [c.name, c.status, c.requestOnly])).toEqual([
      ['get_order_detail', 'ok', false],
      ['check_refund_policy', 'ok', false],
      ['submit_refund', 'refused', true],
    ]);
    const r = refunds().score(run);
    expect(r.score).toBe(0.65);
    expect(r.detail.errors).toEqual([
      {
        code: 'forbidden_tool',
        tool: 'submit_refund',
        message: 'forbidden tool submit_refund was requested but not executed (1 request)',
      },
    ]);
  });

  it('a fourth call exceeds max_calls', () => {
    const r = refunds().score(runOf([GET, CHECK, GET, CHECK]));
    expect(r.passed).toBe(false);
    expect(r.score).toBe(0.85);
    expect(r.detail).toEqual({
      score: 0.85,
      passed: false,
      tool_selection_pass: true,
      arg_accuracy: 1,
      order_pass: true,
      call_budget_pass: false,
      errors: [{ code: 'call_budget_exceeded', message: '4 calls, more than max_calls 3' }],
      calls: 4,
      precision: 0.5,
      recall: 1,
      per_tool: {
        get_order_detail: perTool(2, 2, true, true),
        check_refund_policy: perTool(2, 2, true, true),
      },
    });
  });

  it('a wrong order_id fails one argument check of two', () => {
    const r = refunds().score(runOf([{ ...GET, args: { order_id: 'A1025', include_history: true } }, CHECK]));
    expect(r.passed).toBe(false);
    expect(r.score).toBe(0.825);
    expect(r.detail).toMatchObject({
      arg_accuracy: 0.5,
      tool_selection_pass: true,
      order_pass: true,
      call_budget_pass: true,
      errors: [
        {
          code: 'arg_mismatch',
          tool: 'get_order_detail',
          field: 'order_id',
          message: 'get_order_detail.order_id failed equals "A1024", got "A1025"',
        },
      ],
      per_tool: {
        get_order_detail: perTool(1, 1, false, false),
        check_refund_policy: perTool(1, 1, true, true),
      },
    });
  });

  it('a retry with the right order_id: first call wrong, final success, still an arg_mismatch', () => {
    const r = refunds().score(
      runOf([{ ...GET, args: { order_id: 'A1025', include_history: true } }, GET, CHECK]),
    );
    expect(r.score).toBe(0.825);
    expect((r.detail.per_tool as Record<string, unknown>).get_order_detail).toEqual(
      perTool(2, 2, false, true),
    );
  });

  it('the reverse order violates expected_order', () => {
    const r = refunds().score(runOf([CHECK, GET]));
    expect(r.passed).toBe(false);
    expect(r.score).toBe(0.85);
    expect(r.detail).toMatchObject({
      order_pass: false,
      tool_selection_pass: true,
      arg_accuracy: 1,
      call_budget_pass: true,
      errors: [
        {
          code: 'order_violation',
          tool: 'check_refund_policy',
          message: 'check_refund_policy was first called before get_order_detail',
        },
      ],
    });
  });

  it('a missing expected tool fails tool selection; its constraints count nothing', () => {
    const r = refunds().score(runOf([CHECK]));
    expect(r.score).toBe(0.65);
    expect(r.detail).toMatchObject({
      tool_selection_pass: false,
      arg_accuracy: 1,
      errors: [
        {
          code: 'missing_tool',
          tool: 'get_order_detail',
          message: 'expected tool get_order_detail was not called',
        },
      ],
      precision: 1,
      recall: 0.5,
      per_tool: { get_order_detail: perTool(0, 0, false, false) },
    });
  });

  it('an errored first call is not first_call_correct', () => {
    const r = refunds().score(runOf([{ ...GET, status: 'error' }, GET, CHECK]));
    expect((r.detail.per_tool as Record<string, unknown>).get_order_detail).toEqual(
      perTool(2, 1, false, true),
    );
    expect(r.score).toBe(1);
    expect(r.passed).toBe(true);
  });

  it('redaction keeps values out of messages', () => {
    const r = refunds().score(
      runOf([{ ...GET, args: { order_id: 'SECRET', include_history: true } }, CHECK]),
      {
        redact: { values: true },
      },
    );
    expect(r.reason).toBe('get_order_detail.order_id failed equals');
    expect(JSON.stringify(r)).not.toContain('SECRET');
  });

  it('history never counts: a replayed submit_refund is not a forbidden call', () => {
    const run = runOf([GET, CHECK], (agent) =>
      agent.llm({
        inputMessages: [
          {
            role: 'assistant',
            parts: [{ type: 'tool_call', id: 'old', name: 'submit_refund', arguments: {} }],
          },
        ],
      }),
    );
    expect(run.history.map((h) => h.name)).toEqual(['submit_refund']);
    expect(refunds().score(run).score).toBe(1);
  });
});

describe('trajectory: scope', () => {
  const nested = () => {
    const t = new TraceBuilder();
    const parent = t.agent('team');
    addSteps(parent, [{ name: 'plan' }], 'p');
    parent.llm({ toolCalls: [{ name: 'agent-a', id: 'ta' }] });
    const a = parent.tool('agent-a', { id: 'ta' }).agent('member-a');
    addSteps(a, [{ name: 'search' }], 'a');
    parent.llm({ toolCalls: [{ name: 'agent-b', id: 'tb' }] });
    const b = parent.tool('agent-b', { id: 'tb' }).agent('member-b');
    addSteps(b, [{ name: 'write' }], 'b');
    return reconstructTraces(spansFromOtlpJson(t.toOtlp()))[0]!.runs[0]!;
  };

  it('members (default): the run, then each member depth first', () => {
    const run = nested();
    expect(run.children.map((c) => c.agent)).toEqual(['member-a', 'member-b']);
    const r = trajectory({ expectedTools: ['plan', 'search', 'write'], order: 'in_order' }).score(run);
    expect(r.passed).toBe(true);
    expect(r.detail.calls).toBe(5);
    expect(r.detail.precision).toBe(0.6);
    expect(r.detail.recall).toBe(1);
  });

  it('self: only the run itself', () => {
    const r = trajectory({ expectedTools: ['plan', 'search'], scope: 'self' }).score(nested());
    expect(r.detail.calls).toBe(3);
    expect(r.detail.errors).toEqual([
      { code: 'missing_tool', tool: 'search', message: 'expected tool search was not called' },
    ]);
  });
});

describe('trajectory: order modes, repeats, precision and recall', () => {
  const run = () => runOf([{ name: 'a' }, { name: 'b' }, { name: 'a' }, { name: 'c' }]);

  it('exact / in_order / any_order over expected_tools (ADK semantics)', () => {
    const verdict = (order: 'exact' | 'in_order' | 'any_order', expected: string[]) =>
      trajectory({ expectedTools: expected, order }).score(run()).detail.order_pass;
    expect(verdict('exact', ['a', 'b', 'a', 'c'])).toBe(true);
    expect(verdict('exact', ['a', 'b', 'c'])).toBe(false);
    expect(verdict('in_order', ['a', 'b', 'c'])).toBe(true);
    expect(verdict('in_order', ['b', 'a', 'c'])).toBe(true);
    expect(verdict('in_order', ['c', 'a'])).toBe(false);
    expect(verdict('any_order', ['c', 'a', 'a'])).toBe(true);
    expect(verdict('any_order', ['c', 'c'])).toBe(false);
    const r = trajectory({ expectedTools: ['a', 'b', 'c'], order: 'exact' }).score(run());
    expect(r.score).toBe(0.85);
    expect(r.detail.errors).toEqual([
      {
        code: 'order_violation',
        message: 'calls [a, b, a, c] do not match expected_tools [a, b, c] exactly',
      },
    ]);
  });

  it('messages about long runs stay bounded', () => {
    const many = runOf(Array.from({ length: 30 }, (_, i) => ({ name: `t${i}` })));
    const r = trajectory({ expectedTools: ['t1', 't0'], order: 'exact' }).score(many);
    expect(r.detail.errors).toEqual([
      {
        code: 'order_violation',
        message: `calls [${Array.from({ length: 20 }, (_, i) => `t${i}`).join(', ')}, … (10 more)] do not match expected_tools [t1, t0] exactly`,
      },
    ]);
  });

  it('the reason lists the first ten errors; detail keeps every one', () => {
    const steps: Step[] = Array.from({ length: 36 }, (_, i) => ({
      name: `t${i % 12}`,
      args: { same: true },
    }));
    const r = trajectory({ maxRepeats: 2 }).score(runOf(steps));
    expect((r.detail.errors as unknown[]).length).toBe(12);
    expect(r.reason!.split('; ')).toHaveLength(11);
    expect(r.reason!.endsWith('; … (2 more errors)')).toBe(true);
  });

  it('precision and recall are multiset overlaps', () => {
    const r = trajectory({ expectedTools: ['a', 'a', 'a', 'd'] }).score(run());
    // overlap = min(2,3) for a = 2; precision 2/4, recall 2/4.
    expect([r.detail.precision, r.detail.recall]).toEqual([0.5, 0.5]);
    expect(trajectory({ forbiddenTools: ['z'] }).score(run()).detail.precision).toBeNull();
  });

  it('max_repeats flags identical name + arguments (canonical key order), not mere retries', () => {
    const steps: Step[] = [
      { name: 'search', args: { q: 'x', page: 1 } },
      { name: 'search', args: { page: 1, q: 'x' } },
      { name: 'search', args: { q: 'y', page: 1 } },
      { name: 'search', args: { q: 'x', page: 1 } },
    ];
    const r2 = trajectory({ maxRepeats: 2 }).score(runOf(steps));
    expect(r2.detail.errors).toEqual([
      {
        code: 'repeated_call',
        tool: 'search',
        message: 'search was called 3 times with identical arguments (max_repeats 2)',
      },
    ]);
    expect(r2.detail.call_budget_pass).toBe(false);
    expect(r2.score).toBe(0.85);
    expect(trajectory({ maxRepeats: 3 }).score(runOf(steps)).passed).toBe(true);
  });
});

describe('trajectory: argument rules', () => {
  const args = {
    order_id: 'A1024',
    amount: 42.5,
    count: 3,
    flag: true,
    nothing: null,
    tags: ['vip', 'eu'],
    customer: { email: 'ann@example.com', address: { city: 'Paris' } },
    items: [{ sku: 'X-1', qty: 2 }],
    'dotted.key': 'literal',
  };
  const score = (fields: Record<string, Record<string, unknown>>, callArgs: unknown = args) =>
    trajectory({ argConstraints: { t: fields } as TrajectoryOptions['argConstraints'] }).score(
      runOf([{ name: 't', args: callArgs }]),
    );

  const holds: Array<[string, Record<string, unknown>]> = [
    ['order_id', { equals: 'A1024' }],
    ['count', { equals: 3.0 }],
    ['flag', { equals: 1 }],
    ['order_id', { not_equals: 'A1025' }],
    ['order_id', { contains: '10' }],
    ['tags', { contains: 'eu' }],
    ['customer', { contains: 'email' }],
    ['missing', { contains: '' }],
    ['order_id', { in: ['A1023', 'A1024'] }],
    ['count', { not_in: [1, 2] }],
    ['order_id', { not_null: true }],
    ['nothing', { not_null: false }],
    ['nothing', { exists: true }],
    ['missing', { exists: false }],
    ['missing', { equals: null }],
    ['customer.email', { matches: '^[^@]+@example\\.com$' }],
    ['customer.address.city', { equals: 'Paris' }],
    ['items.0.sku', { matches: 'X-\\d' }],
    ['dotted.key', { equals: 'literal' }],
    ['amount', { gt: 42, lte: 42.5 }],
    ['count', { gte: 3, lt: 4 }],
    ['count', { matches: '^3$' }],
  ];
  for (const [path, rule] of holds) {
    it(`${path} ${JSON.stringify(rule)} holds`, () => {
      const r = score({ [path]: rule });
      expect(r.detail.errors).toEqual([]);
      expect(r.detail.arg_accuracy).toBe(1);
    });
  }

  const fails: Array<[string, Record<string, unknown>, string]> = [
    ['order_id', { equals: 'a1024' }, 'failed equals "a1024", got "A1024"'],
    ['count', { equals: '3' }, 'failed equals "3", got 3'],
    ['tags', { contains: 'us' }, 'failed contains "us", got ["vip","eu"]'],
    ['missing', { contains: 'x' }, 'failed contains "x", field missing'],
    ['order_id', { not_in: ['A1024'] }, 'failed not_in ["A1024"], got "A1024"'],
    ['nothing', { not_null: true }, 'must not be null, got null'],
    ['missing', { exists: true }, 'must exist, field missing'],
    ['order_id', { matches: '^B' }, 'must match "^B", got "A1024"'],
    ['flag', { gt: 0 }, 'failed gt 0, got true'],
    ['order_id', { gt: 0 }, 'failed gt 0, got "A1024"'],
    ['count', { gte: 1, lt: 3 }, 'failed lt 3, got 3'],
    ['items.1.sku', { exists: true }, 'must exist, field missing'],
  ];
  for (const [path, rule, message] of fails) {
    it(`${path} ${JSON.stringify(rule)} fails: ${message}`, () => {
      const r = score({ [path]: rule });
      expect(r.detail.errors).toEqual([
        { code: 'arg_mismatch', tool: 't', field: path, message: `t.${path} ${message}` },
      ]);
      expect(r.detail.arg_accuracy).toBe(0);
      expect(r.score).toBe(0.65);
    });
  }

  it('unreadable arguments are missing fields, not a crash', () => {
    const r = score({ order_id: { exists: true }, other: { exists: false } }, '{not json');
    expect(r.label).toBe('fail');
    expect(r.detail.arg_accuracy).toBe(0.5);
  });

  it('huge and deeply nested argument values are scored without crashing', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 5000; i++) deep = { n: deep };
    const big = 'x'.repeat(2_000_000);
    const run = runOf([]);
    const call = {
      ...runOf([{ name: 't', args: {} }]).calls[0]!,
      args: { deep, big, list: Array.from({ length: 100_000 }, (_, i) => i) },
    } as ToolExecution;
    run.calls = [call, { ...call }];
    const t0 = performance.now();
    const r = trajectory({
      maxRepeats: 1,
      argConstraints: {
        t: {
          big: { matches: 'x{5}$', contains: 'xxx' },
          deep: { equals: 'other' },
          list: { contains: 99_999 },
          'deep.n.n.n': { exists: true },
        },
      },
    }).score(run);
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(r.label).toBe('fail');
    expect(r.detail.arg_accuracy).toBe(0.75);
    const errors = r.detail.errors as Array<{ code: string; message: string }>;
    expect(errors.map((e) => e.code)).toEqual(['repeated_call', 'arg_mismatch']);
    expect(errors[1]!.message.length).toBeLessThan(200);
  });
});

describe('trajectory: config schema', () => {
  const problems = (input: Record<string, unknown>) => {
    const r = trajectoryConfigSchema.safeParse({ kind: 'trajectory', ...input });
    return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };

  it('accepts the refunds entry and canonicalises it with defaults', () => {
    const scorer = refunds();
    expect(scorer.config).toEqual({
      kind: 'trajectory',
      expected_tools: ['get_order_detail', 'check_refund_policy'],
      forbidden_tools: ['submit_refund'],
      max_calls: 3,
      arg_constraints: {
        get_order_detail: { order_id: { equals: 'A1024' }, include_history: { equals: true } },
      },
      expected_order: [['get_order_detail', 'check_refund_policy']],
      weights: { tool_selection: 0.35, arguments: 0.35, order: 0.15, call_budget: 0.15 },
      pass_threshold: 0.9,
      scope: 'members',
      risk: 'high',
      intent: 'refund_check',
    });
    expect(scorer.digest).toMatch(/^[0-9a-f]{64}$/);
    // Defaults written out, or floats written as PyFloat, give the same digest.
    const explicit = trajectoryFromConfig(
      trajectoryConfigSchema.parse({
        ...REFUNDS_YAML,
        pass_threshold: new PyFloat(0.9),
        scope: 'members',
        weights: { tool_selection: 0.35, arguments: 0.35 },
      }),
    );
    expect(explicit.digest).toBe(scorer.digest);
    expect(trajectory({ ...{ expectedTools: ['a'] }, passThreshold: 1 }).digest).toBe(
      trajectoryFromConfig(
        trajectoryConfigSchema.parse({
          kind: 'trajectory',
          expected_tools: ['a'],
          pass_threshold: new PyFloat(1),
        }),
      ).digest,
    );
    // Floats are digested as floats: 0.9 and 0.35 as Python floats, integers as ints.
    expect(scorer.digest).toBe(
      configDigest({
        ...scorer.config,
        weights: {
          tool_selection: new PyFloat(0.35),
          arguments: new PyFloat(0.35),
          order: new PyFloat(0.15),
          call_budget: new PyFloat(0.15),
        },
        pass_threshold: new PyFloat(0.9),
      }),
    );
    expect(refunds().digest).not.toBe(trajectory({ expectedTools: ['get_order_detail'] }).digest);
  });

  it('refuses unsafe and invalid patterns at load, with a clear message', () => {
    for (const pattern of ['(a+)+$', '(a|a)*', '(.*)*', '(\\w+\\s?)+$', '([a-z]*)*x']) {
      const p = problems({ arg_constraints: { t: { f: { matches: pattern } } } });
      expect(p).toHaveLength(1);
      expect(p[0]).toMatch(/^arg_constraints\.t\.f\.matches: unsafe or invalid pattern: /);
    }
    expect(problems({ arg_constraints: { t: { f: { matches: '(' } } } })[0]).toMatch(
      /Invalid regular expression/,
    );
    expect(problems({ arg_constraints: { t: { f: { matches: '^A\\d{4}$' } } } })).toEqual([]);
    expect(() => trajectory({ argConstraints: { t: { f: { matches: '(a+)+' } } } })).toThrow(
      /arg_constraints\.t\.f\.matches: unsafe or invalid pattern/,
    );
  });

  it('refuses bare strings where lists belong, empty lists, unknown keys and bad shapes', () => {
    expect(problems({ expected_tools: 'get_order_detail' })).toEqual([
      'expected_tools: expected array of strings',
    ]);
    expect(problems({ forbidden_tools: 'submit_refund' })).toEqual([
      'forbidden_tools: expected array of strings',
    ]);
    expect(problems({ expected_tools: [] })).toEqual([
      'expected_tools: expected_tools must not be empty (leave it out instead)',
    ]);
    expect(problems({ expected_order: [] })).toHaveLength(1);
    expect(problems({ expected_order: ['a', 'b'] })[0]).toMatch(/^expected_order\.0: /);
    expect(problems({ expected_order: [['a', 'a']] })).toEqual([
      'expected_order: a [before, after] pair needs two different tools',
    ]);
    expect(problems({ arg_constraints: {} })).toHaveLength(1);
    expect(problems({ arg_constraints: { t: {} } })).toEqual([
      'arg_constraints.t: a tool needs at least one field rule',
    ]);
    expect(problems({ arg_constraints: { t: { f: 'A1024' } } })[0]).toMatch(/^arg_constraints\.t\.f: /);
    expect(problems({ arg_constraints: { t: { f: {} } } })[0]).toMatch(
      /^arg_constraints\.t\.f: a rule needs at least one of/,
    );
    expect(problems({ arg_constraints: { t: { f: { in: [] } } } })).toHaveLength(1);
    expect(problems({ arg_constraints: { t: { f: { in: 'A1024' } } } })).toEqual([
      'arg_constraints.t.f.in: expected a list',
    ]);
    expect(problems({ arg_constraints: { t: { f: { equal: 1 } } } })).toContain(
      'arg_constraints.t.f: Unrecognized key: "equal"',
    );
    expect(problems({ max_calls: -1 })).toHaveLength(1);
    expect(problems({ max_calls: 2.5 })).toHaveLength(1);
    expect(problems({ max_repeats: 0 })).toHaveLength(1);
    expect(problems({ pass_threshold: 1.5 })).toHaveLength(1);
    expect(problems({ weights: { order: 0.5 } })[0]).toMatch(/^weights: weights must sum to 1/);
    expect(problems({ scope: 'all' })).toHaveLength(1);
    expect(problems({ order: 'in_order' })).toEqual(['order: order needs expected_tools']);
    expect(problems({ expected_tools: ['a'], forbidden_tools: ['a'] })).toEqual([
      'expected_tools.0: a is both expected and forbidden',
    ]);
    expect(problems({ expected_tool: ['a'] })).toHaveLength(1);
    expect(problems({})).toEqual([]);
  });

  it('name and sampling reach the scorer', () => {
    const scorer = trajectoryFromConfig(
      trajectoryConfigSchema.parse({
        kind: 'trajectory',
        name: 'refund_path',
        expected_tools: ['a'],
        sampling: { ratio: 0.5 },
      }),
    );
    expect([scorer.name, scorer.kind, scorer.sampling, scorer.async]).toEqual([
      'refund_path',
      'trajectory',
      { ratio: 0.5 },
      false,
    ]);
    expect(scorer.score(runOf([{ name: 'a' }])).scorer).toBe('refund_path');
    expect(trajectory({ name: 'x' }).name).toBe('x');
    expect(trajectory({}).sampling).toBeUndefined();
  });

  it('custom weights and threshold', () => {
    const r = trajectory({
      expectedTools: ['a'],
      weights: { toolSelection: 0.5, arguments: 0.2, order: 0.2, callBudget: 0.1 },
      passThreshold: 0.4,
    }).score(runOf([{ name: 'b' }]));
    expect(r.score).toBe(0.5);
    expect(r.passed).toBe(false); // errors always fail
  });
});

describe('trajectory: limits for live misuse', () => {
  it('exposes forbidden, expected, max_calls, max_repeats and the compiled arg_constraints', () => {
    const { argRules, ...limits } = trajectoryLimits(refunds())!;
    expect(limits).toEqual({
      forbidden: new Set(['submit_refund']),
      expected: new Set(['get_order_detail', 'check_refund_policy']),
      maxCalls: 3,
    });
    expect([...argRules.keys()]).toEqual(['get_order_detail']);
    expect(argRules.get('get_order_detail')!.map((f) => [f.path, f.keys])).toEqual([
      ['order_id', ['equals']],
      ['include_history', ['equals']],
    ]);
    expect(trajectoryLimits(trajectory({ maxRepeats: 2 }))).toEqual({
      forbidden: new Set(),
      expected: new Set(),
      maxRepeats: 2,
      argRules: new Map(),
    });
    expect(trajectoryLimits(toolOrder({ expectedTool: 'a' }))).toBeUndefined();
  });

  it('a broken run becomes an error result', () => {
    const r = refunds().score({ calls: [], children: null } as unknown as AgentRun);
    expect(r.label).toBe('error');
    expect(r.score).toBe(0);
    expect(r.passed).toBe(false);
  });
});

describe('roundHalfEven (Python round)', () => {
  it('rounds ties in binary to even and everything else to nearest', () => {
    expect(roundHalfEven(0.03125, 4)).toBe(0.0312);
    expect(roundHalfEven(0.09375, 4)).toBe(0.0938);
    expect(roundHalfEven(2 / 3, 4)).toBe(0.6667);
    expect(roundHalfEven(0.825, 4)).toBe(0.825);
    expect(roundHalfEven(0.35 + 0.35 * 0.5 + 0.15 + 0.15, 4)).toBe(0.825);
    expect(roundHalfEven(1, 4)).toBe(1);
    expect(roundHalfEven(0.99995, 4)).toBe(1);
  });
});

// ---------------------------------------------------------------------------------------
// Properties on in-memory runs.

function fakeRun(calls: Array<[string, ToolStatus, number]>, history: string[] = []): AgentRun {
  return inMemoryRun(
    calls.map(([name, status, v], i) => ({ name, status, callId: `c${i}`, args: { v } })),
    history.map((name, i): HistoryCall => ({ name, spanId: `h${i}`, reason: 'flag' })),
  );
}

const nameArb = fc.constantFrom('a', 'b', 'c', 'd', 'e');
const callsArb = fc.array(
  fc.tuple(
    nameArb,
    fc.constantFrom<ToolStatus>('ok', 'error', 'refused', 'paused'),
    fc.integer({ min: 0, max: 3 }),
  ),
  { maxLength: 12 },
);
const optionsArb: fc.Arbitrary<TrajectoryOptions> = fc
  .record(
    {
      expectedTools: fc.array(fc.constantFrom('a', 'b', 'c'), { minLength: 1, maxLength: 4 }),
      forbiddenTools: fc.array(fc.constantFrom('d', 'e'), { minLength: 1, maxLength: 2 }),
      maxCalls: fc.integer({ min: 0, max: 8 }),
      maxRepeats: fc.integer({ min: 1, max: 3 }),
      argConstraints: fc.constant<TrajectoryOptions['argConstraints']>({
        a: { v: { lte: 1 } },
        b: { v: { in: [0, 2] } },
      }),
      expectedOrder: fc.constant([['a', 'b']] as Array<[string, string]>),
      order: fc.constantFrom<TrajectoryOrder>('exact', 'in_order', 'any_order'),
      scope: fc.constantFrom<Scope>('self', 'members'),
    },
    { requiredKeys: [] },
  )
  .filter((o) => o.order === undefined || o.expectedTools !== undefined);

describe('trajectory: properties', () => {
  it('score, precision, recall and arg_accuracy stay in [0, 1]; passed ⇒ no errors and score ≥ threshold', () => {
    fc.assert(
      fc.property(callsArb, optionsArb, (calls, options) => {
        const r = trajectory(options).score(fakeRun(calls));
        expect(r.label).not.toBe('error');
        for (const v of [
          r.score,
          r.detail.arg_accuracy,
          r.detail.precision ?? 0,
          r.detail.recall ?? 0,
        ] as number[]) {
          expect(v).toBeGreaterThanOrEqual(0);
          expect(v).toBeLessThanOrEqual(1);
        }
        expect(r.passed).toBe((r.detail.errors as unknown[]).length === 0 && r.score >= 0.9);
        expect(r.detail.score).toBe(r.score);
      }),
      { seed: 23, numRuns: 2000 },
    );
  });

  it('history never changes a verdict', () => {
    fc.assert(
      fc.property(callsArb, fc.array(nameArb, { maxLength: 6 }), optionsArb, (calls, history, options) => {
        const scorer = trajectory(options);
        expect(scorer.score(fakeRun(calls, history))).toEqual(scorer.score(fakeRun(calls)));
      }),
      { seed: 29, numRuns: 500 },
    );
  });
});

describe('safe-regex', () => {
  it('accepts linear patterns and refuses exponential ones', () => {
    for (const ok of [
      '^A\\d{4}$',
      '(\\d+\\.){3}\\d+',
      '([a-z]+ )+x',
      '(foo|bar)+',
      '.*.*=',
      '(a|b)*c',
      '\\w+@',
    ]) {
      expect(checkRegexSafety(ok)).toEqual({ safe: true });
    }
    for (const bad of [
      '(a+)+',
      '(a|a)*',
      '(.*)*',
      '(a*)*',
      '(\\w+\\s?)+$',
      '(.*a)*',
      '(a|ab)*',
      '(x+x+)+y',
      '(a)\\1',
    ]) {
      expect(checkRegexSafety(bad).safe).toBe(false);
    }
    expect(checkRegexSafety('x'.repeat(1001))).toEqual({
      safe: false,
      reason: 'pattern is longer than 1000 characters',
    });
  });

  it('refuses syntax the linear-time engine lacks, with the reason', () => {
    for (const p of ['(?=a)b', '[^]*', '\\u0041']) {
      const r = checkRegexSafety(p);
      expect(r.safe).toBe(false);
      expect(r.safe === false && r.reason).toMatch(
        /^not supported by the linear-time engine \(RE2 syntax\): /,
      );
    }
  });

  it('polynomial patterns on multi-megabyte values stay fast (linear-time matching)', () => {
    // With a backtracking engine `\w+@` on 2 MB of `a` is quadratic: hours.
    const run = runOf([
      { name: 't', args: { text: 'a'.repeat(2_000_000), text2: 'b'.repeat(2_000_000) + '@' } },
    ]);
    const t0 = performance.now();
    const r = trajectory({
      argConstraints: { t: { text: { matches: '\\w+@' }, text2: { matches: '.*.*@$' } } },
    }).score(run);
    expect(performance.now() - t0).toBeLessThan(3000);
    expect(r.detail.errors).toEqual([
      {
        code: 'arg_mismatch',
        tool: 't',
        field: 'text',
        message: `t.text must match "\\\\w+@", got "${'a'.repeat(79)}…`,
      },
    ]);
  });

  it('every refused classic pattern really is slow, every accepted one is fast (sanity of the rule)', () => {
    const input = 'a'.repeat(22) + '!';
    const t0 = performance.now();
    /^(a+)+$/.test(input);
    const slow = performance.now() - t0;
    const t1 = performance.now();
    /^(\d+\.){3}\d+$/.test(input);
    const fast = performance.now() - t1;
    expect(slow).toBeGreaterThan(fast * 10);
  });

  it('reports arg_accuracy rounded to 4 places, as the trajectory evaluator does (round(arg_accuracy, 4)); the score uses the exact ratio', () => {
    const run = runOf([{ name: 't', args: { a: 1, b: 2, c: 3 } }]);
    const wrong = (b: number, c: number) =>
      trajectory({ argConstraints: { t: { a: { equals: 1 }, b: { equals: b }, c: { equals: c } } } }).score(
        run,
      );
    const oneThird = wrong(0, 0);
    expect(oneThird.detail.arg_accuracy).toBe(0.3333);
    const twoThirds = wrong(2, 0);
    expect(twoThirds.detail.arg_accuracy).toBe(0.6667);
    // Default weights 0.35 / 0.35 / 0.15 / 0.15, from the exact ratio: 0.35 + 0.35 × 2/3 + 0.3.
    expect(twoThirds.score).toBe(roundTo4(0.35 + 0.35 * (2 / 3) + 0.15 + 0.15));
    expect(twoThirds.score).toBe(0.8833);
  });
});

function roundTo4(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}
