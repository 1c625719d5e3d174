import { ROOT_CONTEXT, type Span } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { fromReadableSpan } from '../../src/conventions/from-readable-span.js';
import { evaluateTraces } from '../../src/evaluation/evaluate-traces.js';
import { ToolwatchGateway } from '../../src/gateway/toolwatch-gateway.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { reconstructTrace } from '../../src/reconstruction/reconstruct-trace.js';
import { agnoEvidence } from '../../src/scorers/agno-evidence.js';
import { trajectory } from '../../src/scorers/trajectory.js';
import type { GuardMode, MisuseEvent, Policy, ToolCallDecision, Verdict } from '../../src/types.js';
import { protobufOf } from '../gateway/helpers.js';
import { spansToOtlpJson } from '../interop/harness/spans-to-otlp-json.js';
import { createMetrics, pointValue } from '../processor/harness.js';
import { inside, pipeline, startAgent, startTool } from '../processor/tracing.js';

function policyWith(
  mode: GuardMode | undefined,
  extra: Partial<Parameters<typeof trajectory>[0]> = {},
): Policy {
  return definePolicy({
    rules: [
      {
        name: 'refunds',
        match: { agent: 'refund-bot' },
        ...(mode ? { guard: { mode } } : {}),
        scorers: [
          trajectory({
            expectedTools: ['get_order', 'submit_refund', 'delete_account_check'],
            forbiddenTools: ['delete_account'],
            maxCalls: 3,
            maxRepeats: 1,
            argConstraints: { submit_refund: { amount: { lte: 100 } } },
            ...extra,
          }),
        ],
      },
    ],
  });
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

function setup(policy: Policy, options: { guardFailure?: 'allow' | 'deny'; onMisuseThrows?: boolean } = {}) {
  const metrics = createMetrics();
  const misuse: MisuseEvent[] = [];
  const verdicts: Verdict[] = [];
  const p = pipeline({
    policy,
    meterProvider: metrics.meterProvider,
    onVerdict: (v) => verdicts.push(v),
    onMisuse: (m) => {
      misuse.push(m);
      if (options.onMisuseThrows) throw new Error('callback broke');
    },
    ...(options.guardFailure ? { guardFailure: options.guardFailure } : {}),
  });
  cleanups.push(
    () => p.provider.shutdown(),
    () => metrics.shutdown(),
  );
  const guarded = misuse.filter.bind(misuse, (m) => m.blocked !== undefined);
  return { ...p, metrics, misuse, guarded, verdicts };
}

/** A tool call the way the AI SDK runs one: the span opens, then `execute` asks the guard inside it. */
function callInsideSpan(
  s: ReturnType<typeof setup>,
  agent: Span,
  tool: string,
  args: unknown = {},
): { decision: ToolCallDecision; span: Span } {
  const span = startTool(s.tracer, tool, agent, args);
  const decision = s.processor.checkToolCall({ tool, arguments: args }, inside(span));
  span.setAttribute(
    'gen_ai.tool.call.result',
    decision.allowed ? '{"ok":true}' : decision.reasons.join('; '),
  );
  span.end();
  return { decision, span };
}

async function guardCount(s: ReturnType<typeof setup>, match: Record<string, string>): Promise<unknown> {
  return pointValue((await s.metrics.collect()).get('toolwatch.tool.guard.decisions'), match);
}

function byId(spans: readonly ReadableSpan[], span: Span): ReadableSpan {
  return spans.find((x) => x.spanContext().spanId === span.spanContext().spanId)!;
}

function runOf(spans: readonly ReadableSpan[]) {
  return reconstructTrace(spans.map(fromReadableSpan)).runs[0]!;
}

/** The verdict in process, offline on the exported spans, and in the gateway on the same spans. */
async function sameEverywhere(policy: Policy, spans: readonly ReadableSpan[], inProcess: Verdict[]) {
  const offline = await evaluateTraces(spansToOtlpJson(spans), policy);
  expect(offline).toEqual(inProcess);
  let now = 0;
  const gateway = new ToolwatchGateway({ policy, decisionWaitMs: 100, now: () => now });
  gateway.ingest(protobufOf([...spans]), 'http');
  for (let i = 0; i < 3; i++) {
    now += 1000;
    await gateway.tick();
  }
  for (const verdict of inProcess) {
    for (const result of verdict.results) {
      const labels = {
        'gen_ai.evaluation.name': result.scorer,
        'gen_ai.evaluation.score.label': result.label,
        'gen_ai.agent.name': verdict.agent,
        'toolwatch.rule': verdict.rule,
      };
      expect(gateway.registry.value('toolwatch_evaluations_total', labels)).toBe(1);
    }
  }
  // The gateway counts misuse from the verdict's errors: one forbidden tool, as in process.
  const forbidden = inProcess[0]!.results[0]!.detail.errors as Array<{ code: string }>;
  expect(
    gateway.registry.value('toolwatch_tool_misuse_total', {
      'toolwatch.misuse.kind': 'forbidden',
      'gen_ai.tool.name': 'delete_account',
      'gen_ai.agent.name': 'refund-bot',
      'toolwatch.rule': 'refunds',
    }),
  ).toBe(forbidden.filter((e) => e.code === 'forbidden_tool').length);
  await gateway.close(100);
  return offline;
}

describe('checkToolCall inside the tool span (AI SDK, OpenAI Agents)', () => {
  it('refuses a forbidden tool; the trace shows a refused call that never ran, in process, offline and in the gateway', async () => {
    const policy = policyWith('enforce');
    const s = setup(policy);
    const agent = startAgent(s.tracer, 'refund-bot');
    expect(callInsideSpan(s, agent, 'get_order', { id: 1 }).decision.allowed).toBe(true);
    const { decision, span } = callInsideSpan(s, agent, 'delete_account', { user: 7 });
    expect(decision).toEqual({
      allowed: false,
      decision: 'deny',
      enforced: true,
      reasons: ['tool delete_account is forbidden (rule refunds)'],
      rule: 'refunds',
      kind: 'forbidden',
    });
    agent.end();
    const spans = await s.flush();

    // The tool span carries the decision, and the proposed pre-execution decision event.
    const tool = spans.find((x) => x.spanContext().spanId === span.spanContext().spanId)!;
    expect(tool.attributes).toMatchObject({
      'toolwatch.guard.decision': 'deny',
      'toolwatch.guard.enforced': true,
      'toolwatch.guard.rule': 'refunds',
      'toolwatch.guard.kind': 'forbidden',
      'toolwatch.guard.reason': 'tool delete_account is forbidden (rule refunds)',
    });
    expect(tool.events.map((e) => [e.name, e.attributes])).toEqual([
      [
        'gen_ai.tool.call.decision',
        { 'gen_ai.tool.call.decision.outcome': 'deny', 'gen_ai.tool.name': 'delete_account' },
      ],
    ]);

    // Reconstruction: refused, request-only, not an agno execution.
    const run = runOf(spans);
    expect(run.calls.map((c) => [c.name, c.status, c.requestOnly])).toEqual([
      ['get_order', 'ok', false],
      ['delete_account', 'refused', true],
    ]);
    expect(run.calls[1]!.errorMessage).toBe('tool delete_account is forbidden (rule refunds)');
    expect(agnoEvidence(run, 'members').executions.map((e) => e.name)).toEqual(['get_order']);

    // The verdict counts it refused, never executed; the same verdict offline and in the gateway.
    expect(s.verdicts).toHaveLength(1);
    const errors = s.verdicts[0]!.results[0]!.detail.errors as Array<{ code: string; message: string }>;
    expect(errors.find((e) => e.code === 'forbidden_tool')!.message).toBe(
      'forbidden tool delete_account was requested but not executed (1 request)',
    );
    await sameEverywhere(policy, spans, s.verdicts);

    // onMisuse: the guard's decision, blocked.
    expect(s.guarded()).toEqual([
      expect.objectContaining({
        kind: 'forbidden',
        tool: 'delete_account',
        agent: 'refund-bot',
        rule: 'refunds',
        span_id: span.spanContext().spanId,
        trace_id: span.spanContext().traceId,
        blocked: true,
        detail: { reasons: ['tool delete_account is forbidden (rule refunds)'], enforced: true },
      }),
    ]);
    const match = { 'gen_ai.tool.name': 'delete_account', 'gen_ai.agent.name': 'refund-bot' };
    expect(
      await guardCount(s, {
        ...match,
        'toolwatch.guard.decision': 'deny',
        'toolwatch.guard.kind': 'forbidden',
        'toolwatch.rule': 'refunds',
      }),
    ).toBe(1);
    expect(
      await guardCount(s, {
        'gen_ai.tool.name': 'get_order',
        'toolwatch.guard.decision': 'allow',
        'toolwatch.guard.kind': '',
      }),
    ).toBe(1);
  });

  it('counts calls still running against max_calls, not the call being decided', () => {
    const s = setup(policyWith('enforce'));
    const agent = startAgent(s.tracer, 'refund-bot');
    // Parallel calls: each span opens, its guard runs, none has ended yet.
    const open: Span[] = [];
    const decisions: boolean[] = [];
    for (let i = 0; i < 4; i++) {
      const span = startTool(s.tracer, 'get_order', agent, { id: i });
      decisions.push(
        s.processor.checkToolCall({ tool: 'get_order', arguments: { id: i } }, inside(span)).allowed,
      );
      open.push(span);
    }
    expect(decisions).toEqual([true, true, true, false]);
    for (const span of open) span.end();
    // Ended calls count the same: a fifth is over budget too.
    expect(s.processor.checkToolCall({ tool: 'get_order', arguments: { id: 9 } }, inside(agent)).kind).toBe(
      'call_budget',
    );
    agent.end();
  });

  it('counts a call once when it has ended: three calls in turn run, the fourth is refused', () => {
    const s = setup(policyWith('enforce'));
    const agent = startAgent(s.tracer, 'refund-bot');
    const allowed = [1, 2, 3, 4].map((id) => callInsideSpan(s, agent, 'get_order', { id }).decision.allowed);
    expect(allowed).toEqual([true, true, true, false]);
    agent.end();
  });

  it('a tool span of another tool is not the call decided: the refusal gets a span of its own', async () => {
    const s = setup(policyWith('enforce'));
    const agent = startAgent(s.tracer, 'refund-bot');
    const outer = startTool(s.tracer, 'get_order', agent, { id: 1 });
    // The tool's code asks for another tool, which has no span of its own.
    expect(s.processor.checkToolCall({ tool: 'delete_account' }, inside(outer)).allowed).toBe(false);
    outer.end();
    agent.end();
    const spans = await s.flush();
    expect(byId(spans, outer).attributes['toolwatch.guard.decision']).toBeUndefined();
    const own = spans.find((x) => x.name === 'execute_tool delete_account')!;
    expect(own.parentSpanContext?.spanId).toBe(outer.spanContext().spanId);
    expect(runOf(spans).calls.map((c) => [c.name, c.status])).toEqual([
      ['get_order', 'ok'],
      ['delete_account', 'refused'],
    ]);
  });

  it('a refusal by an enclosing run wins over an inner run that only observes', () => {
    const policy = definePolicy({
      rules: [
        {
          name: 'inner',
          match: { agent: 'billing', rootOnly: false },
          guard: { mode: 'observe' },
          scorers: [trajectory({ forbiddenTools: ['refund'] })],
        },
        {
          name: 'outer',
          match: { agent: 'team' },
          guard: { mode: 'enforce' },
          scorers: [trajectory({ forbiddenTools: ['refund'] })],
        },
      ],
    });
    const s = setup(policy);
    const team = startAgent(s.tracer, 'team');
    const billing = startAgent(s.tracer, 'billing', team);
    expect(s.processor.checkToolCall({ tool: 'refund' }, inside(billing))).toMatchObject({
      allowed: false,
      rule: 'outer',
    });
    billing.end();
    team.end();
  });

  it('refuses an identical call past max_repeats, and arguments that break arg_constraints', () => {
    const s = setup(policyWith('enforce', { maxCalls: 10 }));
    const agent = startAgent(s.tracer, 'refund-bot');
    expect(callInsideSpan(s, agent, 'get_order', { id: 1 }).decision.allowed).toBe(true);
    expect(callInsideSpan(s, agent, 'get_order', { id: 1 }).decision).toMatchObject({
      allowed: false,
      kind: 'repeated_call',
    });
    expect(callInsideSpan(s, agent, 'submit_refund', { amount: 50 }).decision.allowed).toBe(true);
    expect(callInsideSpan(s, agent, 'submit_refund', { amount: 500 }).decision).toMatchObject({
      allowed: false,
      kind: 'arguments',
      reasons: ['submit_refund.amount failed lte (rule refunds)'],
    });
    agent.end();
  });

  it('observe mode records "would deny" on the span and lets the call run', async () => {
    const policy = policyWith('observe');
    const s = setup(policy);
    const agent = startAgent(s.tracer, 'refund-bot');
    const { decision, span } = callInsideSpan(s, agent, 'delete_account');
    expect(decision).toMatchObject({ allowed: true, decision: 'deny', enforced: false, kind: 'forbidden' });
    agent.end();
    const spans = await s.flush();
    const tool = spans.find((x) => x.spanContext().spanId === span.spanContext().spanId)!;
    expect(tool.attributes).toMatchObject({
      'toolwatch.guard.decision': 'deny',
      'toolwatch.guard.enforced': false,
    });
    expect(tool.events[0]!.attributes!['gen_ai.tool.call.decision.outcome']).toBe('allow');
    // It ran: an execution of the run.
    expect(runOf(spans).calls.map((c) => [c.name, c.status, c.requestOnly])).toEqual([
      ['delete_account', 'ok', false],
    ]);
    expect(s.guarded()).toEqual([expect.objectContaining({ kind: 'forbidden', blocked: false })]);
    expect(
      await guardCount(s, { 'toolwatch.guard.decision': 'would_deny', 'gen_ai.tool.name': 'delete_account' }),
    ).toBe(1);
    await sameEverywhere(policy, spans, s.verdicts);
  });

  it('a rule without guard decides deny and never blocks', () => {
    const s = setup(policyWith(undefined));
    const agent = startAgent(s.tracer, 'refund-bot');
    expect(callInsideSpan(s, agent, 'delete_account').decision).toMatchObject({
      allowed: true,
      decision: 'deny',
      enforced: false,
    });
    agent.end();
  });
});

describe('checkToolCall before any tool span (LangChain wrapToolCall)', () => {
  it('refuses with a span of its own that the verdict counts refused, in process, offline and in the gateway', async () => {
    const policy = policyWith('enforce');
    const s = setup(policy);
    const agent = startAgent(s.tracer, 'refund-bot');
    const decision = s.processor.checkToolCall(
      { tool: 'delete_account', arguments: { user: 7 } },
      inside(agent),
    );
    expect(decision.allowed).toBe(false);
    agent.end();
    const spans = await s.flush();
    const own = spans.find((x) => x.name === 'execute_tool delete_account')!;
    expect(own.parentSpanContext?.spanId).toBe(agent.spanContext().spanId);
    expect(own.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'delete_account',
      'gen_ai.tool.call.arguments': '{"user":7}',
      'toolwatch.guard.decision': 'deny',
      'toolwatch.guard.enforced': true,
    });
    const run = runOf(spans);
    expect(run.calls.map((c) => [c.name, c.status, c.requestOnly, c.args])).toEqual([
      ['delete_account', 'refused', true, { user: 7 }],
    ]);
    expect(s.guarded()).toEqual([
      expect.objectContaining({ blocked: true, span_id: own.spanContext().spanId }),
    ]);
    await sameEverywhere(policy, spans, s.verdicts);
    // The refused call counts as a call: the budget holds across refusals too.
    expect(s.verdicts[0]!.results[0]!.detail.calls).toBe(1);
  });

  it('an observed denial before the tool span is an event on the active span; no extra call', async () => {
    const s = setup(policyWith('observe'));
    const agent = startAgent(s.tracer, 'refund-bot');
    expect(s.processor.checkToolCall({ tool: 'delete_account' }, inside(agent)).allowed).toBe(true);
    agent.end();
    const spans = await s.flush();
    expect(spans.map((x) => x.name)).toEqual(['invoke_agent refund-bot']);
    expect(spans[0]!.events.map((e) => [e.name, e.attributes!['toolwatch.guard.enforced']])).toContainEqual([
      'gen_ai.tool.call.decision',
      false,
    ]);
    expect(runOf(spans).calls).toEqual([]);
  });
});

describe('checkToolCall: which run, and never throwing', () => {
  it('allows a call with no agent run in the context, and counts it', async () => {
    const s = setup(policyWith('enforce'));
    expect(s.processor.checkToolCall({ tool: 'delete_account' }, ROOT_CONTEXT)).toEqual({
      allowed: true,
      decision: 'allow',
      enforced: false,
      reasons: [],
    });
    const other = startAgent(s.tracer, 'chat-bot');
    expect(s.processor.checkToolCall({ tool: 'delete_account' }, inside(other)).allowed).toBe(true);
    other.end();
    expect(await guardCount(s, { 'toolwatch.guard.decision': 'allow', 'gen_ai.agent.name': '' })).toBe(2);
  });

  it('judges against the run of the active context by default, and the named agent when given', () => {
    const policy = definePolicy({
      rules: [
        {
          name: 'members',
          match: { agent: 'billing', rootOnly: false },
          guard: { mode: 'enforce' },
          scorers: [trajectory({ forbiddenTools: ['refund'] })],
        },
      ],
    });
    const s = setup(policy);
    const team = startAgent(s.tracer, 'team');
    const billing = startAgent(s.tracer, 'billing', team);
    expect(s.processor.checkToolCall({ tool: 'refund' }, inside(billing)).allowed).toBe(false);
    // A span below the member (an ordinary span the framework made): still the member's run.
    const step = s.tracer.startSpan('step', {}, inside(billing));
    expect(s.processor.checkToolCall({ tool: 'refund' }, inside(step)).allowed).toBe(false);
    step.end();
    expect(s.processor.checkToolCall({ tool: 'refund' }, inside(team)).allowed).toBe(true);
    expect(s.processor.checkToolCall({ tool: 'refund', agent: 'team' }, inside(billing)).allowed).toBe(true);
    expect(s.processor.checkToolCall({ tool: 'refund', agent: 'nobody' }, inside(billing)).allowed).toBe(
      true,
    );
    billing.end();
    team.end();
  });

  it('works on runs out of the sample (the live state follows them too)', () => {
    const policy = definePolicy({
      sampling: { ratio: 0 },
      rules: [{ name: 'r', guard: {}, scorers: [trajectory({ forbiddenTools: ['x'], maxCalls: 1 })] }],
    });
    const s = setup(policy);
    const agent = startAgent(s.tracer, 'a');
    expect(callInsideSpan(s, agent, 'y').decision.allowed).toBe(true);
    expect(callInsideSpan(s, agent, 'y').decision.kind).toBe('call_budget');
    expect(s.processor.checkToolCall({ tool: 'x' }, inside(agent)).kind).toBe('forbidden');
    agent.end();
  });

  it('never throws: a bad call or a throwing onMisuse answers with the failure option', async () => {
    const s = setup(policyWith('enforce'), { onMisuseThrows: true });
    const agent = startAgent(s.tracer, 'refund-bot');
    for (const bad of [null, {}, { tool: '' }, { tool: 42 }, 'delete_account']) {
      const decision = s.processor.checkToolCall(bad as never, inside(agent));
      expect(decision).toMatchObject({ allowed: true, decision: 'allow' });
      expect(decision.reasons).toEqual(['the toolwatch guard failed; see the application log']);
    }
    // onMisuse throws: the decision stands.
    expect(s.processor.checkToolCall({ tool: 'delete_account' }, inside(agent)).allowed).toBe(false);
    expect(await guardCount(s, { 'toolwatch.guard.decision': 'error' })).toBe(5);
    agent.end();

    const closed = setup(policyWith('enforce'), { guardFailure: 'deny' });
    const other = startAgent(closed.tracer, 'refund-bot');
    expect(closed.processor.checkToolCall({ tool: 7 } as never, inside(other))).toMatchObject({
      allowed: false,
      decision: 'deny',
      enforced: true,
    });
    other.end();
  });

  it('allows everything after shutdown and for a policy without rules that can deny', async () => {
    const s = setup(
      definePolicy({ rules: [{ name: 'r', scorers: [{ kind: 'tool_order', expected_tool: 'a' }] }] }),
    );
    const agent = startAgent(s.tracer, 'refund-bot');
    expect(s.processor.checkToolCall({ tool: 'anything' }, inside(agent)).allowed).toBe(true);
    agent.end();
    const t = setup(policyWith('enforce'));
    await t.processor.shutdown();
    const late = startAgent(t.tracer, 'refund-bot');
    expect(t.processor.checkToolCall({ tool: 'delete_account' }, inside(late)).allowed).toBe(true);
    late.end();
  });
});
