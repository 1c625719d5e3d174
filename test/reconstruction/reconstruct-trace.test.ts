import { describe, expect, it } from 'vitest';
import { spansFromOtlpJson } from '../../src/conventions/from-otlp-json.js';
import { reconstructTrace, reconstructTraces } from '../../src/reconstruction/reconstruct-trace.js';
import type { AgentRun, SpanLike } from '../../src/types.js';
import { TraceBuilder } from '../helpers/trace-builder.js';

function rebuild(t: TraceBuilder) {
  const problems: never[] = [];
  const spans = spansFromOtlpJson(t.toOtlp(), problems);
  expect(problems).toEqual([]);
  return reconstructTrace(spans);
}

const names = (run: AgentRun) => run.calls.map((c) => `${c.name}:${c.status}${c.requestOnly ? ':req' : ''}`);

describe('reconstructTrace: GenAI semconv basics', () => {
  it('owns tool spans by the nearest agent ancestor, not the direct parent', () => {
    const t = new TraceBuilder();
    const agent = t.agent('refund-agent');
    const step = agent.span('step 1', { 'gen_ai.operation.name': 'agent_step' });
    step.llm({ toolCalls: [{ name: 'get_order', id: 'c1', args: { order_id: 'A1' } }] });
    step.tool('get_order', { id: 'c1', args: { order_id: 'A1' }, result: { ok: true } });
    const trace = rebuild(t);
    expect(trace.runs).toHaveLength(1);
    const run = trace.runs[0]!;
    expect(run.agent).toBe('refund-agent');
    expect(run.implicit).toBe(false);
    expect(run.executions.map((e) => e.name)).toEqual(['get_order']);
    expect(run.executions[0]!.args).toEqual({ order_id: 'A1' });
    expect(run.executions[0]!.result).toEqual({ ok: true });
    expect(run.executions[0]!.status).toBe('ok');
    expect(run.executions[0]!.run).toBe(run);
    expect(run.requests).toHaveLength(1);
    expect(run.requests[0]!.execution).toBe(run.executions[0]);
    expect(run.executions[0]!.request).toBe(run.requests[0]);
    expect(names(run)).toEqual(['get_order:ok']);
    expect(trace.problems).toEqual([]);
  });

  it('turns requests with no execution into refused request-only calls, merged in time order', () => {
    const t = new TraceBuilder();
    const agent = t.agent('a');
    agent.llm({
      toolCalls: [
        { name: 'search', id: 'c1', args: { q: 'x' } },
        { name: 'launch', id: 'c2', args: {} },
      ],
    });
    agent.tool('search', { id: 'c1', args: { q: 'x' } });
    agent.llm({ toolCalls: [{ name: 'late', id: 'c3', args: {} }] });
    const run = rebuild(t).runs[0]!;
    // `launch` sorts after the execution of the request listed before it; `late`, asked for in the
    // run's last model output and never answered, is pending.
    expect(names(run)).toEqual(['search:ok', 'launch:refused:req', 'late:paused:req']);
    const launch = run.calls.find((c) => c.name === 'launch')!;
    expect(launch.requestOnly).toBe(true);
    expect(launch.argsSource).toBe('request');
    expect(launch.spanId).toBe(run.requests[1]!.llmSpanId);
    expect(run.executions).toHaveLength(1);
  });

  it('nests agents under the delegating tool span as children', () => {
    const t = new TraceBuilder();
    const orch = t.agent('orchestrator');
    orch.llm({ toolCalls: [{ name: 'ask_researcher', id: 'o1', args: { q: 'w' } }] });
    const tool = orch.tool('ask_researcher', { id: 'o1', args: { q: 'w' } });
    const researcher = tool.agent('researcher');
    researcher.llm({ toolCalls: [{ name: 'get_weather', id: 'r1', args: { city: 'Paris' } }] });
    researcher.tool('get_weather', { id: 'r1', args: { city: 'Paris' }, status: 'error' });
    const trace = rebuild(t);
    expect(trace.runs).toHaveLength(1);
    const run = trace.runs[0]!;
    expect(names(run)).toEqual(['ask_researcher:ok']);
    expect(run.children.map((c) => c.agent)).toEqual(['researcher']);
    const child = run.children[0]!;
    expect(child.parent).toBe(run);
    expect(names(child)).toEqual(['get_weather:error']);
    expect(child.executions[0]!.errorType).toBe('Error');
    expect(child.hasErrorSpan).toBe(true);
    expect(run.hasErrorSpan).toBe(true);
  });

  it('groups by trace id in order of first appearance', () => {
    const a = new TraceBuilder({ traceId: 'a'.repeat(32) });
    a.agent('one').tool('t');
    const b = new TraceBuilder({ traceId: 'b'.repeat(32) });
    b.agent('two').tool('u');
    const spans: SpanLike[] = [...spansFromOtlpJson(b.toOtlp()), ...spansFromOtlpJson(a.toOtlp())];
    const traces = reconstructTraces(spans);
    expect(traces.map((t) => t.traceId)).toEqual(['b'.repeat(32), 'a'.repeat(32)]);
    expect(traces.map((t) => t.runs[0]!.agent)).toEqual(['two', 'one']);
  });
});
