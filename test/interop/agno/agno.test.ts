/**
 * Real agno traces (agno 3.1.10 + openinference-instrumentation-agno 1.0.15, recorded by
 * record.py with a scripted model) decoded and reconstructed, checked against what agno
 * itself reported (RunOutput / TeamRunOutput) and what the tool functions logged.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { spansFromOtlpJson } from '../../../src/conventions/from-otlp-json.js';
import { reconstructTraces } from '../../../src/reconstruction/reconstruct-trace.js';
import { reliability } from '../../../src/scorers/reliability.js';
import { toolCalls } from '../../../src/scorers/tool-calls.js';
import type { AgentRun, ReconstructedTrace, SpanLike, ToolExecution } from '../../../src/types.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../../fixtures/agno');
/** Every recorded scenario: a new recording is tested without editing this file. */
const SCENARIOS = readdirSync(FIXTURES)
  .filter((f) => f.endsWith('.otlp.json'))
  .map((f) => f.slice(0, -'.otlp.json'.length))
  .sort();

interface TruthTool {
  tool_call_id: string;
  tool_name: string;
  tool_args: Record<string, unknown> | null;
  tool_call_error: boolean | null;
  is_paused: boolean;
  requires_confirmation: boolean | null;
  confirmed: boolean | null;
  result: string | null;
}

interface TruthRun {
  kind: 'agent' | 'team';
  name: string;
  id: string;
  run_id: string;
  status: string;
  is_paused: boolean;
  content: string | null;
  tools: TruthTool[];
  message_tool_calls: Array<{ id: string; name: string; arguments: string; from_history: boolean }>;
  members?: TruthRun[];
  /** agno's own ReliabilityEval / ToolCallScorer verdicts on this RunOutput (top-level runs). */
  agno_evals?: AgnoEval[];
}

type AgnoEval =
  | {
      kind: 'reliability';
      config: {
        expected_tool_calls?: string[] | null;
        allow_additional_tool_calls?: boolean;
        expected_tool_call_arguments?: Record<string, any>;
      };
      result: Record<string, unknown>;
    }
  | {
      kind: 'tool_calls';
      config: { expected_tools: string[]; arguments?: Record<string, any>; allow_additional: boolean };
      result: { value: number; passed: boolean; reason: string | null };
      digest: string;
    };

interface Truth {
  scenario: string;
  versions: Record<string, string>;
  executed: Array<{ name: string; args: Record<string, unknown>; status: 'ok' | 'error' }>;
  runs: TruthRun[];
  previous_run?: { run: TruthRun; executed: Truth['executed'] };
  paused_run_id?: string;
  paused_run?: TruthRun;
}

interface Loaded {
  otlp: unknown;
  spans: SpanLike[];
  traces: ReconstructedTrace[];
  truth: Truth;
}

function load(scenario: string): Loaded {
  const otlp = JSON.parse(readFileSync(join(FIXTURES, `${scenario}.otlp.json`), 'utf8'));
  const truth = JSON.parse(readFileSync(join(FIXTURES, `${scenario}.truth.json`), 'utf8')) as Truth;
  const spans = spansFromOtlpJson(otlp);
  const traces = reconstructTraces(spans);
  return { otlp, spans, traces, truth };
}

function rawSpanCount(otlp: any): number {
  let n = 0;
  for (const rs of otlp.resourceSpans) for (const ss of rs.scopeSpans) n += ss.spans.length;
  return n;
}

function rootRuns(traces: ReconstructedTrace[]): AgentRun[] {
  return traces.flatMap((t) => t.runs);
}

/** Every run of the forest, depth-first pre-order. */
function allRuns(runs: AgentRun[]): AgentRun[] {
  return runs.flatMap((r) => [r, ...allRuns(r.children)]);
}

function findRun(traces: ReconstructedTrace[], agentId: string): AgentRun {
  const run = allRuns(rootRuns(traces)).find((r) => r.agentId === agentId);
  if (!run) throw new Error(`no run with agentId ${agentId}`);
  return run;
}

/** agno's _collect_member_evidence order: the node's tools, then each member subtree. */
function truthUnion(run: TruthRun): TruthTool[] {
  return [...run.tools, ...(run.members ?? []).flatMap(truthUnion)];
}

function runUnion(run: AgentRun): ToolExecution[] {
  return [...run.calls, ...run.children.flatMap(runUnion)];
}

/** Shape of a reconstructed run tree, compared with agno's RunOutput tree. */
function treeOf(run: AgentRun): unknown {
  return { id: run.agentId, name: run.agent, children: run.children.map(treeOf) };
}

function truthTreeOf(run: TruthRun): unknown {
  return { id: run.id, name: run.name, children: (run.members ?? []).map(truthTreeOf) };
}

function truthStatus(t: TruthTool): string {
  if (t.is_paused) return 'paused';
  return t.tool_call_error ? 'error' : 'ok';
}

function callView(c: ToolExecution) {
  return { name: c.name, args: c.args, status: c.status };
}

function truthView(t: TruthTool) {
  return { name: t.tool_name, args: t.tool_args, status: truthStatus(t) };
}

describe('agno fixtures decode', () => {
  for (const scenario of SCENARIOS) {
    it(`${scenario}: every span decodes with its ids, kind and status`, () => {
      const { otlp, spans } = load(scenario);
      expect(spans).toHaveLength(rawSpanCount(otlp));
      for (const s of spans) {
        expect(s.traceId).toMatch(/^[0-9a-f]{32}$/);
        expect(s.spanId).toMatch(/^[0-9a-f]{16}$/);
        expect(typeof s.attributes['openinference.span.kind']).toBe('string');
        expect(s.endTime).toBeGreaterThanOrEqual(s.startTime);
      }
      // agno.tools is an OTLP arrayValue on AGENT spans: it must decode to a plain array.
      const agentWithTools = spans.find((s) => s.attributes['agno.tools'] !== undefined);
      if (agentWithTools) expect(Array.isArray(agentWithTools.attributes['agno.tools'])).toBe(true);
    });
  }
});

describe('team_depth3: Team -> member Team -> member Agent -> tool', () => {
  const { traces, truth, spans } = load('team_depth3');
  const leaderTruth = truth.runs[0]!;

  it('is one trace with one root run: the outer team', () => {
    expect(traces).toHaveLength(1);
    expect(rootRuns(traces).map((r) => r.agentId)).toEqual([leaderTruth.id]);
  });

  it('nests the runs exactly like agno member_responses (depth 3)', () => {
    const root = rootRuns(traces)[0]!;
    expect(treeOf(root)).toEqual(truthTreeOf(leaderTruth));
    const worker = findRun(traces, 'weather-agent');
    expect(worker.parent?.agentId).toBe('research-team');
    expect(worker.parent?.parent?.agentId).toBe('travel-desk');
  });

  it('the member agent owns its tool execution, joined to its LLM request id', () => {
    const workerTruth = leaderTruth.members![0]!.members![0]!;
    const worker = findRun(traces, 'weather-agent');
    expect(worker.executions.map(callView)).toEqual(workerTruth.tools.map(truthView));
    expect(worker.executions.map((e) => e.callId)).toEqual(workerTruth.tools.map((t) => t.tool_call_id));
  });

  it('the inner team owns its delegate_task_to_member call, joined by name+args', () => {
    const innerTruth = leaderTruth.members![0]!;
    const inner = findRun(traces, 'research-team');
    // Only the calls made while the inner team ran; the leaked leader call is checked below.
    const during = inner.calls.filter(
      (c) => c.end !== undefined && inner.end !== undefined && c.end <= inner.end,
    );
    expect(during.map(callView)).toEqual(innerTruth.tools.map(truthView));
    expect(during.map((c) => c.callId)).toEqual(innerTruth.tools.map((t) => t.tool_call_id));
  });

  it('the leader owns its own tool call made before delegating', () => {
    const leader = findRun(traces, 'travel-desk');
    const first = leader.calls[0]!;
    expect(callView(first)).toEqual(truthView(leaderTruth.tools[0]!));
    expect(first.callId).toBe(leaderTruth.tools[0]!.tool_call_id);
  });

  // openinference-instrumentation-agno 1.0.15 detaches its two context tokens in the wrong
  // order (_runs_wrapper.run: use_span's token, then the team-node token), so after the
  // member team's run returns, that team's span stays current: the leader's later LLM and
  // TOOL spans (notify_customer here) have parentSpanId = Research_Team.run although they
  // start after it ended. agno says notify_customer is the leader's call; following the span
  // parent would give it to Research Team (reconstruction re-homes such late spans).
  it('the leader owns its tool call made after the member team returned (leaked parent)', () => {
    const notifySpan = spans.find((s) => s.name === 'notify_customer')!;
    const researchSpan = spans.find((s) => s.name === 'Research_Team.run')!;
    expect(notifySpan.parentSpanId).toBe(researchSpan.spanId);
    expect(notifySpan.startTime).toBeGreaterThan(researchSpan.endTime!);

    const leader = findRun(traces, 'travel-desk');
    expect(leader.calls.map(callView)).toEqual(leaderTruth.tools.map(truthView));
    expect(findRun(traces, 'research-team').calls.map((c) => c.name)).not.toContain('notify_customer');
  });

  it('members scope holds the same calls as agno _collect_member_evidence', () => {
    const root = rootRuns(traces)[0]!;
    const key = (v: unknown) => JSON.stringify(v);
    expect(runUnion(root).map(callView).map(key).sort()).toEqual(
      truthUnion(leaderTruth).map(truthView).map(key).sort(),
    );
  });

  // Same cause as the leaked parent above: were notify_customer left in the Research Team
  // subtree, the pre-order union would put it after Research Team's delegate call.
  it('members scope follows agno order (leader first, then each member subtree)', () => {
    const root = rootRuns(traces)[0]!;
    expect(runUnion(root).map(callView)).toEqual(truthUnion(leaderTruth).map(truthView));
  });

  it('every tool function that ran is an execution, and nothing else', () => {
    const executed = allRuns(rootRuns(traces))
      .flatMap((r) => r.executions)
      .filter((e) => e.name !== 'delegate_task_to_member');
    expect(executed.map((e) => ({ name: e.name, args: e.args })).sort(byName)).toEqual(
      truth.executed.map((e) => ({ name: e.name, args: e.args })).sort(byName),
    );
  });
});

function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

describe('team_depth3_async: the same team through Team.arun', () => {
  const { traces, truth } = load('team_depth3_async');
  const leaderTruth = truth.runs[0]!;

  it('nests the runs like agno member_responses', () => {
    expect(traces).toHaveLength(1);
    expect(rootRuns(traces).map(treeOf)).toEqual([truthTreeOf(leaderTruth)]);
  });

  // The async path does not leak the member team's context: the leader's later LLM and
  // TOOL spans have the leader's span as parent, so ownership and order come out right.
  it('every run owns exactly its own calls, including the leader’s call after delegating', () => {
    const walk = (t: TruthRun): void => {
      expect(findRun(traces, t.id).calls.map(callView)).toEqual(t.tools.map(truthView));
      expect(findRun(traces, t.id).calls.map((c) => c.callId)).toEqual(t.tools.map((x) => x.tool_call_id));
      for (const m of t.members ?? []) walk(m);
    };
    walk(leaderTruth);
  });

  it('members scope follows agno _collect_member_evidence order', () => {
    expect(runUnion(rootRuns(traces)[0]!).map(callView)).toEqual(truthUnion(leaderTruth).map(truthView));
  });
});

describe('team_then_agent: a sync team run, then an unrelated agent on the same thread', () => {
  const { traces, truth, spans } = load('team_then_agent');
  const [teamTruth, agentTruth] = truth.runs;

  it('the member agent is nested under the team', () => {
    const helper = findRun(traces, 'helper-agent');
    expect(helper.parent?.agentId).toBe(teamTruth!.id);
    expect(helper.executions.map(callView)).toEqual(teamTruth!.members![0]!.tools.map(truthView));
  });

  // The same context leak as above: after team.run() returns, the team span stays current,
  // so the next, unrelated agent.run() is exported in the team's trace with
  // parentSpanId = Front_Desk.run, starting after that span ended and carrying no
  // graph.node.parent_id. agno's truth: two independent top-level runs.
  it('the unrelated agent is a separate root run, not a team member (leaked parent)', () => {
    const bookingSpan = spans.find((s) => s.name === 'Booking_Agent.run')!;
    const teamSpan = spans.find((s) => s.name === 'Front_Desk.run')!;
    expect(bookingSpan.parentSpanId).toBe(teamSpan.spanId);
    expect(bookingSpan.attributes['graph.node.parent_id']).toBeUndefined();

    const booking = findRun(traces, agentTruth!.id);
    expect(booking.parent).toBeUndefined();
    expect(rootRuns(traces).map((r) => r.agentId)).toEqual([teamTruth!.id, agentTruth!.id]);
    expect(findRun(traces, teamTruth!.id).children.map((c) => c.agentId)).toEqual(['helper-agent']);
  });

  it('the unrelated agent still owns its own tool call', () => {
    const booking = findRun(traces, agentTruth!.id);
    expect(booking.calls.map(callView)).toEqual(agentTruth!.tools.map(truthView));
  });
});

describe('history: second run of a session with add_history_to_context', () => {
  const { traces, truth } = load('history');
  const runTruth = truth.runs[0]!;
  const previous = truth.previous_run!.run;

  it('counts only this run’s tool call', () => {
    const run = findRun(traces, runTruth.id);
    expect(run.calls.map(callView)).toEqual(runTruth.tools.map(truthView));
    expect(run.calls.map((c) => c.callId)).toEqual(runTruth.tools.map((t) => t.tool_call_id));
    expect(run.requests.map((r) => r.callId)).toEqual(runTruth.tools.map((t) => t.tool_call_id));
  });

  it('keeps the replayed call from the first run in run.history', () => {
    const run = findRun(traces, runTruth.id);
    const replayed = previous.tools.map((t) => ({
      name: t.tool_name,
      callId: t.tool_call_id,
      args: t.tool_args,
    }));
    expect(run.history.map((h) => ({ name: h.name, callId: h.callId, args: h.args }))).toEqual(replayed);
    // agno marks these messages from_history (input.value JSON): the strongest evidence.
    expect(run.history.every((h) => h.reason === 'part_flag' || h.reason === 'input_messages')).toBe(true);
  });

  it('agno’s own messages say the same: one current request, one from history', () => {
    const current = runTruth.message_tool_calls.filter((m) => !m.from_history).map((m) => m.id);
    const replayed = runTruth.message_tool_calls.filter((m) => m.from_history).map((m) => m.id);
    const run = findRun(traces, runTruth.id);
    expect(run.calls.map((c) => c.callId)).toEqual(current);
    expect(replayed).toEqual(previous.tools.map((t) => t.tool_call_id));
    expect(run.history.map((h) => h.callId)).toEqual(replayed);
  });
});

describe('tool_error: a tool that raises', () => {
  const { traces, truth } = load('tool_error');
  const runTruth = truth.runs[0]!;

  it('the call is an error execution with agno’s error text', () => {
    const run = findRun(traces, runTruth.id);
    expect(run.calls.map(callView)).toEqual(runTruth.tools.map(truthView));
    const call = run.calls[0]!;
    expect(call.requestOnly).toBe(false);
    expect(call.errorMessage).toContain(truth.executed[0]!.args.invoice_id as string);
    expect(call.callId).toBe(runTruth.tools[0]!.tool_call_id);
  });

  it('the run itself completed (span OK) but has an error span', () => {
    const run = findRun(traces, runTruth.id);
    expect(runTruth.status).toBe('COMPLETED');
    expect(run.status).toBe(1);
    expect(run.hasErrorSpan).toBe(true);
  });
});

describe('paused: a requires_confirmation tool pauses the run', () => {
  const { traces, truth, spans } = load('paused');
  const runTruth = truth.runs[0]!;

  it('agno paused and nothing ran; the trace has no TOOL span at all', () => {
    expect(runTruth.is_paused).toBe(true);
    expect(truth.executed).toEqual([]);
    expect(spans.filter((s) => s.attributes['openinference.span.kind'] === 'TOOL')).toEqual([]);
  });

  it('the paused call is a request-only call with the requested name and args', () => {
    const run = findRun(traces, runTruth.id);
    expect(run.executions).toEqual([]);
    expect(run.calls).toHaveLength(1);
    const call = run.calls[0]!;
    expect(call.requestOnly).toBe(true);
    expect(call.name).toBe(runTruth.tools[0]!.tool_name);
    expect(call.args).toEqual(runTruth.tools[0]!.tool_args);
    expect(call.callId).toBe(runTruth.tools[0]!.tool_call_id);
    expect(call.status).not.toBe('ok');
  });

  // agno: ToolExecution.is_paused. Spans: the run span ends OK with no pause attribute; the
  // only signs are (a) the request is in the run's last LLM output and no later LLM span
  // answers it, (b) the run span's output.value is agno's fixed paused text
  // ("I have tools to execute, but I need confirmation.", agno/utils/response.py).
  it('the paused call is classified paused, not refused', () => {
    const run = findRun(traces, runTruth.id);
    expect(run.calls.map((c) => c.status)).toEqual(runTruth.tools.map(truthStatus));
  });
});

describe('paused_continued: confirm, then continue_run (a new trace)', () => {
  const { traces, truth } = load('paused_continued');
  const runTruth = truth.runs[0]!;

  it('the continuation has its own agent span (instrumentor 1.0.15 wraps _continue_run)', () => {
    expect(rootRuns(traces)).toHaveLength(1);
    const run = rootRuns(traces)[0]!;
    expect(run.agentId).toBe(runTruth.id);
    expect(run.attributes['agno.run.id']).toBe(truth.paused_run_id);
  });

  it('the confirmed call executed cleanly', () => {
    const run = rootRuns(traces)[0]!;
    expect(runTruth.tools[0]!.confirmed).toBe(true);
    expect(run.executions.map(callView)).toEqual(runTruth.tools.map(truthView));
    expect(run.calls.map(callView)).toEqual(runTruth.tools.map(truthView));
    expect(truth.executed.map((e) => e.name)).toEqual(['delete_file']);
  });

  // The request for the confirmed call was made before the pause, so in this trace it only
  // appears in the continuation LLM span's input (input.value message with
  // "from_history": false, tool_calls[0].id = call id, plus llm.input_messages.1.*), and no
  // TOOL span carries an id. It must join the execution, not become history (docs/semantics.md
  // rule 4: an input call is history only when its id or name+args match no execution).
  it('the pre-pause request is joined to the execution, not listed as history', () => {
    const run = rootRuns(traces)[0]!;
    expect(run.history).toEqual([]);
    expect(run.calls.map((c) => c.callId)).toEqual(runTruth.tools.map((t) => t.tool_call_id));
  });
});

describe('multi_step: two tool calls in sequence', () => {
  const { traces, truth } = load('multi_step');
  const runTruth = truth.runs[0]!;

  it('both executions, in order, with their args and request ids', () => {
    const run = findRun(traces, runTruth.id);
    expect(run.calls.map(callView)).toEqual(runTruth.tools.map(truthView));
    expect(run.calls.map((c) => c.callId)).toEqual(runTruth.tools.map((t) => t.tool_call_id));
    expect(run.calls.every((c) => c.argsSource === 'span' && !c.requestOnly)).toBe(true);
    expect(run.history).toEqual([]);
  });

  it('the requests are joined to the executions', () => {
    const run = findRun(traces, runTruth.id);
    expect(run.requests.map((r) => r.execution?.spanId)).toEqual(run.executions.map((e) => e.spanId));
  });
});

describe('paused_rejected: reject(), then continue_run (a new trace)', () => {
  const { traces, truth, spans } = load('paused_rejected');
  const runTruth = truth.runs[0]!;

  it('agno records an errored execution that never ran; the trace has no TOOL span', () => {
    expect(runTruth.tools.map(truthView)).toEqual([
      { name: 'delete_file', args: { path: '/etc/hosts' }, status: 'error' },
    ]);
    expect(runTruth.tools[0]!.confirmed).toBe(false);
    expect(truth.executed).toEqual([]);
    expect(spans.filter((s) => s.attributes['openinference.span.kind'] === 'TOOL')).toEqual([]);
  });

  // The continuation's only LLM span carries, in its input, the assistant request (call id,
  // from_history: false) and a role=tool result with tool_call_error: true and the
  // rejection note; no LLM output in this trace asked for it (that was the paused trace).
  // agno counts it as this run's call (same agno.run.id), errored.
  // Read as "unmatched input call" it would be history and a scorer would see no call at all;
  // agno marks every message in input.value with an explicit from_history, and false wins.
  it('the rejected call is this run’s failed call, not history', () => {
    const run = rootRuns(traces)[0]!;
    expect(run.attributes['agno.run.id']).toBe(truth.paused_run_id);
    expect(run.history.map((h) => h.callId)).not.toContain(runTruth.tools[0]!.tool_call_id);
    expect(run.calls.map((c) => ({ name: c.name, args: c.args, callId: c.callId }))).toEqual([
      { name: 'delete_file', args: { path: '/etc/hosts' }, callId: runTruth.tools[0]!.tool_call_id },
    ]);
    expect(['refused', 'error']).toContain(run.calls[0]!.status);
  });

  // agno keeps a ToolExecution (confirmed=False, tool_call_error) for it, so
  // its scorers read it as an errored execution, not as a request refused before it ran.
  it('the rejection is told from a refusal: the request is marked rejected, with the person’s note', () => {
    const call = rootRuns(traces)[0]!.calls[0]!;
    expect(call.request?.rejected).toBe(true);
    expect(call.errorMessage).toBe('Not allowed to touch /etc');
  });
});

describe('tool_call_limit: two calls in one turn, tool_call_limit=1', () => {
  const { traces, truth } = load('tool_call_limit');
  const runTruth = truth.runs[0]!;

  it('agno ran one call and kept only the request of the other', () => {
    expect(runTruth.tools.map((t) => t.tool_call_id)).toHaveLength(1);
    expect(runTruth.message_tool_calls).toHaveLength(2);
    expect(truth.executed.map((e) => e.args)).toEqual([{ city: 'Paris' }]);
  });

  it('the executed call is ok and the refused one is request-only', () => {
    const run = findRun(traces, runTruth.id);
    const byId = [...run.calls].sort((a, b) => (a.callId! < b.callId! ? -1 : 1));
    expect(byId.map((c) => ({ callId: c.callId, status: c.status, requestOnly: c.requestOnly }))).toEqual([
      { callId: runTruth.tools[0]!.tool_call_id, status: 'ok', requestOnly: false },
      { callId: runTruth.message_tool_calls[1]!.id, status: 'refused', requestOnly: true },
    ]);
    expect(run.history).toEqual([]);
  });

  // Both requests come from one LLM output (index 0 Paris, index 1 Rome); agno ran index 0
  // and refused index 1. Timing the request-only call at its LLM span's end would put Rome
  // before Paris (the TOOL span starts later), so order-based scorers would see the model's
  // order reversed: request-only calls keep their position among the requests of the output.
  it('the calls keep the model’s request order', () => {
    const run = findRun(traces, runTruth.id);
    const executedId = runTruth.tools[0]!.tool_call_id;
    const refused = runTruth.message_tool_calls.find((m) => m.id !== executedId)!;
    expect(
      run.calls.map((c) => ({
        callId: c.callId,
        name: c.name,
        args: c.args,
        status: c.status,
        requestOnly: c.requestOnly,
      })),
    ).toEqual([
      { callId: executedId, name: 'get_weather', args: { city: 'Paris' }, status: 'ok', requestOnly: false },
      {
        callId: refused.id,
        name: 'get_weather',
        args: JSON.parse(refused.arguments),
        status: 'refused',
        requestOnly: true,
      },
    ]);
    expect(run.history).toEqual([]);
  });

  it('the refusal text from the next LLM input is kept on the request', () => {
    const run = findRun(traces, runTruth.id);
    const refused = run.calls.find((c) => c.requestOnly)!;
    expect(refused.request?.refusal ?? refused.errorMessage).toContain('Tool call limit reached');
    // agno's result for it also says tool_call_error=True, but nothing was paused: not a rejection.
    expect(refused.request?.rejected).toBeUndefined();
  });
});

describe('unknown_tool: a misspelled tool, then a retry', () => {
  const { traces, truth } = load('unknown_tool');
  const runTruth = truth.runs[0]!;

  it('agno keeps no ToolExecution for the unknown name, only its request', () => {
    expect(runTruth.tools.map((t) => t.tool_name)).toEqual(['get_weather']);
    expect(runTruth.message_tool_calls.map((m) => m.name)).toEqual(['get_wether', 'get_weather']);
  });

  it('the unknown call is request-only and refused with agno’s text, then the retry ran', () => {
    const run = findRun(traces, runTruth.id);
    const [bad, good] = runTruth.message_tool_calls;
    expect(
      run.calls.map((c) => ({
        callId: c.callId,
        name: c.name,
        status: c.status,
        requestOnly: c.requestOnly,
      })),
    ).toEqual([
      { callId: bad!.id, name: 'get_wether', status: 'refused', requestOnly: true },
      { callId: good!.id, name: 'get_weather', status: 'ok', requestOnly: false },
    ]);
    expect(run.calls[0]!.args).toEqual(JSON.parse(bad!.arguments));
    expect(run.calls[0]!.request?.refusal).toContain('requested tool does not exist');
  });
});

describe('invalid_args: arguments that are not JSON, then a retry', () => {
  const { traces, truth } = load('invalid_args');
  const runTruth = truth.runs[0]!;

  it('the unparseable call is request-only with its raw text and a parse error kept', () => {
    const run = findRun(traces, runTruth.id);
    const [bad, good] = runTruth.message_tool_calls;
    expect(
      run.calls.map((c) => ({ callId: c.callId, status: c.status, requestOnly: c.requestOnly })),
    ).toEqual([
      { callId: bad!.id, status: 'refused', requestOnly: true },
      { callId: good!.id, status: 'ok', requestOnly: false },
    ]);
    const refused = run.calls[0]!;
    expect(refused.args).toBeUndefined();
    expect(refused.argsRaw).toBe(bad!.arguments);
    expect(typeof refused.argsError).toBe('string');
    expect(refused.request?.refusal).toContain('Error while decoding function arguments');
    expect(run.calls[1]!.args).toEqual(runTruth.tools[0]!.tool_args);
  });
});

describe('multi_step_stream: run(stream=True)', () => {
  const { traces, truth, spans } = load('multi_step_stream');
  const runTruth = truth.runs[0]!;

  it('LLM spans are invoke_stream spans and still carry the requests', () => {
    expect(spans.filter((s) => s.name.endsWith('.invoke_stream'))).toHaveLength(3);
    const run = findRun(traces, runTruth.id);
    expect(run.requests.map((r) => r.callId)).toEqual(runTruth.tools.map((t) => t.tool_call_id));
  });

  it('both executions, in order, with their args and request ids', () => {
    const run = findRun(traces, runTruth.id);
    expect(run.calls.map(callView)).toEqual(runTruth.tools.map(truthView));
    expect(run.calls.map((c) => c.callId)).toEqual(runTruth.tools.map((t) => t.tool_call_id));
  });
});

describe('masked: TraceConfig(hide_inputs, hide_outputs)', () => {
  const { traces, truth, spans } = load('masked');
  const runTruth = truth.runs[0]!;

  it('inputs and outputs are redacted; tool.name and tool.parameters are not', () => {
    for (const s of spans) {
      expect(s.attributes['input.value']).toBe('__REDACTED__');
      expect(Object.keys(s.attributes).some((k) => k.startsWith('llm.output_messages.'))).toBe(false);
    }
    expect(spans.filter((s) => typeof s.attributes['tool.parameters'] === 'string')).toHaveLength(2);
  });

  it('executions keep name, args and status; no request carries a call id', () => {
    const run = findRun(traces, runTruth.id);
    expect(run.executions.map(callView)).toEqual(runTruth.tools.map(truthView));
    expect(run.requests).toEqual([]);
    expect(run.executions.map((e) => e.callId)).toEqual([undefined, undefined]);
    expect(run.hasErrorSpan).toBe(true);
  });

  // Gap, not a reconstruction bug: agno refused book_flight (tool_call_limit=2), and with
  // llm.output_messages hidden nothing in the trace shows the request, so it is not a call.
  it('the limit-refused request is invisible', () => {
    expect(runTruth.message_tool_calls.map((m) => m.name)).toContain('book_flight');
    const run = findRun(traces, runTruth.id);
    expect(run.calls.map((c) => c.name)).not.toContain('book_flight');
  });
});

// ---------------------------------------------------------------------------------------
// Differential: agno 3.1.10's own ReliabilityEval and ToolCallScorer ran on the RunOutput of
// each recorded run (record.py, agno_evals); toolwatch's scorers run on the reconstructed run.

/**
 * Verdicts known to differ, keyed `scenario#run#eval-index`, each with the reason. They run
 * as `it.fails`, so a fix shows up as a failing test here.
 */
const MASKED_NOTE =
  'trace gap: agno lists the limit-refused book_flight request (message-side, R6) in failed/additional ' +
  'tool calls; with hide_outputs the trace has no llm.output_messages, so toolwatch cannot see it.';

const KNOWN_DIFFERENCES: Record<string, string> = {
  'masked#0#0': MASKED_NOTE,
  'masked#0#1': MASKED_NOTE,
  'masked#0#2': MASKED_NOTE,
  'masked#0#3': MASKED_NOTE,
  'masked#0#4': MASKED_NOTE,
  'masked#0#5': MASKED_NOTE,
};

describe('agno ReliabilityEval / ToolCallScorer vs toolwatch on the same runs', () => {
  for (const scenario of SCENARIOS) {
    const { traces, truth } = load(scenario);
    truth.runs.forEach((runTruth, runIndex) => {
      (runTruth.agno_evals ?? []).forEach((ev, evalIndex) => {
        const key = `${scenario}#${runIndex}#${evalIndex}`;
        const title = `${key} ${ev.kind} ${JSON.stringify(ev.config)}`;
        const test = KNOWN_DIFFERENCES[key] ? it.fails : it;
        test(title, () => {
          const run = findRun(traces, runTruth.id);
          if (ev.kind === 'reliability') {
            const scorer = reliability({
              expectedToolCalls: ev.config.expected_tool_calls ?? null,
              allowAdditionalToolCalls: ev.config.allow_additional_tool_calls ?? false,
              expectedToolCallArguments: ev.config.expected_tool_call_arguments ?? null,
            });
            const result = scorer.score(run) as { passed: boolean; detail: Record<string, unknown> };
            const d = result.detail;
            expect({
              eval_status: d.eval_status,
              failed_tool_calls: d.failed_tool_calls,
              passed_tool_calls: d.passed_tool_calls,
              additional_tool_calls: d.additional_tool_calls,
              missing_tool_calls: d.missing_tool_calls,
              failed_argument_checks: d.failed_argument_checks,
              passed_argument_checks: d.passed_argument_checks,
            }).toEqual(ev.result);
            expect(result.passed).toBe(ev.result.eval_status === 'PASSED');
          } else {
            const scorer = toolCalls({
              expectedTools: ev.config.expected_tools,
              arguments: ev.config.arguments ?? null,
              allowAdditional: ev.config.allow_additional,
            });
            const result = scorer.score(run) as { passed: boolean; score: number; reason: string | null };
            expect({ value: result.score, passed: result.passed, reason: result.reason }).toEqual(ev.result);
            expect(scorer.digest).toBe(ev.digest);
          }
        });
      });
    });
  }
});
