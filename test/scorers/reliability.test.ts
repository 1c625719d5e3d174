import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AgnoEvidence } from '../../src/scorers/agno-evidence.js';
import {
  evaluateReliability,
  REFUSED_ANNOTATION,
  type ReliabilityDetail,
  type ReliabilityOptions,
  reliability,
  reliabilityConfigSchema,
  reliabilityFromConfig,
} from '../../src/scorers/reliability.js';
import type { AgentRun, ScorerResult } from '../../src/types.js';
import { configDigest } from '../../src/util/digest.js';
import { type AgnoNode, agnoEvidenceOf, type CallState, runOf } from './agno-cases.js';
import {
  ANN,
  type ExpectedReliability,
  PROBE_RELIABILITY_CASES,
  type ReliabilityCase,
  UPSTREAM_RELIABILITY_CASES,
} from './reliability-cases.js';

function full(e: ExpectedReliability): ReliabilityDetail {
  return {
    eval_status: e.status,
    passed_tool_calls: e.passed ?? [],
    failed_tool_calls: e.failed ?? [],
    additional_tool_calls: e.additional ?? [],
    missing_tool_calls: e.missing ?? [],
    passed_argument_checks: e.passedArgs ?? [],
    failed_argument_checks: e.failedArgs ?? [],
  };
}

function rulesOf(o: ReliabilityOptions) {
  return {
    expectedToolCalls: o.expectedToolCalls ?? null,
    allowAdditionalToolCalls: o.allowAdditionalToolCalls ?? false,
    expectedToolCallArguments: o.expectedToolCallArguments ?? null,
  };
}

describe('evaluateReliability on agno-shaped evidence (upstream full results)', () => {
  const cases: ReliabilityCase[] = [...UPSTREAM_RELIABILITY_CASES, ...PROBE_RELIABILITY_CASES];
  it.each(cases.map((c) => [c.id, c] as const))('%s', (_id, c) => {
    expect(evaluateReliability(agnoEvidenceOf(c.run), rulesOf(c.options))).toEqual(full(c.expected));
  });

  it('uses the exact agno annotation with an em dash', () => {
    expect(REFUSED_ANNOTATION).toBe(ANN);
    expect(REFUSED_ANNOTATION.includes('\u2014')).toBe(true);
    expect(REFUSED_ANNOTATION.startsWith(' (requested but refused/errored ')).toBe(true);
  });

  it('an argument spec that is not a dict raises like Python', () => {
    const ev: AgnoEvidence = {
      executions: [{ name: 'f', error: false, paused: false, args: {} }],
      requestedNames: new Set(),
    };
    expect(() =>
      evaluateReliability(ev, {
        expectedToolCalls: null,
        allowAdditionalToolCalls: false,
        expectedToolCallArguments: { f: ['x' as unknown as Record<string, unknown>] },
      }),
    ).toThrow("'str' object has no attribute 'items'");
  });

  it('skips executions with an empty name, as agno skips falsy names', () => {
    const ev: AgnoEvidence = {
      executions: [
        { name: '', error: false, paused: false, args: undefined },
        { name: 'a', error: false, paused: false, args: undefined },
      ],
      requestedNames: new Set(),
    };
    expect(evaluateReliability(ev, rulesOf({ expectedToolCalls: ['a'] }))).toEqual(
      full({ status: 'PASSED', passed: ['a'] }),
    );
  });
});

describe('reliability scorer on traces (OTLP → reconstruction → scorer)', () => {
  const cases: ReliabilityCase[] = [...UPSTREAM_RELIABILITY_CASES, ...PROBE_RELIABILITY_CASES];
  it.each(cases.map((c) => [c.id, c] as const))('%s', (_id, c) => {
    const scorer = reliability(c.options);
    const result = scorer.score(runOf(c.run)) as ScorerResult;
    const detail = full(c.expected);
    expect(result).toEqual({
      scorer: 'reliability',
      kind: 'reliability',
      passed: c.expected.status === 'PASSED',
      score: c.expected.status === 'PASSED' ? 1 : 0,
      label: c.expected.status === 'PASSED' ? 'pass' : 'fail',
      reason: reasonOf(detail),
      digest: scorer.digest,
      detail,
    });
  });

  it('scope self reads only the run itself', () => {
    const run = runOf({
      kind: 'team',
      tools: ['delegate_task_to_member'],
      members: [{ tools: ['multiply'] }],
    });
    const members = reliability({ expectedToolCalls: ['multiply'], allowAdditionalToolCalls: true }).score(
      run,
    ) as ScorerResult;
    const self = reliability({
      expectedToolCalls: ['multiply'],
      allowAdditionalToolCalls: true,
      scope: 'self',
    }).score(run) as ScorerResult;
    expect(members.passed).toBe(true);
    expect(self.detail).toEqual(
      full({ status: 'FAILED', additional: ['delegate_task_to_member'], missing: ['multiply'] }),
    );
  });
});

/** The reason text the scorer writes: agno's failing lists by field name. */
function reasonOf(d: ReliabilityDetail): string | null {
  if (d.eval_status === 'PASSED') return null;
  const list = (xs: string[]) => `[${xs.map((x) => `'${x}'`).join(', ')}]`;
  const parts: string[] = [];
  if (d.missing_tool_calls.length) parts.push(`missing_tool_calls=${list(d.missing_tool_calls)}`);
  if (d.failed_tool_calls.length) parts.push(`failed_tool_calls=${list(d.failed_tool_calls)}`);
  if (d.failed_argument_checks.length) parts.push(`failed_argument_checks=${list(d.failed_argument_checks)}`);
  return parts.join('; ');
}

describe('reliability scorer: identity, config, schema', () => {
  it('defaults: strict, scope members, name reliability, sync', () => {
    const s = reliability({ expectedToolCalls: ['a'] });
    expect(s.name).toBe('reliability');
    expect(s.kind).toBe('reliability');
    expect(s.async).toBe(false);
    expect(s.sampling).toBeUndefined();
    expect(s.config).toEqual({
      kind: 'reliability',
      name: 'reliability',
      expected_tool_calls: ['a'],
      allow_additional_tool_calls: false,
      expected_tool_call_arguments: null,
      scope: 'members',
    });
    expect(s.digest).toBe(
      configDigest({
        kind: 'reliability',
        expected_tool_calls: ['a'],
        allow_additional_tool_calls: false,
        expected_tool_call_arguments: null,
        scope: 'members',
      }),
    );
  });

  it('mutating the options afterwards changes neither config, digest nor verdict', () => {
    const args: Record<string, Record<string, unknown>> = { a: { q: 1 } };
    const expected = ['a'];
    const s = reliability({ expectedToolCalls: expected, expectedToolCallArguments: args });
    const digest = s.digest;
    args.a!.q = 2;
    expected.push('b');
    expect(s.digest).toBe(digest);
    expect(s.config.expected_tool_call_arguments).toEqual({ a: { q: 1 } });
    expect((s.score(runOf({ tools: [{ name: 'a', args: { q: 1 } }] })) as ScorerResult).passed).toBe(true);
  });

  it('digest ignores the result name and key order, but not semantics', () => {
    const a = reliability({ expectedToolCalls: ['a'], expectedToolCallArguments: { a: { x: 1, y: 2 } } });
    const b = reliability({
      name: 'other',
      expectedToolCallArguments: { a: { y: 2, x: 1 } },
      expectedToolCalls: ['a'],
    });
    expect(b.digest).toBe(a.digest);
    expect(reliability({ expectedToolCalls: ['a'], allowAdditionalToolCalls: true }).digest).not.toBe(
      reliability({ expectedToolCalls: ['a'] }).digest,
    );
    expect(reliability({ expectedToolCalls: ['a'], scope: 'self' }).digest).not.toBe(
      reliability({ expectedToolCalls: ['a'] }).digest,
    );
    expect(reliability({ expectedToolCalls: [] }).digest).not.toBe(reliability({}).digest);
  });

  it('schema validates the YAML form and refuses unknown keys by path', () => {
    const ok = reliabilityConfigSchema.parse({ kind: 'reliability', expected_tool_calls: ['a'] });
    expect(ok).toEqual({
      kind: 'reliability',
      expected_tool_calls: ['a'],
      allow_additional_tool_calls: false,
      scope: 'members',
    });
    const bad = reliabilityConfigSchema.safeParse({
      kind: 'reliability',
      expected_tool_calls: 'a',
      scope: 'everything',
      typo: 1,
      expected_tool_call_arguments: { a: 5 },
    });
    expect(bad.success).toBe(false);
    const paths = bad.error!.issues.map((i) => i.path.join('.')).sort();
    expect(paths).toEqual(['', 'expected_tool_call_arguments.a', 'expected_tool_calls', 'scope']);
    expect(bad.error!.issues.find((i) => i.path.length === 0)!.message).toContain('typo');
  });

  it('fromConfig builds the same scorer as the factory', () => {
    const cfg = reliabilityConfigSchema.parse({
      kind: 'reliability',
      name: 'r1',
      expected_tool_calls: ['a'],
      allow_additional_tool_calls: true,
      expected_tool_call_arguments: { a: [{ q: 1 }] },
      scope: 'self',
      sampling: { ratio: 0.5 },
    });
    const s = reliabilityFromConfig(cfg);
    const t = reliability({
      name: 'r1',
      expectedToolCalls: ['a'],
      allowAdditionalToolCalls: true,
      expectedToolCallArguments: { a: [{ q: 1 }] },
      scope: 'self',
    });
    expect(s.digest).toBe(t.digest);
    expect(s.config).toEqual(t.config);
    expect(s.sampling).toEqual({ ratio: 0.5 });
  });

  it('a malformed run yields an error result, never an exception', () => {
    const s = reliability({ expectedToolCalls: ['a'] });
    const broken = {
      children: [],
      get calls(): never {
        throw new Error('boom');
      },
    } as unknown as AgentRun;
    const r = s.score(broken) as ReturnType<typeof s.score> & { label: string };
    expect(r).toMatchObject({
      label: 'error',
      passed: false,
      score: 0,
      reason: 'boom',
      scorer: 'reliability',
    });
  });
});

describe('reliability properties (agno-shaped evidence)', () => {
  const name = fc.constantFrom('a', 'b', 'c', 'd');
  const execution = fc.record({
    name,
    error: fc.boolean(),
    paused: fc.boolean(),
    args: fc.option(fc.dictionary(fc.constantFrom('x', 'y'), fc.integer({ min: 0, max: 2 })), {
      nil: undefined,
    }),
  });
  const evidence = fc.record({
    executions: fc.array(execution, { maxLength: 8 }),
    requestedNames: fc.uniqueArray(name).map((a) => new Set(a)),
  });
  const rules = fc.record({
    expectedToolCalls: fc.option(fc.array(name, { maxLength: 4 }), { nil: null }),
    allowAdditionalToolCalls: fc.boolean(),
    expectedToolCallArguments: fc.option(
      fc.dictionary(name, fc.dictionary(fc.constantFrom('x', 'y'), fc.integer({ min: 0, max: 2 })), {
        maxKeys: 2,
      }),
      { nil: null },
    ),
  });

  it('PASSED exactly when failed, missing and failed_argument_checks are empty', () => {
    fc.assert(
      fc.property(evidence, rules, (ev, r) => {
        const d = evaluateReliability(ev, r);
        const ok =
          d.failed_tool_calls.length + d.missing_tool_calls.length + d.failed_argument_checks.length === 0;
        expect(d.eval_status).toBe(ok ? 'PASSED' : 'FAILED');
      }),
    );
  });

  it('lenient never fails a name and strict never reports additional', () => {
    fc.assert(
      fc.property(evidence, rules, (ev, r) => {
        const d = evaluateReliability(ev, r);
        if (r.allowAdditionalToolCalls) expect(d.failed_tool_calls).toEqual([]);
        else expect(d.additional_tool_calls).toEqual([]);
      }),
    );
  });

  it('adding a clean execution of an expected tool never turns PASSED into FAILED without arguments', () => {
    fc.assert(
      fc.property(evidence, rules, fc.nat(3), (ev, r, pick) => {
        const expected = r.expectedToolCalls;
        fc.pre(expected !== null && expected.length > 0);
        const rr = { ...r, expectedToolCallArguments: null };
        const before = evaluateReliability(ev, rr);
        const extra = {
          name: expected![pick % expected!.length]!,
          error: false,
          paused: false,
          args: undefined,
        };
        const after = evaluateReliability({ ...ev, executions: [...ev.executions, extra] }, rr);
        if (before.eval_status === 'PASSED') expect(after.eval_status).toBe('PASSED');
        expect(after.missing_tool_calls.length).toBeLessThanOrEqual(before.missing_tool_calls.length);
      }),
    );
  });
});

describe('reliability properties on traces', () => {
  const name = fc.constantFrom('a', 'b', 'c');
  const state = fc.constantFrom('ok', 'err', 'paused', 'hitl-rejected') as fc.Arbitrary<CallState>;
  const node: fc.Arbitrary<AgnoNode> = fc.record({
    tools: fc.array(
      fc
        .record({ name, state, args: fc.constantFrom(undefined, { x: 1 }, { x: 2 }) })
        .map((c) => (c.args ? c : { name: c.name, state: c.state })),
      { maxLength: 5 },
    ),
    requests: fc.array(fc.array(name, { minLength: 1, maxLength: 2 }), { maxLength: 2 }),
  });
  const options: fc.Arbitrary<ReliabilityOptions> = fc.record({
    expectedToolCalls: fc.option(fc.array(name, { maxLength: 3 }), { nil: null }),
    allowAdditionalToolCalls: fc.boolean(),
    expectedToolCallArguments: fc.option(
      fc.dictionary(name, fc.constantFrom({ x: 1 }, { x: 2 }, {}), { maxKeys: 2 }),
      {
        nil: null,
      },
    ),
  });

  it('history never changes the result', () => {
    fc.assert(
      fc.property(
        node,
        options,
        fc.array(fc.constantFrom('a', 'b', 'c', 'd'), { minLength: 1, maxLength: 3 }),
        (n, o, hist) => {
          const scorer = reliability(o);
          const without = scorer.score(runOf(n)) as ScorerResult;
          const withHistory = scorer.score(runOf({ ...n, historyRequests: hist })) as ScorerResult;
          expect(withHistory).toEqual(without);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('the scorer on a trace equals agno rules on the same RunOutput', () => {
    fc.assert(
      fc.property(node, options, (n, o) => {
        const result = reliability(o).score(runOf(n)) as ScorerResult;
        // Request-only names that also executed are not counted as request-only, so the comparison is exact.
        expect(result.detail).toEqual(evaluateReliability(agnoEvidenceOf(n), rulesOf(o)));
        expect(result.score).toBe(result.passed ? 1 : 0);
      }),
      { numRuns: 80 },
    );
  });
});
