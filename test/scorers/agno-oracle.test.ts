/**
 * Differential test against agno itself. Random cases (fixed seed) are run through agno's
 * own `ReliabilityEval._evaluate` and `ToolCallScorer` (test/scorers/agno-oracle.py) and
 * through toolwatch — on agno-shaped evidence and on the equivalent trace.
 *
 * agno's answers are committed in agno-oracle-vectors.json, so the comparison runs
 * everywhere. With a Python that has agno installed (AGNO_PYTHON, or the venv of
 * test/interop/agno/record.py at /tmp/agno-venv), the oracle also runs live on the same
 * cases; `AGNO_ORACLE_WRITE=1` rewrites the vectors file from it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluateReliability, reliability } from '../../src/scorers/reliability.js';
import {
  evaluateToolCalls,
  toolCalls,
  toolCallsConfigProblem,
  toolCallsDigest,
} from '../../src/scorers/tool-calls.js';
import type { ScorerResult } from '../../src/types.js';
import { PyFloat, pythonJsonDumps } from '../../src/util/python-json.js';
import { type AgnoCall, type AgnoNode, agnoEvidenceOf, type CallState, runOf } from './agno-cases.js';

const here = dirname(fileURLToPath(import.meta.url));
const VECTORS = join(here, 'agno-oracle-vectors.json');
const ORACLE = join(here, 'agno-oracle.py');
const SEED = 20260720;
const CASES = 600;

type Spec = Record<string, unknown>;
type ArgMap = Record<string, Spec | Spec[]> | null;

interface ReliabilityCase {
  kind: 'reliability';
  run: AgnoNode;
  options: {
    expected_tool_calls: string[] | null;
    allow_additional_tool_calls: boolean;
    expected_tool_call_arguments: ArgMap;
  };
}
interface ToolCallsCase {
  kind: 'tool_calls';
  run: AgnoNode;
  options: { expected_tools: string[] | string; arguments: ArgMap; allow_additional: boolean };
}
type Case = ReliabilityCase | ToolCallsCase;

// ---------------------------------------------------------------------------------------
// Case generation

const name = fc.constantFrom('a', 'b', 'c', 'A');
const key = fc.constantFrom('x', 'y', 'q');
const scalar = fc.oneof(
  fc.integer({ min: -1, max: 2 }),
  fc.boolean(),
  fc.constantFrom('1', 'x', "it's", 'é'),
  fc.constant(null),
  fc.constantFrom(0, 1, 1.5, 2).map((v) => new PyFloat(v)),
);
const value = fc.oneof(
  { weight: 4, arbitrary: scalar },
  { weight: 1, arbitrary: fc.array(scalar, { maxLength: 2 }) },
  { weight: 1, arbitrary: fc.dictionary(key, scalar, { maxKeys: 2 }) },
);
const args = fc.dictionary(key, value, { maxKeys: 3 });
const state = fc.constantFrom<CallState>(
  'ok',
  'explicit-ok',
  'err',
  'paused',
  'hitl-approved',
  'hitl-rejected',
);
const call: fc.Arbitrary<AgnoCall | string> = fc.oneof(
  name,
  fc
    .record({ name, state, args: fc.option(args, { nil: undefined }) })
    .map((c) => (c.args === undefined ? { name: c.name, state: c.state } : c)),
);
const ownEvidence = {
  tools: fc.option(fc.array(call, { maxLength: 4 }), { nil: null }),
  requests: fc.array(fc.array(name, { minLength: 1, maxLength: 2 }), { maxLength: 2 }),
  historyRequests: fc.array(name, { maxLength: 2 }),
};
const agentNode: fc.Arbitrary<AgnoNode> = fc.record(ownEvidence);
const { node } = fc.letrec<{ node: AgnoNode; team: AgnoNode }>((tie) => ({
  node: fc.oneof({ depthSize: 'small', withCrossShrink: true }, agentNode, tie('team')),
  team: fc.record({
    kind: fc.constant('team' as const),
    ...ownEvidence,
    members: fc.array(tie('node'), { maxLength: 2 }),
  }),
}));
const spec = fc.dictionary(key, value, { maxKeys: 2 });

/** Every call of the run (members too), so expectations can be drawn from what happened. */
function callsOf(n: AgnoNode): AgnoCall[] {
  const own = (n.tools ?? []).map((c) => (typeof c === 'string' ? { name: c } : c));
  return [...own, ...(n.members ?? []).flatMap(callsOf)];
}

/** Expected names: often ones the run called (so cases also pass), sometimes any name. */
function namesFor(calls: AgnoCall[], maxLength: number): fc.Arbitrary<string[]> {
  const called = calls.map((c) => c.name);
  const pick = called.length > 0 ? fc.oneof(fc.constantFrom(...called), name) : name;
  return fc.array(pick, { maxLength });
}

/** Specs: often a subset of some call's real arguments, sometimes random. */
function argMapFor(calls: AgnoCall[], minSpecs: number): fc.Arbitrary<ArgMap> {
  const withArgs = calls.filter((c) => c.args && Object.keys(c.args).length > 0);
  const real: fc.Arbitrary<[string, Spec]> =
    withArgs.length > 0
      ? fc
          .constantFrom(...withArgs)
          .chain((c) =>
            fc
              .subarray(Object.keys(c.args!), { minLength: 1 })
              .map((ks) => [c.name, Object.fromEntries(ks.map((k) => [k, c.args![k]]))] as [string, Spec]),
          )
      : fc.tuple(name, spec);
  const entry = fc.oneof(real, fc.tuple(name, spec));
  const oneTool = fc.oneof(
    entry.map(([t, sp]) => ({ [t]: sp }) as Record<string, Spec | Spec[]>),
    fc.array(entry, { minLength: minSpecs, maxLength: 2 }).map((es) => {
      const out: Record<string, Spec[]> = {};
      for (const [t, sp] of es) out[t] = [...(out[t] ?? []), sp];
      return out as Record<string, Spec | Spec[]>;
    }),
  );
  return fc.option(
    fc
      .array(oneTool, { maxLength: 2 })
      .map((ms) => Object.assign({}, ...ms) as Record<string, Spec | Spec[]>),
    { nil: null },
  );
}

const reliabilityCase: fc.Arbitrary<Case> = node.chain((run) => {
  const calls = callsOf(run);
  return fc.record({
    kind: fc.constant('reliability' as const),
    run: fc.constant(run),
    options: fc.record({
      expected_tool_calls: fc.option(namesFor(calls, 4), { nil: null }),
      allow_additional_tool_calls: fc.boolean(),
      expected_tool_call_arguments: argMapFor(calls, 0),
    }),
  });
});
const toolCallsCase: fc.Arbitrary<Case> = node.chain((run) => {
  const calls = callsOf(run);
  return fc.record({
    kind: fc.constant('tool_calls' as const),
    run: fc.constant(run),
    options: fc.record({
      expected_tools: fc.oneof({ weight: 12, arbitrary: namesFor(calls, 3) }, { weight: 1, arbitrary: name }),
      arguments: argMapFor(calls, 0),
      allow_additional: fc.boolean(),
    }),
  });
});

function generateCases(): Case[] {
  return fc.sample(fc.oneof(reliabilityCase, toolCallsCase), { numRuns: CASES, seed: SEED });
}

// ---------------------------------------------------------------------------------------
// Transport: JSON with floats as Python floats, in insertion order.

function encodeCase(c: Case): string {
  return pythonJsonDumps(c, { sortKeys: false });
}

/**
 * The vectors file keeps each case as its Python-JSON text; this reads it back with
 * numbers written as floats (`1.0`, `1e-07`) as PyFloat, so the trip is exact.
 */
function decodeValue(text: string): unknown {
  let i = 0;
  const ws = () => {
    while (/\s/.test(text[i] ?? '')) i++;
  };
  const parse = (): unknown => {
    ws();
    const ch = text[i];
    if (ch === '{') {
      i++;
      const out: Record<string, unknown> = {};
      ws();
      if (text[i] === '}') {
        i++;
        return out;
      }
      for (;;) {
        ws();
        const k = parse() as string;
        ws();
        i++; // ':'
        out[k] = parse();
        ws();
        if (text[i++] === '}') return out;
      }
    }
    if (ch === '[') {
      i++;
      const out: unknown[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return out;
      }
      for (;;) {
        out.push(parse());
        ws();
        if (text[i++] === ']') return out;
      }
    }
    if (ch === '"') {
      const m = /^"(?:[^"\\]|\\.)*"/.exec(text.slice(i))!;
      i += m[0].length;
      return JSON.parse(m[0]);
    }
    const m = /^(?:true|false|null|-?\d+(\.\d+)?([eE][+-]?\d+)?)/.exec(text.slice(i))!;
    i += m[0].length;
    const v = JSON.parse(m[0]);
    return typeof v === 'number' && (m[1] || m[2]) ? new PyFloat(v) : v;
  };
  return parse();
}

function oraclePython(): string | undefined {
  const candidates = [process.env.AGNO_PYTHON, '/tmp/agno-venv/bin/python'].filter((p): p is string => !!p);
  for (const p of candidates) {
    if (!existsSync(p)) continue;
    try {
      execFileSync(p, ['-c', 'import agno.eval.reliability, agno.scorer.tools'], { stdio: 'ignore' });
      return p;
    } catch {}
  }
  return undefined;
}

function runOracle(python: string, lines: string[]): unknown[] {
  const out = execFileSync(python, [ORACLE], {
    input: lines.join('\n'),
    encoding: 'utf8',
    env: { ...process.env, AGNO_TELEMETRY: 'false' },
    maxBuffer: 64 * 1024 * 1024,
  });
  return out
    .split('\n')
    .filter((l) => l.trim().length > 0)
    .map((l) => JSON.parse(l));
}

// ---------------------------------------------------------------------------------------
// Comparison

type Reliability = ReturnType<typeof evaluateReliability>;
type ToolCallsExpected =
  | { value: number; passed: boolean; reason: string | null; digest: string }
  | { error: string };

function checkReliability(c: ReliabilityCase, expected: Reliability): void {
  const rules = {
    expectedToolCalls: c.options.expected_tool_calls,
    allowAdditionalToolCalls: c.options.allow_additional_tool_calls,
    expectedToolCallArguments: c.options.expected_tool_call_arguments,
  };
  expect(evaluateReliability(agnoEvidenceOf(c.run), rules)).toEqual(expected);
  const scorer = reliability({
    expectedToolCalls: rules.expectedToolCalls,
    allowAdditionalToolCalls: rules.allowAdditionalToolCalls,
    expectedToolCallArguments: rules.expectedToolCallArguments,
  });
  const result = scorer.score(runOf(c.run)) as ScorerResult;
  expect(result.detail).toEqual(expected);
  expect(result.label).toBe(expected.eval_status === 'PASSED' ? 'pass' : 'fail');
}

function membersCarryTools(n: AgnoNode): boolean {
  return (n.members ?? []).some((m) => (m.tools ?? []).length > 0 || membersCarryTools(m));
}

function checkToolCalls(c: ToolCallsCase, expected: ToolCallsExpected): void {
  const { expected_tools: tools, arguments: argsMap, allow_additional: allow } = c.options;
  const problem = toolCallsConfigProblem(tools, argsMap);
  if ('error' in expected) {
    expect(problem && `${problem.type}: ${problem.message}`).toBe(expected.error);
    expect(() =>
      toolCalls({ expectedTools: tools as string[], arguments: argsMap, allowAdditional: allow }),
    ).toThrow(problem!.message);
    return;
  }
  expect(problem).toBeUndefined();
  const list = tools as string[];
  const rules = {
    expectedTools: [...new Set(list)],
    specs: Object.entries(argsMap ?? {}).map(([t, s]) => [t, Array.isArray(s) ? s : [s]] as [string, Spec[]]),
    allowAdditional: allow,
  };
  const d = evaluateToolCalls(agnoEvidenceOf(c.run, 'self'), rules, membersCarryTools(c.run));
  expect({ value: d.value, passed: d.passed, reason: d.reason }).toEqual({
    value: expected.value,
    passed: expected.passed,
    reason: expected.reason,
  });
  expect(toolCallsDigest(list, argsMap, allow)).toBe(expected.digest);
  const scorer = toolCalls({ expectedTools: list, arguments: argsMap, allowAdditional: allow });
  expect(scorer.digest).toBe(expected.digest);
  const r = scorer.score(runOf(c.run)) as ScorerResult;
  expect({ score: r.score, passed: r.passed, reason: r.reason }).toEqual({
    score: expected.value,
    passed: expected.passed,
    reason: expected.reason,
  });
}

function check(c: Case, expected: unknown): void {
  if (c.kind === 'reliability') checkReliability(c, expected as Reliability);
  else checkToolCalls(c, expected as ToolCallsExpected);
}

// ---------------------------------------------------------------------------------------

interface VectorFile {
  agno: string;
  seed: number;
  vectors: Array<{ case: string; expected: unknown }>;
}

const python = oraclePython();

describe.runIf(python)('agno oracle, live', () => {
  it(`toolwatch agrees with agno on ${CASES} random cases`, () => {
    const cases = generateCases();
    const lines = cases.map(encodeCase);
    const results = runOracle(python!, lines);
    expect(results.length).toBe(cases.length);
    if (process.env.AGNO_ORACLE_WRITE === '1') {
      const version = execFileSync(
        python!,
        ['-c', 'import importlib.metadata as m; print(m.version("agno"))'],
        {
          encoding: 'utf8',
        },
      ).trim();
      const file: VectorFile = {
        agno: version,
        seed: SEED,
        vectors: lines.map((l, i) => ({ case: l, expected: results[i] })),
      };
      // One vector per line keeps the file diffable.
      const body = file.vectors.map((v) => JSON.stringify(v)).join(',\n');
      writeFileSync(
        VECTORS,
        `{"agno":${JSON.stringify(file.agno)},"seed":${file.seed},"vectors":[\n${body}\n]}\n`,
      );
    }
    cases.forEach((c, i) => {
      try {
        check(c, results[i]);
      } catch (e) {
        throw new Error(
          `case ${i}: ${lines[i]}\nagno: ${JSON.stringify(results[i])}\n${(e as Error).message}`,
        );
      }
    });
  });
});

describe('agno oracle, committed vectors', () => {
  const file = JSON.parse(readFileSync(VECTORS, 'utf8')) as VectorFile;

  it('holds cases of both kinds, including agno constructor errors', () => {
    const kinds = file.vectors.map((v) => (decodeValue(v.case) as Case).kind);
    expect(kinds.filter((k) => k === 'reliability').length).toBeGreaterThan(100);
    expect(kinds.filter((k) => k === 'tool_calls').length).toBeGreaterThan(100);
    expect(file.vectors.some((v) => 'error' in (v.expected as object))).toBe(true);
  });

  it('decoding a case gives back the exact text sent to agno', () => {
    for (const v of file.vectors) expect(encodeCase(decodeValue(v.case) as Case)).toBe(v.case);
  });

  it(`toolwatch agrees with agno ${file.agno} on every vector`, () => {
    file.vectors.forEach((v, i) => {
      const c = decodeValue(v.case) as Case;
      try {
        check(c, v.expected);
      } catch (e) {
        throw new Error(
          `vector ${i}: ${v.case}\nagno: ${JSON.stringify(v.expected)}\n${(e as Error).message}`,
        );
      }
    });
  });
});
