/**
 * Differential check on real agno traces (test/fixtures/agno: agno 3.1.10 +
 * openinference-instrumentation-agno, recorded with ground truth). For each root run, the
 * agno rules applied to what agno's own RunOutput held (`*.truth.json`) must give the same
 * result as the scorers applied to the run reconstructed from the spans.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { spansFromOtlpJson } from '../../src/conventions/from-otlp-json.js';
import { reconstructTraces } from '../../src/reconstruction/reconstruct-trace.js';
import type { AgnoEvidence, AgnoExecution } from '../../src/scorers/agno-evidence.js';
import {
  evaluateReliability,
  type ReliabilityOptions,
  reliability,
  reliabilityConfigSchema,
  reliabilityFromConfig,
} from '../../src/scorers/reliability.js';
import {
  evaluateToolCalls,
  type ToolCallsOptions,
  toolCalls,
  toolCallsConfigSchema,
  toolCallsFromConfig,
} from '../../src/scorers/tool-calls.js';
import type { AgentRun, ScorerResult } from '../../src/types.js';

interface TruthTool {
  tool_name: string;
  tool_args: Record<string, unknown> | null;
  tool_call_error: boolean | null;
  is_paused: boolean;
}
interface AgnoEvalRecord {
  kind: 'reliability' | 'tool_calls';
  config: Record<string, unknown>;
  result: Record<string, unknown>;
  digest?: string;
}
interface TruthRun {
  kind: 'agent' | 'team';
  name: string;
  /** What agno's own ReliabilityEval / ToolCallScorer returned on this RunOutput. */
  agno_evals?: AgnoEvalRecord[];
  tools: TruthTool[] | null;
  message_tool_calls: Array<{ name: string; from_history: boolean }>;
  members?: TruthRun[];
}

function truthEvidence(run: TruthRun, scope: 'members' | 'self'): AgnoEvidence {
  const executions: AgnoExecution[] = [];
  const requestedNames = new Set<string>();
  const visit = (r: TruthRun) => {
    for (const t of r.tools ?? []) {
      executions.push({
        name: t.tool_name,
        error: !!t.tool_call_error,
        paused: t.is_paused,
        args: t.tool_args ?? undefined,
      });
    }
    for (const m of r.message_tool_calls) if (!m.from_history) requestedNames.add(m.name);
    if (scope === 'members') for (const m of r.members ?? []) visit(m);
  };
  visit(run);
  return { executions, requestedNames };
}

function membersCarryTools(run: TruthRun): boolean {
  return (run.members ?? []).some((m) => (m.tools ?? []).length > 0 || membersCarryTools(m));
}

function reliabilityConfigs(run: TruthRun): ReliabilityOptions[] {
  const all = truthEvidence(run, 'members').executions;
  const names = [...new Set(all.map((e) => e.name))];
  const first = all[0];
  return [
    { expectedToolCalls: names },
    { expectedToolCalls: names.slice(0, 1) },
    { expectedToolCalls: [...names, 'never_called'], allowAdditionalToolCalls: true },
    { expectedToolCalls: [] },
    { expectedToolCalls: null },
    ...(first
      ? [{ expectedToolCalls: null, expectedToolCallArguments: { [first.name]: first.args ?? {} } }]
      : []),
    ...(first
      ? [{ expectedToolCalls: [first.name], expectedToolCallArguments: { [first.name]: { nope: 1 } } }]
      : []),
  ] as ReliabilityOptions[];
}

function toolCallsConfigs(run: TruthRun): ToolCallsOptions[] {
  const own = truthEvidence(run, 'self').executions;
  const names = [...new Set(own.map((e) => e.name))];
  const first = own[0];
  return [
    { expectedTools: names.length ? names : ['never_called'] },
    { expectedTools: names.slice(0, 1).concat(['never_called']), allowAdditional: false },
    ...(first
      ? [{ expectedTools: [], arguments: { [first.name]: first.args ?? {} }, allowAdditional: false }]
      : []),
  ] as ToolCallsOptions[];
}

/** Every recorded scenario that has ground truth. */
const FIXTURES = readdirSync('test/fixtures/agno')
  .filter((f) => f.endsWith('.truth.json'))
  .map((f) => f.slice(0, -'.truth.json'.length))
  .sort();

function load(name: string): { truth: TruthRun[]; runs: AgentRun[] } {
  const truth = JSON.parse(readFileSync(`test/fixtures/agno/${name}.truth.json`, 'utf8')).runs as TruthRun[];
  const otlp = JSON.parse(readFileSync(`test/fixtures/agno/${name}.otlp.json`, 'utf8'));
  const runs = reconstructTraces(spansFromOtlpJson(otlp)).flatMap((t) => t.runs);
  return { truth, runs };
}

/**
 * Where reconstruction does not yet recover what agno recorded; `it.fails` keeps these
 * visible and turns red as soon as reconstruction is fixed (then move them back to `it`).
 */
const KNOWN_DIVERGENCES: Record<string, string> = {
  // Inherent, not a bug: the trace does not carry it.
  'masked/Billing Agent':
    'OPENINFERENCE_HIDE_INPUTS/OUTPUTS remove every request: the refused book_flight request is invisible, so strict mode cannot fail it',
};

describe.each(FIXTURES)('agno fixture %s: scorers on spans = agno rules on RunOutput', (name) => {
  const { truth, runs } = load(name);
  for (const t of truth) {
    const known = KNOWN_DIVERGENCES[`${name}/${t.name}`];
    (known ? it.fails : it)(`root run ${t.name}${known ? ` (known divergence: ${known})` : ''}`, () =>
      check(t, runs),
    );
  }
});

function check(t: TruthRun, runs: AgentRun[]): void {
  const runName = t.name;
  const run = runs.find((r) => r.agent === runName);
  expect(run, `a reconstructed root run named ${runName}`).toBeDefined();
  // agno's own results, recorded next to the trace.
  for (const ev of t.agno_evals ?? []) {
    if (ev.kind === 'reliability') {
      const scorer = reliabilityFromConfig(
        reliabilityConfigSchema.parse({ kind: 'reliability', ...ev.config }),
      );
      const got = scorer.score(run!) as ScorerResult;
      expect({ config: ev.config, detail: got.detail }).toEqual({ config: ev.config, detail: ev.result });
    } else {
      const scorer = toolCallsFromConfig(toolCallsConfigSchema.parse({ kind: 'tool_calls', ...ev.config }));
      const got = scorer.score(run!) as ScorerResult;
      expect({ config: ev.config, value: got.score, passed: got.passed, reason: got.reason }).toEqual({
        config: ev.config,
        ...ev.result,
      });
      if (ev.digest) expect(scorer.digest).toBe(ev.digest);
    }
  }
  for (const options of reliabilityConfigs(t)) {
    const expected = evaluateReliability(truthEvidence(t, 'members'), {
      expectedToolCalls: options.expectedToolCalls ?? null,
      allowAdditionalToolCalls: options.allowAdditionalToolCalls ?? false,
      expectedToolCallArguments: options.expectedToolCallArguments ?? null,
    });
    const got = reliability(options).score(run!) as ScorerResult;
    expect({ options, detail: got.detail }).toEqual({ options, detail: expected });
  }
  for (const options of toolCallsConfigs(t)) {
    const expected = evaluateToolCalls(
      truthEvidence(t, 'self'),
      {
        expectedTools: [...new Set(options.expectedTools ?? [])],
        specs: Object.entries(options.arguments ?? {}).map(
          ([k, v]) => [k, [v as Record<string, unknown>]] as const,
        ),
        allowAdditional: options.allowAdditional ?? true,
      },
      membersCarryTools(t),
    );
    const got = toolCalls(options).score(run!) as ScorerResult;
    expect({ options, detail: got.detail }).toEqual({ options, detail: expected });
  }
}
