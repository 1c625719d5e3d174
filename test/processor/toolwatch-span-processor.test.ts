import { context, diag, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AlwaysOffSampler, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { trajectory } from '../../src/scorers/trajectory.js';
import type { MisuseEvent, Verdict } from '../../src/types.js';
import { createMetrics, fakeScorer, pointValue, policyOf } from './harness.js';
import {
  byName,
  evaluationEvents,
  inside,
  pipeline,
  startAgent,
  startPlain,
  startTool,
  tool,
} from './tracing.js';

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('ToolwatchSpanProcessor', () => {
  describe('verdict on the agent span', () => {
    it.each([
      ['before', 'simple'],
      ['after', 'simple'],
      ['before', 'batch'],
      ['after', 'batch'],
    ] as const)('is exported with toolwatch %s a %s processor', async (order, exporting) => {
      const verdicts: Verdict[] = [];
      const policy = policyOf([
        {
          name: 'refunds',
          match: { agent: 'refund-*', rootOnly: true },
          scorers: [
            fakeScorer({ name: 'has_calls' }),
            fakeScorer({ name: 'lookup_first', judge: (run) => run.executions[0]?.name === 'check_policy' }),
          ],
        },
      ]);
      const p = pipeline({ policy, order, exporting, onVerdict: (v) => verdicts.push(v) });
      const agent = startAgent(p.tracer, 'refund-agent');
      tool(p.tracer, 'get_order_detail', agent, { order_id: 'A1024' });
      tool(p.tracer, 'check_policy', agent);
      agent.end();
      const spans = await p.flush();
      const exported = byName(spans, 'invoke_agent refund-agent');
      expect(exported.attributes['toolwatch.evaluation.passed']).toBe(false);
      expect(exported.attributes['toolwatch.evaluation.failed']).toEqual(['lookup_first']);
      expect(exported.attributes['toolwatch.evaluation.rule']).toBe('refunds');
      expect(exported.attributes['toolwatch.evaluation.policy_digest']).toBe('policy-digest');
      expect(exported.attributes['toolwatch.keep']).toBe(true);
      const events = evaluationEvents(exported);
      expect(events.map((e) => e.attributes?.['gen_ai.evaluation.name'])).toEqual([
        'has_calls',
        'lookup_first',
      ]);
      expect(events[1]!.attributes?.['gen_ai.evaluation.score.label']).toBe('fail');
      expect(events[1]!.attributes?.['gen_ai.evaluation.explanation']).toBe(
        'calls: get_order_detail,check_policy',
      );
      // The verdict is stamped with the agent span's end, inside the span (no clock read per event).
      for (const event of events) expect(event.time).toEqual(exported.endTime);
      expect(verdicts).toHaveLength(1);
      expect(verdicts[0]!.agent).toBe('refund-agent');
      expect(verdicts[0]!.span_id).toBe(exported.spanContext().spanId);
      // No extra span: everything fitted on the agent span.
      expect(spans.filter((s) => s.name.startsWith('evaluate'))).toHaveLength(0);
      await p.provider.shutdown();
    });

    it('writes the first matching rule on the span and each further rule on its own evaluate span', async () => {
      const verdicts: Verdict[] = [];
      const policy = policyOf([
        { name: 'first', scorers: [fakeScorer({ name: 'a' })] },
        {
          name: 'second',
          match: { rootOnly: false },
          scorers: [fakeScorer({ name: 'b', judge: () => false })],
        },
      ]);
      for (const wrapping of [false, true]) {
        verdicts.length = 0;
        const p = pipeline({ policy, wrapping, onVerdict: (v) => verdicts.push(v) });
        const agent = startAgent(p.tracer, 'x');
        tool(p.tracer, 'lookup', agent);
        agent.end();
        const spans = await p.flush();
        const exported = byName(spans, 'invoke_agent x');
        expect(exported.attributes['toolwatch.evaluation.rule']).toBe('first');
        expect(evaluationEvents(exported).map((e) => e.attributes?.['gen_ai.evaluation.name'])).toEqual([
          'a',
        ]);
        const evaluate = byName(spans, 'evaluate x');
        expect(evaluate.attributes['toolwatch.evaluation.rule']).toBe('second');
        expect(evaluate.attributes['toolwatch.evaluation.passed']).toBe(false);
        expect(evaluationEvents(evaluate).map((e) => e.attributes?.['gen_ai.evaluation.name'])).toEqual([
          'b',
        ]);
        expect(verdicts.map((v) => v.rule)).toEqual(['first', 'second']);
        await p.provider.shutdown();
      }
    });

    it('keeps argument values out of explanations when the policy redacts values', async () => {
      const policy = policyOf([{ scorers: [fakeScorer({ name: 'picky', judge: () => false })] }], {
        redact: { values: true },
      });
      const p = pipeline({ policy });
      const agent = startAgent(p.tracer, 'a');
      tool(p.tracer, 'get_order_detail', agent, { order_id: 'SECRET-42' });
      agent.end();
      const [event] = evaluationEvents(byName(await p.flush(), 'invoke_agent a'));
      // The scorer's own reason names the calls; the redacted explanation carries only the label.
      expect(event!.attributes?.['gen_ai.evaluation.explanation']).toBe('fail');
      await p.provider.shutdown();
    });

    it('judges an agent under an HTTP root and leaves runs no rule matches alone', async () => {
      const scorer = fakeScorer({ name: 's' });
      const policy = policyOf([{ match: { agent: 'refund-agent', rootOnly: true }, scorers: [scorer] }]);
      const p = pipeline({ policy });
      const http = startPlain(p.tracer, 'GET /refund');
      const agent = startAgent(p.tracer, 'refund-agent', http);
      tool(p.tracer, 'get_order_detail', agent);
      agent.end();
      const other = startAgent(p.tracer, 'chit-chat', http);
      tool(p.tracer, 'weather', other);
      other.end();
      http.end();
      const spans = await p.flush();
      expect(byName(spans, 'invoke_agent refund-agent').attributes['toolwatch.evaluation.passed']).toBe(true);
      expect(
        byName(spans, 'invoke_agent chit-chat').attributes['toolwatch.evaluation.passed'],
      ).toBeUndefined();
      expect(scorer.seen.map((run) => run.agent)).toEqual(['refund-agent']);
      expect(scorer.seen[0]!.executions.map((e) => e.name)).toEqual(['get_order_detail']);
      // Everything released once the trace's agent spans ended.
      expect(p.processor['_buffer'].size).toBe(0);
      await p.provider.shutdown();
    });

    it('judges agents under a wrapper span and handoff targets when the wrapper ends', async () => {
      const scorer = fakeScorer({ name: 's' });
      const verdicts: Verdict[] = [];
      const p = pipeline({ policy: policyOf([{ scorers: [scorer] }]), onVerdict: (v) => verdicts.push(v) });
      const oi = (kind: string, extra: Record<string, unknown> = {}) => ({
        attributes: { 'openinference.span.kind': kind, ...extra },
      });
      // OpenAI Agents through OpenInference: a synthetic root, then the agents it ran.
      const workflow = p.tracer.startSpan('Agent workflow', oi('AGENT'));
      const triage = p.tracer.startSpan(
        'Triage',
        oi('AGENT', { 'graph.node.id': 'Triage' }),
        inside(workflow),
      );
      p.tracer
        .startSpan('classify', oi('TOOL', { 'tool.name': 'classify', 'input.value': '{}' }), inside(triage))
        .end();
      triage.end();
      const refunds = p.tracer.startSpan(
        'Refunds',
        oi('AGENT', { 'graph.node.id': 'Refunds', 'graph.node.parent_id': 'Triage' }),
        inside(workflow),
      );
      p.tracer
        .startSpan(
          'refund',
          oi('TOOL', { 'tool.name': 'refund', 'input.value': '{"id":1}' }),
          inside(refunds),
        )
        .end();
      refunds.end();
      expect(verdicts).toHaveLength(0);
      workflow.end();
      const spans = await p.flush();
      expect(verdicts.map((v) => v.agent)).toEqual(['Triage']);
      expect(scorer.seen[0]!.children.map((c) => c.agent)).toEqual(['Refunds']);
      const evaluate = byName(spans, 'evaluate Triage');
      expect(evaluate.parentSpanContext?.spanId).toBe(triage.spanContext().spanId);
      expect(evaluationEvents(evaluate)).toHaveLength(1);
      await p.provider.shutdown();
    });

    it('judges an implicit run (tools under chain spans, no agent span) when the chain ends', async () => {
      const scorer = fakeScorer({ name: 's' });
      const verdicts: Verdict[] = [];
      const p = pipeline({ policy: policyOf([{ scorers: [scorer] }]), onVerdict: (v) => verdicts.push(v) });
      const chain = (name: string, parent?: Parameters<typeof inside>[0]) =>
        p.tracer.startSpan(name, { attributes: { 'openinference.span.kind': 'CHAIN' } }, inside(parent));
      const graph = chain('LangGraph');
      const node = chain('tools', graph);
      p.tracer
        .startSpan(
          'search',
          {
            attributes: {
              'openinference.span.kind': 'TOOL',
              'tool.name': 'search',
              'input.value': '{"q":"x"}',
            },
          },
          inside(node),
        )
        .end();
      node.end();
      expect(verdicts).toHaveLength(0);
      graph.end();
      await p.flush();
      expect(verdicts).toHaveLength(1);
      expect(scorer.seen[0]!.implicit).toBe(true);
      expect(scorer.seen[0]!.executions.map((e) => e.name)).toEqual(['search']);
      await p.provider.shutdown();
    });

    it('judges the implicit run of tool calls under a model span outside every agent, as reconstruction does', async () => {
      // The outermost span holding the calls is the run, whatever it is: a model span at the
      // root (a chat call, a Mastra step) was not judged live, and a Mastra span typed
      // `agent_run` without Mastra's agent operation (an agent to the hot path, no run to
      // reconstruction) was judged as an agent in place of the span around it.
      const scorer = fakeScorer({ name: 's' });
      const verdicts: Verdict[] = [];
      const p = pipeline({ policy: policyOf([{ scorers: [scorer] }]), onVerdict: (v) => verdicts.push(v) });
      const mastraRun = { 'mastra.span.type': 'agent_run', 'gen_ai.agent.name': 'support' };
      const roots = [
        p.tracer.startSpan('chat model', { attributes: { 'gen_ai.operation.name': 'chat' } }),
        p.tracer.startSpan('step', { attributes: { 'mastra.span.type': 'model_step' } }),
        p.tracer.startSpan('agent.support', { attributes: mastraRun }),
      ];
      for (const root of roots) {
        tool(p.tracer, 'lookup', root);
        root.end();
      }
      const work = startPlain(p.tracer, 'work');
      const inner = p.tracer.startSpan('agent.billing', { attributes: mastraRun }, inside(work));
      tool(p.tracer, 'lookup', inner);
      inner.end();
      work.end();
      await p.flush();
      expect(verdicts.map((v) => [v.agent, v.span_id])).toEqual(
        [...roots, work].map((s) => [expect.any(String), s.spanContext().spanId]),
      );
      expect(scorer.seen.map((run) => [run.implicit, run.executions.map((e) => e.name)])).toEqual(
        [...roots, work].map(() => [true, ['lookup']]),
      );
      await p.provider.shutdown();
    });

    it('holds no ordinary span that sits under a held span, yet links agent-related spans through it', async () => {
      const scorer = fakeScorer({ name: 's' });
      const p = pipeline({ policy: policyOf([{ scorers: [scorer] }]) });
      const agent = startAgent(p.tracer, 'clerk');
      const held = () => p.processor['_buffer'].held as number;
      // Leaves under the agent and under a tool (HTTP, DB): never held.
      const lookup = startTool(p.tracer, 'lookup', agent);
      for (let i = 0; i < 5; i++) startPlain(p.tracer, `SELECT ${i}`, lookup).end();
      lookup.end();
      startPlain(p.tracer, 'GET /a', agent).end();
      expect(held()).toBe(2);
      // A tool under an ordinary span under the agent: that span is held once the tool starts.
      const http = startPlain(p.tracer, 'POST /mcp', agent);
      expect(held()).toBe(2);
      tool(p.tracer, 'through_http', http);
      expect(held()).toBe(4);
      http.end();
      // A tool under two ordinary spans: both held, the upper one from the lower one's start.
      const outer = startPlain(p.tracer, 'POST /gateway', agent);
      const inner = startPlain(p.tracer, 'POST /backend', outer);
      expect(held()).toBe(6);
      tool(p.tracer, 'through_two', inner);
      inner.end();
      outer.end();
      // An ordinary span under a tool that attributes set at its end make a tool span.
      const parent = startTool(p.tracer, 'outer_tool', agent);
      const late = startPlain(p.tracer, 'late', parent);
      late.setAttributes({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'late_tool' });
      late.end();
      parent.end();
      agent.end();
      await p.flush();
      expect(scorer.seen.map((run) => run.agent)).toEqual(['clerk']);
      expect(scorer.seen[0]!.executions.map((e) => e.name)).toEqual([
        'lookup',
        'through_http',
        'through_two',
        'outer_tool',
        'late_tool',
      ]);
      expect(p.processor['_buffer'].size).toBe(0);
      expect(held()).toBe(0);
      await p.provider.shutdown();
    });

    // In-process propagation (`trace.setSpanContext`, an extract without a remote flag) hands
    // the child a context holding the parent's span context only, not the span object.
    it('links a tool whose context carries only its unheld ordinary parent’s span context', async () => {
      for (const toolEndsFirst of [true, false]) {
        const verdicts: Verdict[] = [];
        const misuses: MisuseEvent[] = [];
        const p = pipeline({
          policy: policyOf([{ scorers: [trajectory({ forbiddenTools: ['drop_table'] })] }]),
          onVerdict: (v) => verdicts.push(v),
          onMisuse: (m) => misuses.push(m),
        });
        const agent = startAgent(p.tracer, 'clerk');
        const http = startPlain(p.tracer, 'POST /worker', agent);
        const onlyContext = trace.setSpanContext(context.active(), http.spanContext());
        const drop = p.tracer.startSpan(
          'execute_tool drop_table',
          { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'drop_table' } },
          onlyContext,
        );
        // Its agent is not known yet: the live checks wait for the parent to be held.
        expect(misuses).toHaveLength(0);
        if (toolEndsFirst) drop.end();
        http.end();
        expect(misuses.map((m) => [m.kind, m.tool])).toEqual([['forbidden', 'drop_table']]);
        if (!toolEndsFirst) {
          agent.end();
          // The agent ended with the tool still open below it: judged once the tool ends.
          expect(verdicts).toHaveLength(0);
          drop.end();
        } else {
          agent.end();
        }
        await p.flush();
        expect(verdicts.map((v) => [v.passed, v.results.map((r) => r.reason)])).toEqual([
          [false, ['forbidden tool drop_table was executed (1 call)']],
        ]);
        expect(p.processor['_buffer'].size).toBe(0);
        await p.provider.shutdown();
      }
    });

    // Work an HTTP handler left running calls a tool after the handler's span ended.
    it('links a tool that starts under an ordinary span that has already ended, live checks included', async () => {
      const verdicts: Verdict[] = [];
      const misuses: MisuseEvent[] = [];
      const p = pipeline({
        policy: policyOf([{ scorers: [trajectory({ forbiddenTools: ['drop_table'] })] }]),
        onVerdict: (v) => verdicts.push(v),
        onMisuse: (m) => misuses.push(m),
      });
      const agent = startAgent(p.tracer, 'clerk');
      const handler = startPlain(p.tracer, 'POST /jobs', agent);
      handler.end();
      const late = startTool(p.tracer, 'drop_table', handler);
      expect(misuses.map((m) => [m.kind, m.tool])).toEqual([['forbidden', 'drop_table']]);
      late.end();
      agent.end();
      expect(verdicts.map((v) => [v.passed, v.results.map((r) => r.reason)])).toEqual([
        [false, ['forbidden tool drop_table was executed (1 call)']],
      ]);
      // Nothing is left waiting for a span that will not end again.
      expect(p.processor['_buffer'].size).toBe(0);
      await p.provider.shutdown();
    });

    it('holds only the agent spans of a trace whose root agent no rule matches at its start', async () => {
      const scorer = fakeScorer({ name: 's' });
      const verdicts: Verdict[] = [];
      const p = pipeline({
        policy: policyOf([{ match: { agent: 'refund-*', rootOnly: true }, scorers: [scorer] }]),
        onVerdict: (v) => verdicts.push(v),
      });
      const held = () => p.processor['_buffer'].held as number;
      const agent = startAgent(p.tracer, 'chit-chat');
      const nested = startAgent(p.tracer, 'refund-helper', agent);
      const lookup = startTool(p.tracer, 'lookup', nested);
      startPlain(p.tracer, 'SELECT', lookup).end();
      // The two agent spans, and the tool mapped to its agent: no span of its own.
      expect(held()).toBe(3);
      lookup.end();
      nested.end();
      agent.end();
      // Nested runs are out of root-only rules: nothing judged, nothing written.
      expect(scorer.seen).toHaveLength(0);
      expect(verdicts).toHaveLength(0);
      expect(p.processor['_buffer'].size).toBe(0);
      const spans = await p.flush();
      expect(byName(spans, 'invoke_agent chit-chat').attributes['toolwatch.evaluation.rule']).toBeUndefined();
      await p.provider.shutdown();
    });

    it('gives an incomplete record, and says so, when a root agent that matched no rule at its start matches one at its end', async () => {
      const warn = vi.spyOn(diag, 'warn').mockImplementation(() => {});
      const scorer = fakeScorer({ name: 's' });
      const verdicts: Verdict[] = [];
      const p = pipeline({
        policy: policyOf([{ match: { agent: 'refund-*', rootOnly: true }, scorers: [scorer] }]),
        onVerdict: (v) => verdicts.push(v),
      });
      const agent = startAgent(p.tracer, 'pending');
      tool(p.tracer, 'lookup', agent);
      agent.setAttribute('gen_ai.agent.name', 'refund-agent');
      agent.end();
      expect(scorer.seen).toHaveLength(0);
      expect(verdicts.map((v) => [v.agent, v.results.map((r) => [r.label, r.reason])])).toEqual([
        ['refund-agent', [['skipped', 'incomplete_trace']]],
      ]);
      expect(
        warn.mock.calls.some(([message]) => String(message).includes('matched no rule when it started')),
      ).toBe(true);
      // A policy with a rule for nested runs follows every span: the same trace is judged.
      const all = pipeline({
        policy: policyOf([{ match: { agent: 'refund-*', rootOnly: false }, scorers: [scorer] }]),
      });
      const root = startAgent(all.tracer, 'chit-chat');
      const refund = startAgent(all.tracer, 'refund-agent', root);
      tool(all.tracer, 'lookup', refund);
      refund.end();
      root.end();
      expect(scorer.seen.map((run) => [run.agent, run.executions.map((e) => e.name)])).toEqual([
        ['refund-agent', ['lookup']],
      ]);
      await p.provider.shutdown();
      await all.provider.shutdown();
    });

    // Instrumentations often start the agent span first and set its name once known.
    it('judges in full a root agent that states no name at its start and gets one that matches later', async () => {
      const scorer = fakeScorer({ name: 's' });
      const verdicts: Verdict[] = [];
      const p = pipeline({
        policy: policyOf([{ match: { agent: 'refund-*', rootOnly: true }, scorers: [scorer] }]),
        onVerdict: (v) => verdicts.push(v),
      });
      const agent = p.tracer.startSpan('invoke_agent', {
        attributes: { 'gen_ai.operation.name': 'invoke_agent' },
      });
      tool(p.tracer, 'lookup', agent);
      agent.setAttribute('gen_ai.agent.name', 'refund-agent');
      agent.end();
      expect(scorer.seen.map((run) => [run.agent, run.executions.map((e) => e.name)])).toEqual([
        ['refund-agent', ['lookup']],
      ]);
      expect(verdicts.map((v) => v.results.map((r) => r.label))).toEqual([['pass']]);
      await p.provider.shutdown();
    });

    it('out of the sample, counts a tool under a model span for its own agent, not the agent that started last', async () => {
      const misuses: MisuseEvent[] = [];
      const p = pipeline({
        policy: policyOf(
          [{ match: { rootOnly: false }, scorers: [trajectory({ forbiddenTools: ['drop_table'] })] }],
          { sampling: { ratio: 0 } },
        ),
        onMisuse: (m) => misuses.push(m),
      });
      const root = startAgent(p.tracer, 'root');
      const a = startAgent(p.tracer, 'a', root);
      const llm = p.tracer.startSpan(
        'chat m',
        { attributes: { 'gen_ai.operation.name': 'chat' } },
        inside(a),
      );
      // Another agent starts (in parallel) before the tool under a's model call.
      const b = startAgent(p.tracer, 'b', root);
      tool(p.tracer, 'drop_table', llm);
      llm.end();
      b.end();
      a.end();
      root.end();
      expect(misuses.map((m) => [m.kind, m.agent])).toEqual([
        ['forbidden', 'a'],
        ['forbidden', 'root'],
      ]);
      expect(p.processor['_buffer'].size).toBe(0);
      expect(p.processor['_buffer'].held).toBe(0);
      await p.provider.shutdown();
    });

    it('lets go of a run span that is not an agent span once it ends (converted then), and judges it from that', async () => {
      const scorer = fakeScorer({ name: 's' });
      const p = pipeline({ policy: policyOf([{ scorers: [scorer] }]) });
      const agent = startAgent(p.tracer, 'clerk');
      const lookup = startTool(p.tracer, 'lookup', agent, { id: 1 });
      lookup.setAttribute('gen_ai.tool.call.result', '{"found":true}');
      lookup.end();
      const state = p.processor['_buffer'].get(agent.spanContext().traceId);
      const held = [...state!.spans.values()] as Array<{ role: number; span: unknown; like: unknown }>;
      // The agent span is kept (live checks read it); the tool span is only its converted view.
      expect(held.map((e) => [e.role, e.span === undefined, e.like !== undefined])).toEqual([
        [1, false, false],
        [2, true, true],
      ]);
      agent.end();
      expect(scorer.seen[0]!.executions.map((e) => [e.name, e.args, e.result])).toEqual([
        ['lookup', { id: 1 }, { found: true }],
      ]);
      await p.provider.shutdown();
    });

    it('judges an agent span whose attributes were set after it started', async () => {
      const scorer = fakeScorer({ name: 's' });
      const p = pipeline({ policy: policyOf([{ scorers: [scorer] }]) });
      const agent = p.tracer.startSpan('run');
      tool(p.tracer, 'first', agent);
      tool(p.tracer, 'second', agent);
      agent.setAttributes({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'late-bloomer' });
      agent.end();
      const spans = await p.flush();
      expect(scorer.seen.map((run) => run.agent)).toEqual(['late-bloomer']);
      expect(scorer.seen[0]!.executions.map((e) => e.name)).toEqual(['first', 'second']);
      expect(byName(spans, 'run').attributes['toolwatch.evaluation.passed']).toBe(true);
      await p.provider.shutdown();
    });

    it('judges traces whose spans get their attributes only at the end (OpenInference bridges)', async () => {
      const deliveries: string[] = [];
      const scorer = fakeScorer({ name: 's' });
      const policy = policyOf([
        {
          name: 'r',
          scorers: [scorer, trajectory({ forbiddenTools: ['launch'], expectedTools: ['lookup'] })],
        },
      ]);
      const p = pipeline({
        policy,
        onVerdict: (v) => deliveries.push(`verdict ${v.agent}`),
        onMisuse: (m) => deliveries.push(`${m.kind} ${m.tool} ${m.agent}`),
      });
      const bare = (name: string, parent?: Parameters<typeof inside>[0]) =>
        p.tracer.startSpan(name, {}, inside(parent));
      const end = (span: ReturnType<typeof bare>, attributes: Record<string, string>) => {
        span.setAttributes(attributes);
        span.end();
      };
      const workflow = bare('Agent workflow');
      const agent = bare('weather_agent', workflow);
      const turn = bare('turn', agent);
      end(bare('lookup', turn), {
        'openinference.span.kind': 'TOOL',
        'tool.name': 'lookup',
        'input.value': '{}',
      });
      end(bare('launch', turn), {
        'openinference.span.kind': 'TOOL',
        'tool.name': 'launch',
        'input.value': '{}',
      });
      end(turn, { 'openinference.span.kind': 'CHAIN' });
      end(agent, { 'openinference.span.kind': 'AGENT', 'graph.node.id': 'weather_agent' });
      expect(deliveries).toEqual([]);
      end(workflow, { 'openinference.span.kind': 'AGENT' });
      const spans = await p.flush();
      // Misuse is known only now, and still comes before the verdict.
      expect(deliveries).toEqual(['forbidden launch weather_agent', 'verdict weather_agent']);
      expect(scorer.seen[0]!.executions.map((e) => e.name)).toEqual(['lookup', 'launch']);
      expect(byName(spans, 'evaluate weather_agent').parentSpanContext?.spanId).toBe(
        agent.spanContext().spanId,
      );
      expect(p.processor['_buffer'].size).toBe(0);
      await p.provider.shutdown();
    });

    it('judges the ended runs of such a trace at shutdown when its root never ends', async () => {
      const verdicts: Verdict[] = [];
      const p = pipeline({
        policy: policyOf([{ scorers: [fakeScorer({ name: 's' })] }]),
        onVerdict: (v) => verdicts.push(v),
      });
      const workflow = p.tracer.startSpan('Agent workflow');
      const agent = p.tracer.startSpan('weather_agent', {}, inside(workflow));
      const call = p.tracer.startSpan('lookup', {}, inside(agent));
      call.setAttributes({ 'openinference.span.kind': 'TOOL', 'tool.name': 'lookup', 'input.value': '{}' });
      call.end();
      agent.setAttributes({ 'openinference.span.kind': 'AGENT', 'graph.node.id': 'weather_agent' });
      agent.end();
      await p.processor.forceFlush();
      expect(verdicts).toHaveLength(0);
      await p.processor.shutdown();
      expect(verdicts.map((v) => [v.agent, v.results[0]!.label])).toEqual([['weather_agent', 'pass']]);
    });

    it('orders replayed spans (explicit start times) by their recorded times', async () => {
      const scorer = fakeScorer({ name: 's' });
      const p = pipeline({ policy: policyOf([{ scorers: [scorer] }]) });
      const t0 = Date.now() - 10_000;
      const agent = p.tracer.startSpan(
        'invoke_agent replayed',
        {
          startTime: t0,
          attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'replayed' },
        },
        inside(undefined),
      );
      // Replayed out of order: the second call first.
      for (const [name, at] of [
        ['second', t0 + 200],
        ['first', t0 + 100],
      ] as const) {
        p.tracer
          .startSpan(
            `execute_tool ${name}`,
            {
              startTime: at,
              attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': name },
            },
            inside(agent),
          )
          .end(at + 50);
      }
      agent.end(t0 + 500);
      await p.flush();
      expect(scorer.seen[0]!.executions.map((e) => e.name)).toEqual(['first', 'second']);
      await p.provider.shutdown();
    });

    it('judges only the outermost run for root_only rules, with nested calls in view', async () => {
      const scorer = fakeScorer({ name: 's' });
      const p = pipeline({ policy: policyOf([{ scorers: [scorer] }]) });
      const team = startAgent(p.tracer, 'team');
      const delegate = startTool(p.tracer, 'delegate', team);
      const member = startAgent(p.tracer, 'member', delegate);
      tool(p.tracer, 'search', member);
      member.end();
      delegate.end();
      team.end();
      const spans = await p.flush();
      expect(byName(spans, 'invoke_agent member').attributes['toolwatch.evaluation.rule']).toBeUndefined();
      expect(byName(spans, 'invoke_agent team').attributes['toolwatch.evaluation.rule']).toBe('rule0');
      expect(scorer.seen).toHaveLength(1);
      expect(scorer.seen[0]!.children.map((c) => c.agent)).toEqual(['member']);
      await p.provider.shutdown();
    });
  });

  describe('sampling', () => {
    it('marks an out-of-sample run with one attribute, no events and no verdict, and counts it per rule and reason', async () => {
      const verdicts: Verdict[] = [];
      const scorer = fakeScorer({ name: 's' });
      const policy = policyOf(
        [
          { name: 'r', match: { agent: 'a*', rootOnly: true }, scorers: [scorer] },
          { name: 'all', match: { agent: '*', rootOnly: true }, scorers: [fakeScorer({ name: 't' })] },
        ],
        { sampling: { ratio: 0 } },
      );
      const m = createMetrics();
      const p = pipeline({ policy, meterProvider: m.meterProvider, onVerdict: (v) => verdicts.push(v) });
      const agent = startAgent(p.tracer, 'alpha');
      const lookup = startTool(p.tracer, 'lookup', agent);
      // Out of the sample, ordinary spans are not followed: nothing is held for them.
      const held = p.processor['_buffer'].held;
      startPlain(p.tracer, 'SELECT', lookup).end();
      startPlain(p.tracer, 'GET /inventory', agent).end();
      expect(p.processor['_buffer'].held).toBe(held);
      lookup.end();
      agent.end();
      expect(p.processor['_buffer'].size).toBe(0);
      startAgent(p.tracer, 'beta').end();
      const spans = await p.flush();
      expect(scorer.seen).toHaveLength(0);
      expect(verdicts).toEqual([]);
      const exported = byName(spans, 'invoke_agent alpha');
      const added = (span: ReadableSpan) =>
        Object.keys(span.attributes).filter((key) => key.startsWith('toolwatch.'));
      expect(added(exported)).toEqual(['toolwatch.evaluation.skipped']);
      expect(exported.attributes['toolwatch.evaluation.skipped']).toBe('sampled_out');
      expect(exported.events).toEqual([]);
      expect(added(byName(spans, 'invoke_agent beta'))).toEqual(['toolwatch.evaluation.skipped']);
      expect(spans.filter((span) => span.name.startsWith('evaluate'))).toEqual([]);
      const skipped = (await m.collect()).get('toolwatch.runs.skipped');
      expect(pointValue(skipped, { 'toolwatch.rule': 'r', reason: 'sampled_out' })).toBe(1);
      expect(pointValue(skipped, { 'toolwatch.rule': 'all', reason: 'sampled_out' })).toBe(2);
      expect(pointValue(skipped, { 'toolwatch.rule': 'r', reason: 'incomplete_trace' })).toBe(0);
      await p.provider.shutdown();
      await m.shutdown();
    });

    it('gives onVerdict the full sampled_out record when asked to (sampledOutVerdicts), the span still one attribute', async () => {
      const verdicts: Verdict[] = [];
      const scorer = fakeScorer({ name: 's' });
      const policy = policyOf([{ name: 'r', match: { agent: 'a*', rootOnly: true }, scorers: [scorer] }], {
        sampling: { ratio: 0 },
      });
      for (const wrapping of [false, true]) {
        verdicts.length = 0;
        const p = pipeline({
          policy,
          wrapping,
          sampledOutVerdicts: true,
          onVerdict: (v) => verdicts.push(v),
        });
        const agent = startAgent(p.tracer, 'alpha');
        tool(p.tracer, 'lookup', agent);
        agent.end();
        const spans = await p.flush();
        expect(scorer.seen).toHaveLength(0);
        const exported = byName(spans, 'invoke_agent alpha');
        expect(verdicts).toHaveLength(1);
        expect(verdicts[0]).toMatchObject({
          agent: 'alpha',
          rule: 'r',
          sampled: false,
          trace_id: exported.spanContext().traceId,
          span_id: exported.spanContext().spanId,
        });
        expect(verdicts[0]!.results.map((r) => [r.label, r.reason])).toEqual([['skipped', 'sampled_out']]);
        expect(exported.attributes['toolwatch.evaluation.skipped']).toBe('sampled_out');
        expect(exported.attributes['toolwatch.keep']).toBeUndefined();
        expect(evaluationEvents(exported)).toEqual([]);
        await p.provider.shutdown();
      }
    });

    it("reads only the agent's name out of the sample: its messages are never parsed", async () => {
      // Rule matching (for live checks and for the record) needs the name alone; reading the
      // whole agent span parsed its input messages twice per run that is never judged.
      const verdicts: Verdict[] = [];
      const misuses: MisuseEvent[] = [];
      const policy = policyOf(
        [
          {
            name: 'r',
            match: { agent: 'alpha', rootOnly: true },
            scorers: [trajectory({ forbiddenTools: ['refund'] })],
          },
        ],
        { sampling: { ratio: 0 } },
      );
      const p = pipeline({
        policy,
        sampledOutVerdicts: true,
        onVerdict: (v) => verdicts.push(v),
        onMisuse: (m) => misuses.push(m),
      });
      const marker = 'never-parsed-out-of-the-sample';
      const messages = JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: marker }] }]);
      const parse = vi.spyOn(JSON, 'parse');
      try {
        const agent = startAgent(p.tracer, 'alpha', undefined, { 'gen_ai.input.messages': messages });
        startTool(p.tracer, 'refund', agent).end();
        agent.end();
        expect(parse.mock.calls.filter(([text]) => String(text).includes(marker))).toHaveLength(0);
      } finally {
        parse.mockRestore();
      }
      expect(misuses.map((m) => [m.kind, m.agent, m.rule])).toEqual([['forbidden', 'alpha', 'r']]);
      expect(verdicts.map((v) => [v.agent, v.results.map((r) => r.reason)])).toEqual([
        ['alpha', ['sampled_out']],
      ]);
      await p.provider.shutdown();
    });

    it('releases an out-of-sample trace whatever its spans became, and ignores spans refused at their start', async () => {
      const verdicts: Verdict[] = [];
      const policy = policyOf(
        [{ name: 'r', match: { agent: 'a*', rootOnly: true }, scorers: [fakeScorer({ name: 's' })] }],
        {
          sampling: { ratio: 0 },
        },
      );
      const p = pipeline({
        policy,
        maxSpansPerTrace: 2,
        sampledOutVerdicts: true,
        onVerdict: (v) => verdicts.push(v),
      });
      const agent = startAgent(p.tracer, 'alpha');
      const lookup = startTool(p.tracer, 'lookup', agent);
      // Past maxSpansPerTrace: refused (and counted) when it starts.
      const refused = startTool(p.tracer, 'notify', agent);
      expect(p.processor['_buffer'].held).toBe(2);
      // Attributes changed after start no longer say "tool": the span still ends as held.
      lookup.setAttribute('gen_ai.operation.name', 'create_agent');
      refused.end();
      lookup.end();
      expect(p.processor['_buffer'].size).toBe(1);
      agent.end();
      expect(p.processor['_buffer'].size).toBe(0);
      expect(p.processor['_buffer'].held).toBe(0);
      expect(verdicts.map((v) => v.results.map((r) => r.reason))).toEqual([['sampled_out']]);
      await p.provider.shutdown();
    });

    it('gives an agent span refused at its start under span limits its sampled_out record as it ends', async () => {
      // Refused spans were forgotten out of the sample: a nested agent refused under the limits
      // got no record while its trace went on. Remembered by id now, with whether an agent is
      // above it: a root-only rule has no record for it, a rule for every agent does.
      const verdicts: Verdict[] = [];
      const policy = policyOf(
        [
          { name: 'root', scorers: [fakeScorer({ name: 's' })] },
          { name: 'every', match: { agent: '*', rootOnly: false }, scorers: [fakeScorer({ name: 's' })] },
        ],
        { sampling: { ratio: 0 } },
      );
      for (const limits of [{ maxSpansPerTrace: 1 }, { maxBufferedSpans: 1 }]) {
        verdicts.length = 0;
        const p = pipeline({
          policy,
          ...limits,
          sampledOutVerdicts: true,
          onVerdict: (v) => verdicts.push(v),
        });
        const alpha = startAgent(p.tracer, 'alpha');
        const beta = startAgent(p.tracer, 'beta', alpha);
        expect(p.processor['_buffer'].held).toBe(1);
        beta.end();
        expect(verdicts.map((v) => [v.agent, v.rule, v.results.map((r) => r.reason)])).toEqual([
          ['beta', 'every', ['sampled_out']],
        ]);
        expect(verdicts[0]!.span_id).toBe(beta.spanContext().spanId);
        alpha.end();
        expect(verdicts.slice(1).map((v) => [v.agent, v.rule, v.results.map((r) => r.reason)])).toEqual([
          ['alpha', 'root', ['sampled_out']],
          ['alpha', 'every', ['sampled_out']],
        ]);
        expect(p.processor['_buffer'].size).toBe(0);
        await p.provider.shutdown();
      }
    });
  });

  describe('metrics', () => {
    it('counts evaluations and tool executions, with zero series from the policy', async () => {
      const m = createMetrics();
      const policy = policyOf([
        {
          name: 'refunds',
          match: { agent: 'refund-agent', rootOnly: true },
          scorers: [fakeScorer({ name: 'has_calls' })],
        },
      ]);
      const p = pipeline({ policy, meterProvider: m.meterProvider });
      const before = await m.collect();
      expect(
        pointValue(before.get('toolwatch.evaluations'), {
          'gen_ai.evaluation.name': 'has_calls',
          'gen_ai.evaluation.score.label': 'fail',
          'gen_ai.agent.name': 'refund-agent',
        }),
      ).toBe(0);
      for (let i = 0; i < 3; i++) {
        const agent = startAgent(p.tracer, 'refund-agent');
        if (i < 2) tool(p.tracer, 'get_order_detail', agent);
        if (i === 0) {
          const failing = startTool(p.tracer, 'check_policy', agent);
          failing.setStatus({ code: SpanStatusCode.ERROR, message: 'boom' });
          failing.end();
        }
        agent.end();
      }
      await p.flush();
      const after = await m.collect();
      const evaluations = after.get('toolwatch.evaluations');
      expect(
        pointValue(evaluations, {
          'gen_ai.evaluation.score.label': 'pass',
          'gen_ai.agent.name': 'refund-agent',
        }),
      ).toBe(2);
      expect(
        pointValue(evaluations, {
          'gen_ai.evaluation.score.label': 'fail',
          'gen_ai.agent.name': 'refund-agent',
        }),
      ).toBe(1);
      const executions = after.get('toolwatch.tool.executions');
      expect(
        pointValue(executions, { 'gen_ai.tool.name': 'get_order_detail', 'toolwatch.tool.status': 'ok' }),
      ).toBe(2);
      expect(
        pointValue(executions, { 'gen_ai.tool.name': 'check_policy', 'toolwatch.tool.status': 'error' }),
      ).toBe(1);
      expect(after.get('toolwatch.processor.traces_buffered')!.dataPoints[0]!.value).toBe(0);
      await p.provider.shutdown();
      await m.shutdown();
    });
  });

  describe('wrapping mode (SDK without onEnding)', () => {
    it('hands next a view of the agent span with the verdict and forwards every span', async () => {
      const policy = policyOf([{ scorers: [fakeScorer({ name: 's' })] }]);
      const p = pipeline({ policy, wrapping: true });
      const agent = startAgent(p.tracer, 'a');
      tool(p.tracer, 'lookup', agent);
      const http = startPlain(p.tracer, 'GET /x', agent);
      http.end();
      agent.end();
      const spans = await p.flush();
      expect(spans.map((s) => s.name).sort()).toEqual(['GET /x', 'execute_tool lookup', 'invoke_agent a']);
      const exported = byName(spans, 'invoke_agent a');
      expect(exported.attributes['toolwatch.evaluation.passed']).toBe(true);
      expect(exported.attributes['gen_ai.agent.name']).toBe('a');
      expect(evaluationEvents(exported)).toHaveLength(1);
      expect(exported.spanContext().spanId).toBe(
        (agent as unknown as { spanContext(): { spanId: string } }).spanContext().spanId,
      );
      // The span itself was not written after it ended.
      expect(
        (agent as unknown as { attributes: Record<string, unknown> }).attributes[
          'toolwatch.evaluation.passed'
        ],
      ).toBeUndefined();
      await p.provider.shutdown();
    });
  });

  describe('late spans', () => {
    it('waits for a descendant still open and emits the verdict on an evaluate span', async () => {
      const verdicts: Verdict[] = [];
      const scorer = fakeScorer({ name: 's' });
      const p = pipeline({ policy: policyOf([{ scorers: [scorer] }]), onVerdict: (v) => verdicts.push(v) });
      const agent = startAgent(p.tracer, 'streamer');
      tool(p.tracer, 'first', agent);
      const streaming = startTool(p.tracer, 'stream', agent);
      agent.end();
      expect(verdicts).toHaveLength(0);
      streaming.end();
      const spans = await p.flush();
      expect(verdicts).toHaveLength(1);
      expect(scorer.seen[0]!.executions.map((e) => e.name)).toEqual(['first', 'stream']);
      const agentSpan = byName(spans, 'invoke_agent streamer');
      expect(agentSpan.attributes['toolwatch.evaluation.passed']).toBeUndefined();
      const evaluate = byName(spans, 'evaluate streamer');
      expect(evaluate.parentSpanContext?.spanId).toBe(agentSpan.spanContext().spanId);
      expect(evaluate.spanContext().traceId).toBe(agentSpan.spanContext().traceId);
      expect(evaluate.attributes['toolwatch.evaluation.passed']).toBe(true);
      expect(evaluationEvents(evaluate)).toHaveLength(1);
      await p.provider.shutdown();
    });

    it('judges the waiting run as soon as its last late span ends, not at lateSpanTimeoutMs', async () => {
      const verdicts: Verdict[] = [];
      const p = pipeline({
        policy: policyOf([{ scorers: [fakeScorer({ name: 's' })] }]),
        lateSpanTimeoutMs: 60_000,
        onVerdict: (v) => verdicts.push(v),
      });
      const agent = startAgent(p.tracer, 'streamer');
      const streaming = startTool(p.tracer, 'stream', agent);
      agent.end();
      streaming.end();
      // Out of the span's hook (a microtask), long before the timeout.
      expect(verdicts).toHaveLength(0);
      await new Promise((resolve) => setImmediate(resolve));
      expect(verdicts.map((v) => v.agent)).toEqual(['streamer']);
      await p.provider.shutdown();
    });

    it('gives up waiting after lateSpanTimeoutMs', async () => {
      vi.useFakeTimers();
      const verdicts: Verdict[] = [];
      const p = pipeline({
        policy: policyOf([{ scorers: [fakeScorer({ name: 's' })] }]),
        lateSpanTimeoutMs: 1000,
        onVerdict: (v) => verdicts.push(v),
      });
      const agent = startAgent(p.tracer, 'forgetful');
      tool(p.tracer, 'first', agent);
      startTool(p.tracer, 'fire_and_forget', agent);
      agent.end();
      await vi.advanceTimersByTimeAsync(999);
      expect(verdicts).toHaveLength(0);
      await vi.advanceTimersByTimeAsync(2);
      expect(verdicts).toHaveLength(1);
      const spans = await p.flush();
      expect(byName(spans, 'evaluate forgetful').attributes['toolwatch.evaluation.rule']).toBe('rule0');
      await p.provider.shutdown();
    });
  });

  describe('bounded memory', () => {
    it('evicts a trace whose root never ends after traceTtlMs and counts its spans', async () => {
      vi.useFakeTimers();
      const m = createMetrics();
      const verdicts: Verdict[] = [];
      const p = pipeline({
        policy: policyOf([{ scorers: [fakeScorer()] }]),
        meterProvider: m.meterProvider,
        traceTtlMs: 10_000,
        onVerdict: (v) => verdicts.push(v),
      });
      const agent = startAgent(p.tracer, 'stuck');
      tool(p.tracer, 'a', agent);
      tool(p.tracer, 'b', agent);
      expect(p.processor['_buffer'].size).toBe(1);
      await vi.advanceTimersByTimeAsync(9_000);
      expect(p.processor['_buffer'].size).toBe(1);
      await vi.advanceTimersByTimeAsync(12_000);
      expect(p.processor['_buffer'].size).toBe(0);
      vi.useRealTimers();
      const metrics = await m.collect();
      expect(pointValue(metrics.get('toolwatch.processor.spans_dropped'), { reason: 'ttl' })).toBe(3);
      expect(metrics.get('toolwatch.processor.traces_buffered')!.dataPoints[0]!.value).toBe(0);
      // The root ending later gets a record, never a verdict judged on a partial trace.
      agent.end();
      expect(verdicts).toHaveLength(1);
      expect(verdicts[0]!.results.map((r) => [r.label, r.reason])).toEqual([['skipped', 'incomplete_trace']]);
      expect(p.processor['_buffer'].size).toBe(0);
      await p.provider.shutdown();
      await m.shutdown();
    });

    it('drops spans past maxSpansPerTrace and maxTraces, counts them and logs once', async () => {
      const m = createMetrics();
      const warn = vi.spyOn(diag, 'warn');
      const p = pipeline({
        policy: policyOf([{ scorers: [fakeScorer()] }]),
        meterProvider: m.meterProvider,
        maxSpansPerTrace: 10,
        maxTraces: 2,
      });
      const agent = startAgent(p.tracer, 'storm');
      for (let i = 0; i < 50; i++) startTool(p.tracer, `t${i}`, agent);
      for (const name of ['second', 'third', 'fourth']) startTool(p.tracer, 'x', startAgent(p.tracer, name));
      const metrics = await m.collect();
      const dropped = metrics.get('toolwatch.processor.spans_dropped');
      // The agent span plus 9 tools fit; 41 tools do not.
      expect(pointValue(dropped, { reason: 'max_spans_per_trace' })).toBe(41);
      // `third` evicts the oldest trace (storm, 10 spans held), `fourth` evicts `second` (2).
      expect(pointValue(dropped, { reason: 'max_traces' })).toBe(12);
      expect(p.processor['_buffer'].size).toBe(2);
      const messages = warn.mock.calls.map((c) => String(c[0]));
      expect(messages.filter((msg) => msg.includes('holds 10 spans'))).toHaveLength(1);
      expect(messages.filter((msg) => msg.includes('agent traces are held'))).toHaveLength(1);
      await p.provider.shutdown();
      await m.shutdown();
    });
    it('evicts the oldest traces when maxBufferedSpans is reached', async () => {
      const m = createMetrics();
      const p = pipeline({
        policy: policyOf([{ scorers: [fakeScorer()] }]),
        meterProvider: m.meterProvider,
        maxBufferedSpans: 5,
      });
      const first = startAgent(p.tracer, 'first');
      startTool(p.tracer, 'a', first);
      startTool(p.tracer, 'b', first);
      const second = startAgent(p.tracer, 'second');
      startTool(p.tracer, 'c', second);
      expect(p.processor['_buffer'].held).toBe(5);
      startTool(p.tracer, 'd', second);
      // `first` (3 spans) made room; `second` keeps its 3.
      expect(p.processor['_buffer'].size).toBe(1);
      expect(p.processor['_buffer'].held).toBe(3);
      const metrics = await m.collect();
      expect(
        pointValue(metrics.get('toolwatch.processor.spans_dropped'), { reason: 'max_buffered_spans' }),
      ).toBe(3);
      await p.provider.shutdown();
      await m.shutdown();
    });
  });

  describe('scorers and judges', () => {
    it('runs scorers with tracing suppressed, outside the application context', async () => {
      const manager = new AsyncLocalStorageContextManager().enable();
      context.setGlobalContextManager(manager);
      try {
        const seen: Array<{ recording: boolean; active: unknown }> = [];
        const p = pipeline({
          policy: policyOf([
            {
              scorers: [
                fakeScorer({
                  judge: () => {
                    const inner = p.tracer.startSpan('scorer work');
                    seen.push({ recording: inner.isRecording(), active: trace.getActiveSpan() });
                    inner.end();
                    return true;
                  },
                }),
              ],
            },
          ]),
        });
        const agent = startAgent(p.tracer, 'a');
        tool(p.tracer, 'lookup', agent);
        context.with(trace.setSpan(context.active(), agent), () => agent.end());
        const spans = await p.flush();
        expect(seen).toEqual([{ recording: false, active: undefined }]);
        expect(spans.map((s) => s.name)).not.toContain('scorer work');
        await p.provider.shutdown();
      } finally {
        context.disable();
      }
    });

    it('turns a scorer exception into an error result and logs it through diag', async () => {
      const warn = vi.spyOn(diag, 'warn');
      const verdicts: Verdict[] = [];
      const policy = policyOf([
        { scorers: [fakeScorer({ name: 'bad', throws: true }), fakeScorer({ name: 'good' })] },
      ]);
      const p = pipeline({ policy, onVerdict: (v) => verdicts.push(v) });
      for (let i = 0; i < 2; i++) {
        const agent = startAgent(p.tracer, 'a');
        tool(p.tracer, 'lookup', agent);
        expect(() => agent.end()).not.toThrow();
      }
      const spans = await p.flush();
      expect(verdicts[0]!.results.map((r) => [r.scorer, r.label])).toEqual([
        ['bad', 'error'],
        ['good', 'pass'],
      ]);
      expect(verdicts[0]!.results[0]!.reason).toContain('bad exploded');
      const exported = spans.filter((s) => s.name === 'invoke_agent a');
      expect(exported[0]!.attributes['toolwatch.evaluation.failed']).toEqual(['bad']);
      expect(warn.mock.calls.filter((c) => String(c[0]).includes('bad exploded'))).toHaveLength(1);
      await p.provider.shutdown();
    });

    it('runs judges under the budget and counts their calls', async () => {
      const m = createMetrics();
      const verdicts: Verdict[] = [];
      const release: Array<() => void> = [];
      const judge = fakeScorer({
        name: 'judge',
        kind: 'llm_judge',
        async: true,
        promise: () =>
          new Promise((resolve) =>
            release.push(() =>
              resolve({
                scorer: 'judge',
                kind: 'llm_judge',
                passed: true,
                score: 1,
                label: 'pass',
                reason: 'grounded',
                digest: 'digest-judge',
                detail: {},
              }),
            ),
          ),
      });
      Object.assign(judge, { sampling: { ratio: 1 } });
      const policy = policyOf([{ scorers: [judge] }], {
        judge: { maxPerMinute: 30, maxConcurrent: 1, escalateOn: [] },
      });
      const p = pipeline({ policy, meterProvider: m.meterProvider, onVerdict: (v) => verdicts.push(v) });
      for (const name of ['first', 'second']) {
        const agent = startAgent(p.tracer, name);
        tool(p.tracer, 'lookup', agent);
        agent.end();
      }
      // One judge call at a time: the second run's judge is not made.
      await new Promise((r) => setTimeout(r, 10));
      expect(release).toHaveLength(1);
      release[0]!();
      const spans = await p.flush();
      const byAgent = Object.fromEntries(verdicts.map((v) => [v.agent, v.results[0]!]));
      expect(byAgent.first).toMatchObject({ label: 'pass', reason: 'grounded' });
      expect(byAgent.second).toMatchObject({ label: 'skipped', reason: 'budget' });
      expect(
        evaluationEvents(byName(spans, 'evaluate first'))[0]!.attributes?.['gen_ai.evaluation.score.label'],
      ).toBe('pass');
      const metrics = await m.collect();
      const calls = metrics.get('toolwatch.judge.calls');
      expect(pointValue(calls, { 'gen_ai.evaluation.name': 'judge', outcome: 'ok' })).toBe(1);
      expect(pointValue(calls, { 'gen_ai.evaluation.name': 'judge', outcome: 'skipped_budget' })).toBe(1);
      await p.provider.shutdown();
      await m.shutdown();
    });

    it('does not let a hanging judge hold forceFlush past judgeTimeoutMs', async () => {
      const verdicts: Verdict[] = [];
      const hanging = fakeScorer({
        name: 'judge',
        kind: 'llm_judge',
        async: true,
        promise: () => new Promise(() => {}),
      });
      Object.assign(hanging, { sampling: { ratio: 1 } });
      const policy = policyOf([{ scorers: [fakeScorer({ name: 'det' }), hanging] }]);
      const p = pipeline({ policy, judgeTimeoutMs: 50, onVerdict: (v) => verdicts.push(v) });
      const agent = startAgent(p.tracer, 'a');
      tool(p.tracer, 'lookup', agent);
      agent.end();
      const started = Date.now();
      const spans = await p.flush();
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(verdicts).toHaveLength(1);
      const judged = verdicts[0]!.results.find((r) => r.scorer === 'judge');
      expect(judged?.label).toBe('error');
      expect(verdicts[0]!.passed).toBe(false);
      // The deterministic result is on the agent span, the judge's on the evaluate span.
      expect(
        evaluationEvents(byName(spans, 'invoke_agent a')).map(
          (e) => e.attributes?.['gen_ai.evaluation.name'],
        ),
      ).toEqual(['det']);
      const evaluate = byName(spans, 'evaluate a');
      expect(evaluationEvents(evaluate).map((e) => e.attributes?.['gen_ai.evaluation.name'])).toEqual([
        'judge',
      ]);
      expect(evaluate.attributes['toolwatch.evaluation.failed']).toEqual(['judge']);
      await p.provider.shutdown();
    });
  });

  describe('live misuse', () => {
    it('reports forbidden tools at start, budgets and repeats at end, before the run is over', async () => {
      const m = createMetrics();
      const misuse: MisuseEvent[] = [];
      const policy = policyOf([
        {
          name: 'refunds',
          scorers: [
            trajectory({
              expectedTools: ['get_order_detail', 'check_refund_policy'],
              forbiddenTools: ['submit_refund'],
              maxCalls: 3,
              maxRepeats: 1,
            }),
          ],
        },
      ]);
      const p = pipeline({ policy, meterProvider: m.meterProvider, onMisuse: (e) => misuse.push(e) });
      const agent = startAgent(p.tracer, 'refund-agent');
      tool(p.tracer, 'get_order_detail', agent, { order_id: 'A1' });
      expect(misuse).toHaveLength(0);
      const forbidden = startTool(p.tracer, 'submit_refund', agent, { order_id: 'A1' });
      expect(misuse.map((e) => e.kind)).toEqual(['forbidden']);
      expect(misuse[0]).toMatchObject({ tool: 'submit_refund', agent: 'refund-agent', rule: 'refunds' });
      expect(misuse[0]!.span_id).toBe(forbidden.spanContext().spanId);
      forbidden.end();
      const weather = startTool(p.tracer, 'weather', agent);
      expect(misuse.at(-1)).toMatchObject({ kind: 'unexpected', tool: 'weather' });
      weather.end();
      // Fourth call: over the budget of 3; and the same arguments as the first: a repeat.
      tool(p.tracer, 'get_order_detail', agent, { order_id: 'A1' });
      expect(
        misuse
          .slice(-2)
          .map((e) => e.kind)
          .sort(),
      ).toEqual(['call_budget', 'repeated_call']);
      expect(misuse.find((e) => e.kind === 'call_budget')!.detail).toEqual({ calls: 4, max_calls: 3 });
      const metrics = await m.collect();
      const counter = metrics.get('toolwatch.tool.misuse');
      expect(
        pointValue(counter, { 'toolwatch.misuse.kind': 'forbidden', 'gen_ai.tool.name': 'submit_refund' }),
      ).toBe(1);
      expect(
        pointValue(counter, {
          'toolwatch.misuse.kind': 'repeated_call',
          'gen_ai.tool.name': 'get_order_detail',
        }),
      ).toBe(1);
      agent.end();
      await p.provider.shutdown();
      await m.shutdown();
    });
  });

  describe('lifecycle and cost', () => {
    it('shuts down in the middle of a run without throwing, once', async () => {
      const m = createMetrics();
      const verdicts: Verdict[] = [];
      const p = pipeline({
        policy: policyOf([{ scorers: [fakeScorer()] }]),
        meterProvider: m.meterProvider,
        onVerdict: (v) => verdicts.push(v),
      });
      const agent = startAgent(p.tracer, 'a');
      const open = startTool(p.tracer, 'lookup', agent);
      const first = p.processor.shutdown();
      expect(p.processor.shutdown()).toBe(first);
      await first;
      expect(() => {
        open.end();
        agent.end();
      }).not.toThrow();
      expect(verdicts).toHaveLength(0);
      const metrics = await m.collect();
      expect(pointValue(metrics.get('toolwatch.processor.spans_dropped'), { reason: 'shutdown' })).toBe(2);
      await m.shutdown();
    });

    it('never sees spans that are not recorded', async () => {
      const verdicts: Verdict[] = [];
      const p = pipeline({
        policy: policyOf([{ scorers: [fakeScorer()] }]),
        sampler: new AlwaysOffSampler(),
        onVerdict: (v) => verdicts.push(v),
      });
      const agent = startAgent(p.tracer, 'a');
      tool(p.tracer, 'lookup', agent);
      expect(agent.isRecording()).toBe(false);
      expect(p.processor['_buffer'].size).toBe(0);
      agent.end();
      await p.flush();
      expect(verdicts).toHaveLength(0);
      await p.provider.shutdown();
    });

    it('keeps nothing for traces without agent activity', async () => {
      const p = pipeline({ policy: policyOf([{ scorers: [fakeScorer()] }]) });
      const root = startPlain(p.tracer, 'GET /');
      const db = startPlain(p.tracer, 'SELECT', root);
      expect(p.processor['_buffer'].size).toBe(0);
      db.end();
      root.end();
      expect(p.processor['_buffer'].size).toBe(0);
      expect((await p.flush()).map((s) => s.name)).toEqual(['SELECT', 'GET /']);
      await p.provider.shutdown();
    });
  });
});
