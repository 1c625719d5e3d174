import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AgnoEvidence } from '../../src/scorers/agno-evidence.js';
import {
  evaluateToolCalls,
  type ToolCallsOptions,
  toolCalls,
  toolCallsConfigSchema,
  toolCallsDigest,
  toolCallsFromConfig,
} from '../../src/scorers/tool-calls.js';
import type { ScorerResult } from '../../src/types.js';
import { PyFloat } from '../../src/util/python-json.js';
import { type AgnoNode, agnoEvidenceOf, type CallState, runOf } from './agno-cases.js';
import { PROBE_TOOL_CALLS_CASES, type ToolCallsCase, UPSTREAM_TOOL_CALLS_CASES } from './tool-calls-cases.js';

/** agno `_members_carry_tools`: some member at any depth has a non-empty `tools`. */
function membersCarryTools(node: AgnoNode): boolean {
  return (node.members ?? []).some((m) => (m.tools ?? []).length > 0 || membersCarryTools(m));
}

function rulesOf(o: ToolCallsOptions) {
  return {
    expectedTools: [...new Set(o.expectedTools ?? [])],
    specs: Object.entries(o.arguments ?? {}).map(
      ([tool, spec]) => [tool, Array.isArray(spec) ? spec : [spec]] as [string, Record<string, unknown>[]],
    ),
    allowAdditional: o.allowAdditional ?? true,
  };
}

describe('evaluateToolCalls on agno-shaped evidence (upstream full Score)', () => {
  const cases: ToolCallsCase[] = [...UPSTREAM_TOOL_CALLS_CASES, ...PROBE_TOOL_CALLS_CASES];
  it.each(cases.map((c) => [c.id, c] as const))('%s', (_id, c) => {
    const d = evaluateToolCalls(agnoEvidenceOf(c.run, 'self'), rulesOf(c.options), membersCarryTools(c.run));
    expect({
      value: d.value,
      passed: d.passed,
      reason: d.reason,
      checks: d.checks,
      satisfied: d.satisfied,
    }).toEqual(c.expected);
  });
});

describe('toolCalls scorer on traces (OTLP → reconstruction → scorer)', () => {
  const cases: ToolCallsCase[] = [...UPSTREAM_TOOL_CALLS_CASES, ...PROBE_TOOL_CALLS_CASES];
  it.each(cases.map((c) => [c.id, c] as const))('%s', (_id, c) => {
    const scorer = toolCalls(c.options);
    const result = scorer.score(runOf(c.run)) as ScorerResult;
    const { value, passed, reason, checks, satisfied } = c.expected;
    expect(result).toEqual({
      scorer: 'tool_calls',
      kind: 'tool_calls',
      passed,
      score: value,
      label: passed ? 'pass' : 'fail',
      reason,
      digest: scorer.digest,
      detail: { value, passed, reason, checks, satisfied, additional: expect.any(Array) },
    });
  });

  it('with redact.values the argument note carries keys, not values', () => {
    const run = runOf({ tools: [{ name: 'search', args: { query: 'secret', limit: 5 } }] });
    const scorer = toolCalls({
      expectedTools: ['search'],
      arguments: { search: { query: 'other-secret', limit: 5 } },
    });
    const r = scorer.score(run, { redact: { values: true } }) as ScorerResult;
    expect(r.reason).toBe("no clean 'search' execution matches arguments {'query': ..., 'limit': ...}");
    expect(r.detail.reason).toBe(r.reason);
    expect(JSON.stringify(r)).not.toContain('secret');
    const plain = scorer.score(run) as ScorerResult;
    expect(plain.reason).toBe(
      "no clean 'search' execution matches arguments {'query': 'other-secret', 'limit': 5}",
    );
  });

  it('detail.additional lists clean extra calls, sorted, in lenient mode too', () => {
    const run = runOf({ tools: ['search', 'zz', 'aa', 'zz', { name: 'bad', state: 'err' }] });
    const r = toolCalls({ expectedTools: ['search'] }).score(run) as ScorerResult;
    expect(r.detail.additional).toEqual(['aa', 'zz']);
    expect(r.passed).toBe(true);
  });
});

describe('toolCalls constructor: agno T0 messages', () => {
  it('refuses a bare string with TypeError and Python repr', () => {
    expect(() => toolCalls({ expectedTools: 'search' as unknown as string[] })).toThrow(
      new TypeError("expected_tools must be a sequence of tool names, not the bare string 'search'"),
    );
    expect(() => toolCalls({ expectedTools: "it's" as unknown as string[] })).toThrow(
      'expected_tools must be a sequence of tool names, not the bare string "it\'s"',
    );
  });

  it('refuses an empty spec list, before the no-check error', () => {
    let err: unknown;
    try {
      toolCalls({ expectedTools: [], arguments: { search: [] } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).name).toBe('ValueError');
    expect((err as Error).message).toBe(
      "argument specs for 'search' are empty; an empty list checks nothing",
    );
  });

  it('refuses a configuration with no check at all', () => {
    const msg = 'ToolCallScorer needs expected_tools and/or arguments; with neither there is no check';
    expect(() => toolCalls({ expectedTools: [] })).toThrow(msg);
    expect(() => toolCalls({ expectedTools: [], arguments: {} })).toThrow(msg);
    expect(() => toolCalls({ expectedTools: [], arguments: null })).toThrow(msg);
    expect(() => toolCalls({})).toThrow(msg);
  });

  it('accepts {} as one spec that matches anything', () => {
    expect(toolCalls({ expectedTools: [], arguments: { search: {} } }).kind).toBe('tool_calls');
  });

  it('schema reports agno messages by path, validates keys, and applies defaults', () => {
    const bare = toolCallsConfigSchema.safeParse({ kind: 'tool_calls', expected_tools: 'search' });
    expect(bare.success).toBe(false);
    expect(bare.error!.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['expected_tools', "expected_tools must be a sequence of tool names, not the bare string 'search'"],
    ]);
    const empty = toolCallsConfigSchema.safeParse({ kind: 'tool_calls', arguments: { lookup: [] } });
    expect(empty.error!.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['arguments.lookup', "argument specs for 'lookup' are empty; an empty list checks nothing"],
    ]);
    const none = toolCallsConfigSchema.safeParse({ kind: 'tool_calls' });
    expect(none.error!.issues[0]!.message).toBe(
      'ToolCallScorer needs expected_tools and/or arguments; with neither there is no check',
    );
    const unknown = toolCallsConfigSchema.safeParse({
      kind: 'tool_calls',
      expected_tools: ['a'],
      strict: true,
    });
    expect(unknown.success).toBe(false);
    expect(unknown.error!.issues[0]!.message).toContain('strict');
    const ok = toolCallsConfigSchema.parse({
      kind: 'tool_calls',
      expected_tools: ['a'],
      sampling: { ratio: new PyFloat(1) },
    });
    expect(ok).toEqual({
      kind: 'tool_calls',
      expected_tools: ['a'],
      allow_additional: true,
      sampling: { ratio: 1 },
    });
    expect(toolCallsFromConfig(ok).sampling).toEqual({ ratio: 1 });
  });
});

describe('toolCalls digest = agno ToolCallScorer.digest()', () => {
  // Vectors computed by upstream digest().
  it.each([
    [['search'], undefined, true, 'a49447512b83d31a985eb3156303543762fc63c39b90d575a5537c006014293b'],
    [['search'], undefined, false, '8818bf61542c1cc4a047e11a492853478614af3cb0ddda3802adabb11e14ba61'],
    [
      ['search', 'search'],
      undefined,
      true,
      'a49447512b83d31a985eb3156303543762fc63c39b90d575a5537c006014293b',
    ],
    [
      ['summarize', 'search'],
      undefined,
      true,
      '013d4744dd744a995ab9c1d4c5a13b681bc55952984bb3f79640850627a5b693',
    ],
    [
      ['search'],
      { search: { query: 'agno' } },
      true,
      '49840d8071c89ff46e4da02d4df237ac861566f0fecd7271dacec00a88850f1f',
    ],
    [
      ['search'],
      { search: [{ query: 'agno' }] },
      true,
      '979cfe3f75a43c497b79d0c300a9490e995a7656362fa1ef40b04ba14b0fefa2',
    ],
  ] as const)('%j %j %s', (expectedTools, args, allowAdditional, digest) => {
    const s = toolCalls({
      expectedTools,
      ...(args ? { arguments: args as Record<string, Record<string, unknown>> } : {}),
      allowAdditional,
    });
    expect(s.digest).toBe(digest);
  });

  // Derived from agno's digest payload rule with CPython's json.dumps + hashlib (see the canonical text).
  it.each([
    [
      ['b', 'a', 'b'],
      { é: { n: new PyFloat(1), m: [true, null] } },
      false,
      'eb2f27890fdf811809b927e621620895432e545e52b7774ef881faf147c1f3e2',
    ],
    [['search'], {}, true, '229e8bfad3bb6cef86d0a4ae07ec069ed164c2e543caed4743aa10848386dbfc'],
    [
      ['😀', '\uffff', 'z'],
      { t: [{ x: 1e-7, y: Number.NaN }] },
      true,
      'cf05a1c0ac857aa93d491393df32c68cf1af58efbb44fe2467433b3e9c3b808f',
    ],
    [
      [],
      { search: { limit: 5, ratio: 0.5, big: new PyFloat(1e16) } },
      false,
      '39b23a3a526e2bd8b439f5d6c5814c14ad785fb630333c85a76623bc532ef277',
    ],
  ] as const)('derived %j %j %s', (expectedTools, args, allowAdditional, digest) => {
    expect(toolCallsDigest(expectedTools, args as Record<string, unknown>, allowAdditional)).toBe(digest);
    expect(toolCalls({ expectedTools, arguments: args as never, allowAdditional }).digest).toBe(digest);
  });

  it('does not normalise arguments: {} and null differ, dict and [dict] differ', () => {
    expect(toolCallsDigest(['s'], {}, true)).not.toBe(toolCallsDigest(['s'], null, true));
    expect(toolCallsDigest(['s'], { s: { q: 1 } }, true)).not.toBe(
      toolCallsDigest(['s'], { s: [{ q: 1 }] }, true),
    );
  });

  it('wraps serialisation errors as FingerprintError with agno text', () => {
    let err: unknown;
    try {
      toolCallsDigest(['s'], { s: { q: new Set([1]) } }, true);
    } catch (e) {
      err = e;
    }
    expect((err as Error).name).toBe('FingerprintError');
    expect((err as Error).message).toBe(
      'ToolCallScorer expectations are not JSON-serializable: Object of type Set is not JSON serializable',
    );
  });

  it('is independent of expected order, duplicates and key order', () => {
    const name = fc.constantFrom('a', 'b', 'é', '😀', 'Z');
    fc.assert(
      fc.property(
        fc.array(name, { minLength: 1 }),
        fc.dictionary(name, fc.dictionary(fc.string(), fc.jsonValue())),
        fc.boolean(),
        (tools, args, allow) => {
          const reorderedArgs = Object.fromEntries(
            Object.entries(args)
              .reverse()
              .map(([k, v]) => [k, Object.fromEntries(Object.entries(v).reverse())]),
          );
          expect(toolCallsDigest([...tools].reverse().concat(tools), reorderedArgs, allow)).toBe(
            toolCallsDigest(tools, args, allow),
          );
        },
      ),
    );
  });
});

describe('toolCalls scorer identity and config', () => {
  it('mutating the options afterwards changes neither config, digest nor verdict', () => {
    const args: Record<string, Record<string, unknown>> = { search: { q: 1 } };
    const tools = ['search'];
    const s = toolCalls({ expectedTools: tools, arguments: args });
    const digest = s.digest;
    args.search!.q = 2;
    tools.push('other');
    expect(s.digest).toBe(digest);
    expect(s.config.arguments).toEqual({ search: { q: 1 } });
    expect(s.config.expected_tools).toEqual(['search']);
    const run = runOf({ tools: [{ name: 'search', args: { q: 1 } }] });
    expect((s.score(run) as ScorerResult).passed).toBe(true);
  });

  it('defaults and canonical config', () => {
    const s = toolCalls({ expectedTools: ['b', 'a', 'b'] });
    expect(s).toMatchObject({ name: 'tool_calls', kind: 'tool_calls', async: false });
    expect(s.config).toEqual({
      kind: 'tool_calls',
      name: 'tool_calls',
      expected_tools: ['b', 'a'],
      arguments: null,
      allow_additional: true,
    });
  });
});

describe('tool_calls properties (agno-shaped evidence)', () => {
  const name = fc.constantFrom('a', 'b', 'c');
  const execution = fc.record({
    name,
    error: fc.boolean(),
    paused: fc.boolean(),
    args: fc.option(fc.dictionary(fc.constantFrom('x', 'y'), fc.integer({ min: 0, max: 2 })), {
      nil: undefined,
    }),
  });
  const evidence: fc.Arbitrary<AgnoEvidence> = fc.record({
    executions: fc.array(execution, { maxLength: 8 }),
    requestedNames: fc.constant(new Set<string>()),
  });
  const rules = fc
    .record({
      expectedTools: fc.uniqueArray(name, { maxLength: 3 }),
      specs: fc.array(
        fc.tuple(
          name,
          fc.array(fc.dictionary(fc.constantFrom('x', 'y'), fc.integer({ min: 0, max: 2 })), {
            minLength: 1,
            maxLength: 2,
          }),
        ),
        { maxLength: 2 },
      ),
      allowAdditional: fc.boolean(),
    })
    .filter((r) => r.expectedTools.length + r.specs.length > 0);

  it('score in [0, 1], satisfied ≤ checks, passed implies score 1', () => {
    fc.assert(
      fc.property(evidence, rules, fc.boolean(), (ev, r, members) => {
        const d = evaluateToolCalls(ev, r, members);
        expect(d.value).toBeGreaterThanOrEqual(0);
        expect(d.value).toBeLessThanOrEqual(1);
        expect(d.satisfied).toBeLessThanOrEqual(d.checks);
        if (d.passed) expect(d.value).toBe(1);
        expect(d.reason === null).toBe(d.passed && ev.executions.length > 0 && !members);
      }),
    );
  });

  it('adding a clean call of an expected tool never lowers the score', () => {
    fc.assert(
      fc.property(evidence, rules, fc.nat(), (ev, r, pick) => {
        fc.pre(r.expectedTools.length > 0);
        const before = evaluateToolCalls(ev, r, false);
        const extra = {
          name: r.expectedTools[pick % r.expectedTools.length]!,
          error: false,
          paused: false,
          args: {},
        };
        const after = evaluateToolCalls({ ...ev, executions: [...ev.executions, extra] }, r, false);
        expect(after.value).toBeGreaterThanOrEqual(before.value);
        if (before.passed) expect(after.passed).toBe(true);
      }),
    );
  });

  it('errored or paused calls never change the verdict in either mode', () => {
    fc.assert(
      fc.property(evidence, rules, name, fc.boolean(), (ev, r, n, paused) => {
        fc.pre(ev.executions.length > 0);
        const before = evaluateToolCalls(ev, r, false);
        const bad = { name: n, error: !paused, paused, args: {} };
        const after = evaluateToolCalls({ ...ev, executions: [...ev.executions, bad] }, r, false);
        expect([after.value, after.passed, after.reason]).toEqual([
          before.value,
          before.passed,
          before.reason,
        ]);
      }),
    );
  });
});

describe('tool_calls properties on traces', () => {
  const name = fc.constantFrom('a', 'b', 'c');
  const state = fc.constantFrom('ok', 'err', 'paused', 'hitl-rejected') as fc.Arbitrary<CallState>;
  const tools = fc.array(
    fc
      .record({ name, state, args: fc.constantFrom(undefined, { x: 1 }, { x: 2 }) })
      .map((c) => (c.args ? c : { name: c.name, state: c.state })),
    { maxLength: 5 },
  );
  const node: fc.Arbitrary<AgnoNode> = fc.record({
    tools,
    requests: fc.array(fc.array(name, { minLength: 1, maxLength: 2 }), { maxLength: 2 }),
    members: fc.array(fc.record({ tools }), { maxLength: 2 }),
  });
  const options: fc.Arbitrary<ToolCallsOptions> = fc
    .record({
      expectedTools: fc.array(name, { maxLength: 3 }),
      arguments: fc.dictionary(name, fc.constantFrom({ x: 1 }, [{ x: 2 }, {}], {}), { maxKeys: 2 }),
      allowAdditional: fc.boolean(),
    })
    .filter((o) => o.expectedTools.length + Object.keys(o.arguments).length > 0);

  it('the scorer on a trace equals agno rules on the same RunOutput; score in [0, 1]', () => {
    fc.assert(
      fc.property(node, options, (n, o) => {
        const r = toolCalls(o).score(runOf(n)) as ScorerResult;
        const d = evaluateToolCalls(agnoEvidenceOf(n, 'self'), rulesOf(o), membersCarryTools(n));
        expect(r.detail).toEqual({ ...d });
        expect(r.score).toBeGreaterThanOrEqual(0);
        expect(r.score).toBeLessThanOrEqual(1);
      }),
      { numRuns: 80 },
    );
  });

  it('history never changes the result', () => {
    fc.assert(
      fc.property(
        node,
        options,
        fc.array(fc.constantFrom('a', 'b', 'd'), { minLength: 1, maxLength: 3 }),
        (n, o, hist) => {
          const scorer = toolCalls(o);
          expect(scorer.score(runOf({ ...n, historyRequests: hist }))).toEqual(scorer.score(runOf(n)));
        },
      ),
      { numRuns: 50 },
    );
  });

  it('adding a clean call of an expected tool never lowers the score', () => {
    fc.assert(
      fc.property(node, options, fc.nat(), (n, o, pick) => {
        const expected = o.expectedTools ?? [];
        fc.pre(expected.length > 0);
        const scorer = toolCalls(o);
        const before = scorer.score(runOf(n)) as ScorerResult;
        const extra = { name: expected[pick % expected.length]!, state: 'ok' as const };
        const after = scorer.score(runOf({ ...n, tools: [...(n.tools ?? []), extra] })) as ScorerResult;
        expect(after.score).toBeGreaterThanOrEqual(before.score);
      }),
      { numRuns: 50 },
    );
  });
});
