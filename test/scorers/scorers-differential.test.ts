import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { agnoEvidence } from '../../src/scorers/agno-evidence.js';
import { reliability } from '../../src/scorers/reliability.js';
import { toolOrder } from '../../src/scorers/tool-order.js';
import { trajectory } from '../../src/scorers/trajectory.js';
import type { TrajectoryOptions } from '../../src/scorers/trajectory-config.js';
import type {
  AgentRun,
  ScoreContext,
  Scorer,
  ToolExecution,
  ToolRequest,
  ToolStatus,
} from '../../src/types.js';
import { roundHalfEven } from '../../src/util/round-half-even.js';
import { agnoEvidence as referenceAgnoEvidence } from './reference/agno-evidence.js';
import { reliability as referenceReliability } from './reference/reliability.js';
import { toolOrder as referenceToolOrder } from './reference/tool-order.js';
import {
  roundHalfEven as referenceRoundHalfEven,
  trajectory as referenceTrajectory,
} from './reference/trajectory.js';

/**
 * The optimised scorers against their previous implementations (kept verbatim under
 * `reference/`) on random runs and random configurations: every result must be the same
 * object, key order included (JSON text), and the same value (-0, NaN and undefined kept
 * apart by toStrictEqual). The agno and Mastra oracles cover the library semantics; this
 * covers the paths they do not reach (trajectory, nested runs, redaction, broken runs).
 */

const NAMES = ['a', 'b', 'c', 'd', 'e', 'f', ''] as const;
const nameArb = fc.constantFrom(...NAMES);
const configNameArb = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f');

const smallArb = fc.constantFrom<unknown>(0, 1, 2, 1.0, true, false, null, 'A1024', 'a', '');
const scalarArb = fc.oneof(
  fc.integer({ min: -3, max: 3 }),
  fc.constantFrom(0.5, -0, 1.0, 2.25, 1e21, Number.NaN),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom('A1024', 'a', 'x.y', '1', 'A12', ''),
  smallArb,
);
const valueArb: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalarArb,
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('v', 'w', 'x', 'y', 'z', 'x.y', '0', '1'), tie('value'), { maxKeys: 3 }),
  ),
})).value;
const argsArb = fc.oneof(
  fc.dictionary(fc.constantFrom('v', 'w', 'x', 'l', 'x.y', 'order_id'), valueArb, { maxKeys: 4 }),
  valueArb,
  fc.constant(undefined),
);

interface CallSpec {
  name: string;
  status: ToolStatus;
  requestOnly: boolean;
  args: unknown;
  argsRaw?: string;
  callId?: string;
  rejected: boolean;
}

const callArb: fc.Arbitrary<CallSpec> = fc.record(
  {
    name: nameArb,
    status: fc.constantFrom<ToolStatus>('ok', 'error', 'refused', 'paused'),
    requestOnly: fc.boolean(),
    args: argsArb,
    argsRaw: fc.constantFrom('{"v":', 'not json'),
    callId: fc.constantFrom('', 'c1', 'c2'),
    rejected: fc.boolean(),
  },
  { requiredKeys: ['name', 'status', 'requestOnly', 'args', 'rejected'] },
);

interface RunSpec {
  calls: CallSpec[];
  requests: string[];
  children: RunSpec[];
}

const runArb: fc.Arbitrary<RunSpec> = fc.letrec((tie) => ({
  run: fc.record({
    calls: fc.array(callArb, { maxLength: 9 }),
    requests: fc.array(nameArb, { maxLength: 3 }),
    children: fc.oneof(
      { depthSize: 'small' },
      fc.constant([]),
      fc.array(tie('run') as fc.Arbitrary<RunSpec>, { maxLength: 2 }),
    ),
  }),
})).run as fc.Arbitrary<RunSpec>;

let spans = 0;
function buildRun(spec: RunSpec, parent?: AgentRun): AgentRun {
  const run: AgentRun = {
    agent: 'agent',
    traceId: '0'.repeat(32),
    spanId: `run${spans++}`,
    implicit: false,
    ...(parent ? { parent } : {}),
    children: [],
    executions: [],
    requests: [],
    calls: [],
    history: [],
    start: 0,
    status: 0,
    attributes: {},
    hasErrorSpan: false,
  };
  run.requests = spec.requests.map(
    (name, index): ToolRequest => ({ name, callId: `r${index}`, llmSpanId: 'llm', index, time: 0 }),
  );
  run.calls = spec.calls.map(
    (c, i): ToolExecution => ({
      name: c.name,
      ...(c.callId !== undefined ? { callId: c.callId } : {}),
      ...(c.args !== undefined ? { args: c.args } : {}),
      ...(c.argsRaw !== undefined ? { argsRaw: c.argsRaw } : {}),
      argsSource: c.args !== undefined ? 'span' : 'none',
      status: c.status,
      fromHistory: false,
      requestOnly: c.requestOnly,
      spanId: `s${spans++}`,
      start: i,
      run,
      ...(c.rejected
        ? { request: { name: c.name, llmSpanId: 'llm', index: i, time: 0, rejected: true } }
        : {}),
      convention: 'gen_ai',
    }),
  );
  run.executions = run.calls.filter((c) => !c.requestOnly);
  run.children = spec.children.map((child) => buildRun(child, run));
  return run;
}

const ruleKeyArbs = {
  equals: smallArb,
  not_equals: smallArb,
  contains: smallArb,
  in: fc.array(smallArb, { minLength: 1, maxLength: 3 }),
  not_in: fc.array(smallArb, { minLength: 1, maxLength: 3 }),
  not_null: fc.boolean(),
  exists: fc.boolean(),
  matches: fc.constantFrom('^A\\d+$', 'a', '\\d', 'x\\.y'),
  gt: fc.integer({ min: -2, max: 2 }),
  gte: fc.constantFrom(0, 0.5, 1),
  lt: fc.integer({ min: -2, max: 2 }),
  lte: fc.constantFrom(0, 0.5, 1),
};
/** Mostly one key (so rules hold often enough to matter), sometimes several. */
const ruleArb = fc.oneof(
  ...Object.entries(ruleKeyArbs).map(([key, arb]) => arb.map((v) => ({ [key]: v }))),
  fc.record(ruleKeyArbs, { requiredKeys: [] }),
);
const pathArb = fc.constantFrom('v', 'w', 'x.y', 'x.0', 'l.1', 'x.y.z', 'order_id', '0', 'x.01');

const trajectoryOptionsArb: fc.Arbitrary<TrajectoryOptions> = fc.record(
  {
    expectedTools: fc.array(fc.constantFrom('a', 'b', 'c', 'd'), { minLength: 1, maxLength: 5 }),
    forbiddenTools: fc.array(fc.constantFrom('e', 'f'), { minLength: 1, maxLength: 2 }),
    maxCalls: fc.integer({ min: 0, max: 10 }),
    maxRepeats: fc.integer({ min: 1, max: 3 }),
    argConstraints: fc.dictionary(
      configNameArb,
      fc.dictionary(pathArb, ruleArb, { minKeys: 1, maxKeys: 3 }),
      { minKeys: 1, maxKeys: 3 },
    ) as fc.Arbitrary<TrajectoryOptions['argConstraints']>,
    expectedOrder: fc.array(
      fc.tuple(configNameArb, configNameArb).filter(([x, y]) => x !== y),
      { minLength: 1, maxLength: 3 },
    ),
    weights: fc.constantFrom(
      { toolSelection: 0.25, arguments: 0.25, order: 0.25, callBudget: 0.25 },
      { toolSelection: 0.1, arguments: 0.7, order: 0.1, callBudget: 0.1 },
    ),
    passThreshold: fc.constantFrom(0, 0.5, 0.9, 1),
    scope: fc.constantFrom('self' as const, 'members' as const),
    order: fc.constantFrom('exact' as const, 'in_order' as const, 'any_order' as const),
  },
  { requiredKeys: [] },
);

const contextArb = fc.constantFrom<ScoreContext | undefined>(
  undefined,
  { redact: { values: true } } as ScoreContext,
  { redact: { values: false } } as ScoreContext,
);

/** Both scorers built from the same options; a refused configuration must be refused alike. */
function pair(make: () => Scorer, makeReference: () => Scorer): [Scorer, Scorer] | undefined {
  let reference: Scorer;
  try {
    reference = makeReference();
  } catch (e) {
    expect(make).toThrow((e as Error).message);
    return undefined;
  }
  const scorer = make();
  expect(scorer.digest).toBe(reference.digest);
  expect(JSON.stringify(scorer.config)).toBe(JSON.stringify(reference.config));
  return [scorer, reference];
}

function expectSameResult(scorer: Scorer, reference: Scorer, run: AgentRun, context?: ScoreContext): void {
  const got = scorer.score(run, context);
  const want = reference.score(run, context);
  expect(JSON.stringify(got)).toBe(JSON.stringify(want));
  expect(got).toStrictEqual(want);
}

describe('optimised scorers give the results of their previous implementations', () => {
  it('trajectory, on random runs, configurations and redaction', () => {
    fc.assert(
      fc.property(
        trajectoryOptionsArb,
        fc.array(runArb, { minLength: 1, maxLength: 4 }),
        contextArb,
        (options, runs, context) => {
          const scorers = pair(
            () => trajectory(options),
            () => referenceTrajectory(options),
          );
          if (!scorers) return;
          for (const spec of runs) expectSameResult(scorers[0], scorers[1], buildRun(spec), context);
        },
      ),
      { seed: 8, numRuns: 4000 },
    );
  });

  it('trajectory, on the bench shape with every tool name (first call correct or not, retries)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            name: fc.constantFrom('get_order_detail', 'check_refund_policy', 'submit_refund', 'notify'),
            status: fc.constantFrom<ToolStatus>('ok', 'error', 'ok', 'ok'),
            requestOnly: fc.constant(false),
            args: fc.record({ order_id: fc.constantFrom('A1024', 'B1', 7) }),
            rejected: fc.constant(false),
          }),
          { maxLength: 12 },
        ),
        (calls) => {
          const options: TrajectoryOptions = {
            expectedTools: ['get_order_detail', 'check_refund_policy'],
            forbiddenTools: ['submit_refund'],
            maxCalls: 10,
            argConstraints: { get_order_detail: { order_id: { equals: 'A1024' } } },
            expectedOrder: [['get_order_detail', 'check_refund_policy']],
          };
          const run = buildRun({ calls, requests: [], children: [] });
          expectSameResult(trajectory(options), referenceTrajectory(options), run);
        },
      ),
      { seed: 80, numRuns: 2000 },
    );
  });

  it('trajectory, with more errors than the reason shows', () => {
    const fields = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`p${i}`, { equals: i }]));
    const options: TrajectoryOptions = {
      expectedTools: ['a', 'b', 'c', 'd'],
      forbiddenTools: ['e', 'f'],
      argConstraints: { x: fields },
      order: 'exact',
    };
    for (const n of [0, 1, 3, 6, 8]) {
      const args = Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, i]));
      const calls = ['e', 'f', 'x'].map(
        (name): CallSpec => ({ name, status: 'ok', requestOnly: false, args, rejected: false }),
      );
      const run = buildRun({ calls, requests: [], children: [] });
      for (const context of [undefined, { redact: { values: true } } as ScoreContext]) {
        expectSameResult(trajectory(options), referenceTrajectory(options), run, context);
      }
    }
  });

  it('roundHalfEven, on ties, integers, -0 and the values scores take', () => {
    const values = [
      0,
      -0,
      1,
      -1,
      2,
      0.5,
      0.03125,
      0.09375,
      0.99995,
      1 / 3,
      2 / 3,
      1e21,
      -1e21,
      12345.6789,
      Number.NaN,
    ];
    for (let i = 0; i <= 12; i++) for (let j = 1; j <= 12; j++) values.push(i / j, -i / j);
    for (const x of values) {
      for (const digits of [0, 1, 2, 4, 15, 16, -1]) {
        expect(Object.is(roundHalfEven(x, digits), referenceRoundHalfEven(x, digits))).toBe(true);
      }
    }
    fc.assert(
      fc.property(fc.double(), fc.integer({ min: 0, max: 6 }), (x, digits) => {
        expect(Object.is(roundHalfEven(x, digits), referenceRoundHalfEven(x, digits))).toBe(true);
      }),
      { seed: 81, numRuns: 5000 },
    );
  });

  it('reliability, on random nested runs with requests, refusals and argument specs', () => {
    const specArb = fc.dictionary(fc.constantFrom('v', 'w', 'x', 'order_id'), valueArb, { maxKeys: 2 });
    const optionsArb = fc.record(
      {
        expectedToolCalls: fc.oneof(fc.constant(null), fc.array(configNameArb, { maxLength: 4 })),
        allowAdditionalToolCalls: fc.boolean(),
        expectedToolCallArguments: fc.oneof(
          fc.constant(null),
          fc.dictionary(configNameArb, fc.oneof(specArb, fc.array(specArb, { maxLength: 2 }), scalarArb), {
            maxKeys: 3,
          }),
        ),
        scope: fc.constantFrom('self' as const, 'members' as const),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(optionsArb, fc.array(runArb, { minLength: 1, maxLength: 4 }), (options, runs) => {
        const o = options as Parameters<typeof reliability>[0];
        const scorers = pair(
          () => reliability(o),
          () => referenceReliability(o),
        );
        if (!scorers) return;
        for (const spec of runs) expectSameResult(scorers[0], scorers[1], buildRun(spec));
      }),
      { seed: 82, numRuns: 4000 },
    );
  });

  it('reliability, on long runs (more passed names than the list scan)', () => {
    const longCallArb = fc.record({
      name: fc.constantFrom('a', 'b', 'c', 'd'),
      status: fc.constantFrom<ToolStatus>('ok', 'ok', 'error', 'paused'),
      requestOnly: fc.constant(false),
      args: fc.constant({ v: 1 }),
      rejected: fc.constant(false),
    });
    fc.assert(
      fc.property(
        fc.array(longCallArb, { minLength: 10, maxLength: 60 }),
        fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e'), { maxLength: 5 }),
        fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e'), { maxLength: 4 }),
        fc.boolean(),
        (calls, expectedToolCalls, requests, allowAdditionalToolCalls) => {
          const run = buildRun({ calls, requests, children: [] });
          const options = {
            expectedToolCalls,
            allowAdditionalToolCalls,
            expectedToolCallArguments: { a: { v: 1 } },
          };
          expectSameResult(reliability(options), referenceReliability(options), run);
        },
      ),
      { seed: 84, numRuns: 1500 },
    );
  });

  // tool_calls and reliability read a run through agno evidence, the one part of tool_calls
  // that changed: compared directly rather than through a copy of the whole scorer.
  it('agno evidence, on random nested runs, for the run itself and with its members', () => {
    fc.assert(
      fc.property(
        fc.array(runArb, { minLength: 1, maxLength: 4 }),
        fc.constantFrom('self' as const, 'members' as const),
        (runs, scope) => {
          for (const spec of runs) {
            const run = buildRun(spec);
            const got = agnoEvidence(run, scope);
            const want = referenceAgnoEvidence(run, scope);
            expect(got.executions).toStrictEqual(want.executions);
            expect([...got.requestedNames]).toEqual([...want.requestedNames]);
          }
        },
      ),
      { seed: 85, numRuns: 3000 },
    );
  });

  it('tool_order, on random runs and configurations', () => {
    const optionsArb = fc.record(
      {
        expectedTool: fc.constantFrom('a', 'b', ''),
        expectedToolOrder: fc.array(configNameArb, { maxLength: 4 }),
        strictMode: fc.boolean(),
        orderSemantics: fc.constantFrom('mastra' as const, 'subsequence' as const),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(optionsArb, fc.array(runArb, { minLength: 1, maxLength: 4 }), (options, runs) => {
        const scorers = pair(
          () => toolOrder(options),
          () => referenceToolOrder(options),
        );
        if (!scorers) return;
        for (const spec of runs) expectSameResult(scorers[0], scorers[1], buildRun(spec));
      }),
      { seed: 83, numRuns: 3000 },
    );
  });

  it('broken runs give the same error results', () => {
    const broken = [
      { calls: [], children: null },
      { calls: null, children: [] },
      { calls: [{ name: 'a', status: 'ok', args: { v: 1 } }], children: undefined },
      {},
      { calls: [null], children: [] },
      { calls: [], children: [null] },
      { calls: [{ name: 'a', status: 'ok', args: { v: 1 } }], children: [{ calls: 7, children: [] }] },
    ] as unknown as AgentRun[];
    const options: TrajectoryOptions = {
      expectedTools: ['a'],
      argConstraints: { a: { v: { equals: 1 } } },
      maxRepeats: 1,
    };
    for (const run of broken) {
      for (const scope of ['self', 'members'] as const) {
        expectSameResult(trajectory({ ...options, scope }), referenceTrajectory({ ...options, scope }), run);
        expectSameResult(
          reliability({ expectedToolCalls: ['a'], scope }),
          referenceReliability({ expectedToolCalls: ['a'], scope }),
          run,
        );
      }
      expectSameResult(
        toolOrder({ expectedToolOrder: ['a'] }),
        referenceToolOrder({ expectedToolOrder: ['a'] }),
        run,
      );
    }
  });
});
