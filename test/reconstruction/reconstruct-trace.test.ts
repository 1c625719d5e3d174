import { describe, expect, it } from 'vitest';
import { spansFromOtlpJson } from '../../src/conventions/from-otlp-json.js';
import { reconstructTrace, reconstructTraces } from '../../src/reconstruction/reconstruct-trace.js';
import type { AgentRun, SpanLike } from '../../src/types.js';
import { encloseChildren, SpanFactory } from '../helpers/span-like.js';
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

const OI = (kind: string, extra: Record<string, unknown> = {}) => ({
  'openinference.span.kind': kind,
  ...extra,
});

describe('reconstructTrace: joins', () => {
  it('joins by call id first, even when execution order differs from request order', () => {
    const t = new TraceBuilder();
    const a = t.agent('a');
    a.llm({
      toolCalls: [
        { name: 'w', id: 'p1', args: { city: 'Paris' } },
        { name: 'w', id: 'p2', args: { city: 'Rome' } },
      ],
    });
    a.tool('w', { id: 'p2', args: { city: 'Rome' } });
    a.tool('w', { id: 'p1', args: { city: 'Paris' } });
    const run = rebuild(t).runs[0]!;
    expect(run.executions.map((e) => e.request?.callId)).toEqual(['p2', 'p1']);
    expect(run.calls.every((c) => !c.requestOnly)).toBe(true);
  });

  it('joins by name + canonical args when the tool span has no id, and lends it the request id', () => {
    const t = new TraceBuilder();
    const a = t.agent('a');
    a.llm({
      toolCalls: [
        { name: 'w', id: 'p1', args: { city: 'Paris', unit: 'C' } },
        { name: 'w', id: 'p2', args: { city: 'Rome' } },
      ],
    });
    a.tool('w', { args: { city: 'Rome' } });
    a.tool('w', { args: { unit: 'C', city: 'Paris' } });
    const run = rebuild(t).runs[0]!;
    expect(run.executions.map((e) => e.callId)).toEqual(['p2', 'p1']);
  });

  it('falls back to order within the latest LLM output that started before the execution', () => {
    const f = new SpanFactory();
    const agent = f.make('weather', OI('AGENT', { 'graph.node.id': 'weather' }));
    const llm1 = f.make('generation', OI('LLM', llmCall(0, 'getWeather', '{"city":42}')), { parent: agent });
    const llm2 = f.make('generation', OI('LLM', llmCall(0, 'getWeather', '{"city":"Paris"}')), {
      parent: agent,
    });
    // LangChain unwraps the single string argument.
    const tool = f.make('getWeather', OI('TOOL', { 'tool.name': 'getWeather', 'input.value': 'Paris' }), {
      parent: agent,
    });
    const run = reconstructTrace(encloseChildren([agent, llm1, llm2, tool])).runs[0]!;
    expect(run.calls.map((c) => [c.name, c.args, c.status, c.requestOnly])).toEqual([
      ['getWeather', { city: 42 }, 'refused', true],
      ['getWeather', { city: 'Paris' }, 'ok', false],
    ]);
    expect(run.executions[0]!.argsSource).toBe('request');
  });

  it('uses the joined request’s arguments when the span’s are redacted, and says so', () => {
    const t = new TraceBuilder();
    const a = t.agent('a');
    a.llm({ toolCalls: [{ name: 'w', id: 'c1', args: { city: 'Paris' } }] });
    a.tool('w', { id: 'c1', args: '__REDACTED__' });
    a.tool('x', { args: { own: true } });
    const run = rebuild(t).runs[0]!;
    expect(run.executions[0]).toMatchObject({ args: { city: 'Paris' }, argsSource: 'request' });
    expect(run.executions[1]).toMatchObject({ args: { own: true }, argsSource: 'span' });
  });

  it('keeps unparseable arguments raw with an error, and still joins by id', () => {
    const t = new TraceBuilder();
    const a = t.agent('a');
    a.llm({ toolCalls: [{ name: 'w', id: 'c1' }] });
    a.tool('w', { id: 'c1', args: '{"city": "Pa' });
    const exec = rebuild(t).runs[0]!.executions[0]!;
    expect(exec.args).toBeUndefined();
    expect(exec.argsRaw).toBe('{"city": "Pa');
    expect(exec.argsError).toMatch(/unparseable/);
    expect(exec.argsSource).toBe('span');
    expect(exec.request?.callId).toBe('c1');
  });

  it('orders executions by start, then end, then span id', () => {
    const f = new SpanFactory();
    const agent = f.make(
      'invoke_agent a',
      { 'gen_ai.operation.name': 'invoke_agent' },
      { start: 0, end: 100 },
    );
    const mk = (name: string, start: number, end: number, spanId: string) =>
      f.make(
        `execute_tool ${name}`,
        { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': name },
        { parent: agent, start, end, spanId },
      );
    const spans = [mk('d', 5, 9, 'd0'), mk('c', 5, 6, 'c0'), mk('b', 2, 3, 'b1'), mk('a', 2, 3, 'a1'), agent];
    expect(reconstructTrace(spans).runs[0]!.executions.map((e) => e.name)).toEqual(['a', 'b', 'c', 'd']);
  });
});

function llmCall(index: number, name: string, args: string, id?: string): Record<string, unknown> {
  const p = `llm.output_messages.0.message.tool_calls.${index}.tool_call`;
  return {
    [`${p}.function.name`]: name,
    [`${p}.function.arguments`]: args,
    ...(id ? { [`${p}.id`]: id } : {}),
  };
}

describe('reconstructTrace: runs', () => {
  it('LangGraph: tool spans without an agent ancestor form an implicit run named after the root CHAIN', () => {
    const f = new SpanFactory();
    const root = f.make('weather_agent', OI('CHAIN'));
    const model = f.make('model_request', OI('CHAIN'), { parent: root });
    const llm = f.make('FakeBuiltModel', OI('LLM', llmCall(0, 'getWeather', '{"city":"Paris"}')), {
      parent: model,
    });
    const tools = f.make('tools', OI('CHAIN'), { parent: root });
    const tool = f.make('getWeather', OI('TOOL', { 'tool.name': 'getWeather', 'input.value': 'Paris' }), {
      parent: tools,
    });
    const trace = reconstructTrace(encloseChildren([root, model, llm, tools, tool]));
    expect(trace.runs).toHaveLength(1);
    expect(trace.runs[0]).toMatchObject({ agent: 'weather_agent', implicit: true, spanId: root.spanId });
    expect(trace.runs[0]!.calls.map((c) => [c.name, c.args, c.status])).toEqual([
      ['getWeather', { city: 'Paris' }, 'ok'],
    ]);
  });

  it('a CHAIN under a tool span that contains tools is a nested implicit run (LangChain sub-agent)', () => {
    const f = new SpanFactory();
    const root = f.make('orchestrator', OI('CHAIN'));
    const ask = f.make(
      'askResearcher',
      OI('TOOL', { 'tool.name': 'askResearcher', 'input.value': '{"q":"w"}' }),
      { parent: root },
    );
    const sub = f.make('researcher', OI('CHAIN'), { parent: ask });
    const tools = f.make('tools', OI('CHAIN'), { parent: sub });
    const tool = f.make(
      'getWeather',
      OI('TOOL', { 'tool.name': 'getWeather', 'input.value': '{"city":"Tokyo"}' }),
      { parent: tools },
    );
    const [run] = reconstructTrace(encloseChildren([root, ask, sub, tools, tool])).runs;
    expect(run!.calls.map((c) => c.name)).toEqual(['askResearcher']);
    expect(run!.children.map((c) => [c.agent, c.implicit, c.calls.map((x) => x.name)])).toEqual([
      ['researcher', true, ['getWeather']],
    ]);
  });

  it('OpenAI Agents: the "Agent workflow" root is a wrapper; a handoff target (sibling) is a child of its source', () => {
    const f = new SpanFactory();
    const wrapper = f.make('Agent workflow', OI('AGENT'));
    const task = f.make('Agent workflow', OI('CHAIN'), { parent: wrapper });
    const triage = f.make('triage', OI('AGENT', { 'graph.node.id': 'triage' }), { parent: task });
    const turn = f.make('turn', OI('CHAIN'), { parent: triage });
    const gen = f.make(
      'generation',
      OI('LLM', llmCall(0, 'transfer_to_weather_specialist', '{}', 'call_h1')),
      { parent: turn },
    );
    const handoff = f.make(
      'handoff to weather_specialist',
      OI('TOOL', {
        'tool.name': 'handoff_to_weather_specialist',
        'input.value': '{"from_agent":"triage"}',
        'output.value': '{"to_agent":"weather_specialist"}',
      }),
      { parent: turn },
    );
    const specialist = f.make(
      'weather_specialist',
      OI('AGENT', { 'graph.node.id': 'weather_specialist', 'graph.node.parent_id': 'triage' }),
      {
        parent: task,
      },
    );
    const tool = f.make(
      'getWeather',
      OI('TOOL', { 'tool.name': 'getWeather', 'input.value': '{"city":"Paris"}' }),
      { parent: specialist },
    );
    const trace = reconstructTrace(
      encloseChildren([wrapper, task, triage, turn, gen, handoff, specialist, tool]),
    );
    expect(trace.runs.map((r) => r.agent)).toEqual(['triage']);
    const run = trace.runs[0]!;
    expect(run.calls.map((c) => [c.name, c.args, c.callId])).toEqual([
      ['transfer_to_weather_specialist', {}, 'call_h1'],
    ]);
    expect(run.children.map((c) => c.agent)).toEqual(['weather_specialist']);
    expect(run.children[0]!.parent).toBe(run);
  });

  it('a handoff source is found by agent name when no run has that graph node id', () => {
    const f = new SpanFactory();
    const a = f.make(
      'invoke_agent triage',
      { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'triage' },
      { start: 0, end: 5 },
    );
    const b = f.make('specialist', OI('AGENT', { 'graph.node.id': 'n2', 'graph.node.parent_id': 'triage' }), {
      start: 6,
      end: 9,
    });
    const trace = reconstructTrace([a, b]);
    expect(trace.runs.map((r) => r.agent)).toEqual(['triage']);
    expect(trace.runs[0]!.children.map((r) => r.agent)).toEqual(['specialist']);
  });

  it('agno: a member that names the team as graph parent is its child; a graph root under the team is not', () => {
    const f = new SpanFactory();
    const team = f.make('Front_Desk.run', OI('AGENT', { 'graph.node.id': 't1', 'agent.name': 'Front Desk' }));
    const delegate = f.make(
      'delegate_task_to_member',
      OI('TOOL', { 'tool.name': 'delegate_task_to_member', 'input.value': '{}' }),
      { parent: team },
    );
    const helper = f.make(
      'Helper_Agent.run',
      OI('AGENT', { 'graph.node.id': 'h1', 'graph.node.parent_id': 't1', 'agent.name': 'Helper' }),
      {
        parent: team,
      },
    );
    const booking = f.make(
      'Booking_Agent.run',
      OI('AGENT', { 'graph.node.id': 'b1', 'agent.name': 'Booking' }),
      { parent: team },
    );
    const trace = reconstructTrace(encloseChildren([team, delegate, helper, booking]));
    expect(trace.runs.map((r) => [r.agent, r.children.map((c) => c.agent)])).toEqual([
      ['Front Desk', ['Helper']],
      ['Booking', []],
    ]);
  });

  it('a span that starts after its agent span ended belongs to the enclosing run still open (agno context leak)', () => {
    const f = new SpanFactory();
    const outer = f.make(
      'invoke_agent outer',
      { 'gen_ai.operation.name': 'invoke_agent' },
      { start: 0, end: 100 },
    );
    const inner = f.make(
      'invoke_agent inner',
      { 'gen_ai.operation.name': 'invoke_agent' },
      { parent: outer, start: 10, end: 20 },
    );
    const during = f.make(
      'execute_tool a',
      { 'gen_ai.operation.name': 'execute_tool' },
      { parent: inner, start: 12, end: 13 },
    );
    const after = f.make(
      'execute_tool b',
      { 'gen_ai.operation.name': 'execute_tool' },
      { parent: inner, start: 30, end: 31 },
    );
    const [run] = reconstructTrace([outer, inner, during, after]).runs;
    expect(run!.calls.map((c) => c.name)).toEqual(['b']);
    expect(run!.children[0]!.calls.map((c) => c.name)).toEqual(['a']);
  });

  it('run attributes are the run span’s plus the resource’s; hasErrorSpan covers owned spans and nested runs', () => {
    const t = new TraceBuilder({ resource: { 'service.name': 'svc', 'deployment.environment': 'prod' } });
    const a = t.agent('a', { 'app.tenant': 'acme' });
    a.span('GET /x').error('500');
    const run = rebuild(t).runs[0]!;
    expect(run.attributes).toMatchObject({
      'service.name': 'svc',
      'deployment.environment': 'prod',
      'app.tenant': 'acme',
      'gen_ai.agent.name': 'a',
    });
    expect(run.hasErrorSpan).toBe(true);
  });

  it('agno continue_run: the pending call in the first model input is this run’s (executed, or refused with the tool message)', () => {
    const f = new SpanFactory();
    const run = f.make(
      'Files_Agent.continue_run',
      OI('AGENT', { 'graph.node.id': 'n', 'agent.name': 'Files Agent' }),
    );
    const llm = f.make(
      'ScriptedModel.invoke',
      OI('LLM', {
        'llm.input_messages.1.message.role': 'assistant',
        'llm.input_messages.1.message.tool_calls.0.tool_call.id': 'call_015',
        'llm.input_messages.1.message.tool_calls.0.tool_call.function.name': 'delete_file',
        'llm.input_messages.1.message.tool_calls.0.tool_call.function.arguments': '{"path": "/etc/hosts"}',
        'llm.input_messages.2.message.role': 'tool',
        'llm.input_messages.2.message.tool_call_id': 'call_015',
        'llm.input_messages.2.message.content': 'Not allowed to touch /etc',
      }),
      { parent: run },
    );
    const [r] = reconstructTrace(encloseChildren([run, llm])).runs;
    expect(r!.calls.map((c) => [c.name, c.args, c.status, c.requestOnly, c.errorMessage])).toEqual([
      ['delete_file', { path: '/etc/hosts' }, 'refused', true, 'Not allowed to touch /etc'],
    ]);
    expect(r!.history).toEqual([]);
  });
});

describe('reconstructTrace: statuses of request-only calls', () => {
  it('a span the framework rejected before running makes its request request-only', () => {
    const f = new SpanFactory();
    const agent = f.make('weather_agent', OI('AGENT', { 'graph.node.id': 'w' }));
    const gen = f.make('generation', OI('LLM', llmCall(0, 'getWeather', '{"city":42}', 'call_i1')), {
      parent: agent,
    });
    const bad = f.make('getWeather', OI('TOOL', { 'tool.name': 'getWeather' }), {
      parent: agent,
      status: {
        code: 2,
        message:
          'Error running tool (non-fatal): {"error":"InvalidToolInputError: Invalid JSON input for tool"}',
      },
    });
    const gen2 = f.make('generation', OI('LLM', {}), { parent: agent });
    const run = reconstructTrace(encloseChildren([agent, gen, bad, gen2])).runs[0]!;
    expect(run.executions).toEqual([]);
    expect(run.calls.map((c) => [c.name, c.args, c.status, c.requestOnly])).toEqual([
      ['getWeather', { city: 42 }, 'refused', true],
    ]);
    expect(run.calls[0]!.errorMessage).toMatch(/InvalidToolInputError/);
  });

  it('AI SDK: an unknown tool is refused with the error text of the next prompt', () => {
    const f = new SpanFactory();
    const root = f.make('ai.generateText', { 'ai.telemetry.functionId': 'unknown_tool' });
    const g1 = f.make(
      'ai.generateText.doGenerate',
      {
        'ai.response.toolCalls':
          '[{"toolCallId":"call_u1","toolName":"launchRockets","input":"{\\"target\\":\\"moon\\"}"}]',
      },
      { parent: root },
    );
    const g2 = f.make(
      'ai.generateText.doGenerate',
      {
        'ai.prompt.messages': JSON.stringify([
          {
            role: 'assistant',
            content: [
              {
                type: 'tool-call',
                toolCallId: 'call_u1',
                toolName: 'launchRockets',
                input: { target: 'moon' },
              },
            ],
          },
          {
            role: 'tool',
            content: [
              {
                type: 'tool-result',
                toolCallId: 'call_u1',
                toolName: 'launchRockets',
                output: { type: 'error-text', value: 'Model tried to call unavailable tool' },
              },
            ],
          },
        ]),
      },
      { parent: root },
    );
    const run = reconstructTrace(encloseChildren([root, g1, g2])).runs[0]!;
    expect(run.agent).toBe('unknown_tool');
    expect(run.calls).toMatchObject([
      {
        name: 'launchRockets',
        status: 'refused',
        requestOnly: true,
        errorMessage: 'Model tried to call unavailable tool',
      },
    ]);
    expect(run.requests[0]!.refusal).toBe('Model tried to call unavailable tool');
    // The prompt's tool-call part is this run's own request, not history.
    expect(run.history).toEqual([]);
  });

  it('a call in the run’s last model output, never answered, is paused unless the run failed', () => {
    const build = (failed: boolean) => {
      const t = new TraceBuilder();
      const a = t.agent('files');
      if (failed) a.error('aborted');
      a.llm({ toolCalls: [{ name: 'delete_file', id: 'c1', args: { path: '/tmp/x' } }] });
      return rebuild(t).runs[0]!.calls.map((c) => c.status);
    };
    expect(build(false)).toEqual(['paused']);
    expect(build(true)).toEqual(['refused']);
  });

  it('a decision event marks a request pending (paused) or denied (refused)', () => {
    const f = new SpanFactory();
    const agent = f.make('invoke_agent a', { 'gen_ai.operation.name': 'invoke_agent' });
    const out = (calls: Array<[string, string]>) =>
      JSON.stringify([
        {
          role: 'assistant',
          parts: calls.map(([id, name]) => ({ type: 'tool_call', id, name, arguments: {} })),
        },
      ]);
    const llm1 = f.make(
      'chat m',
      {
        'gen_ai.operation.name': 'chat',
        'gen_ai.output.messages': out([
          ['d1', 'deploy'],
          ['d2', 'rollback'],
        ]),
      },
      {
        parent: agent,
        events: [
          {
            name: 'gen_ai.tool.call.decision',
            time: 0,
            attributes: {
              'gen_ai.tool.call.decision.outcome': 'require_approval',
              'gen_ai.tool.call.id': 'd1',
            },
          },
          {
            name: 'gen_ai.tool.call.decision',
            time: 0,
            attributes: { 'gen_ai.tool.call.decision.outcome': 'deny', 'gen_ai.tool.call.id': 'd2' },
          },
        ],
      },
    );
    const llm2 = f.make('chat m', { 'gen_ai.operation.name': 'chat' }, { parent: agent });
    const run = reconstructTrace(encloseChildren([agent, llm1, llm2])).runs[0]!;
    expect(run.calls.map((c) => [c.name, c.status])).toEqual([
      ['deploy', 'paused'],
      ['rollback', 'refused'],
    ]);
    // A denial is a rejection at the approval step; a pending decision is not.
    expect(run.calls.map((c) => c.request?.rejected ?? false)).toEqual([false, true]);
  });

  // A call a person rejected at an approval step vs one refused before it could run.
  describe('approval rejections are told from refusals before the call could run', () => {
    const answered = (parts: unknown[]) => {
      const f = new SpanFactory();
      const agent = f.make('invoke_agent a', { 'gen_ai.operation.name': 'invoke_agent' });
      const llm1 = f.make(
        'chat m',
        {
          'gen_ai.operation.name': 'chat',
          'gen_ai.output.messages': JSON.stringify([
            {
              role: 'assistant',
              parts: [
                { type: 'tool_call', id: 'r1', name: 'delete_file', arguments: { path: '/etc/hosts' } },
                { type: 'tool_call', id: 'r2', name: 'get_wether', arguments: {} },
              ],
            },
          ]),
        },
        { parent: agent },
      );
      const llm2 = f.make(
        'chat m',
        {
          'gen_ai.operation.name': 'chat',
          'gen_ai.input.messages': JSON.stringify([
            {
              role: 'assistant',
              parts: [
                { type: 'tool_call', id: 'r1', name: 'delete_file', arguments: { path: '/etc/hosts' } },
                { type: 'tool_call', id: 'r2', name: 'get_wether', arguments: {} },
              ],
            },
            { role: 'tool', parts },
          ]),
        },
        { parent: agent },
      );
      const run = reconstructTrace(encloseChildren([agent, llm1, llm2])).runs[0]!;
      return run.calls.map((c) => ({
        name: c.name,
        status: c.status,
        requestOnly: c.requestOnly,
        rejected: c.request?.rejected ?? false,
        why: c.errorMessage,
      }));
    };
    const unknownTool = {
      type: 'tool_call_response',
      id: 'r2',
      response: 'Error: The requested tool does not exist or is not available.',
    };

    it('an approval response with approved: false (AI SDK)', () => {
      expect(
        answered([
          { type: 'tool_approval_response', approval_id: 'r1', approved: false, reason: 'no' },
          unknownTool,
        ]),
      ).toEqual([
        { name: 'delete_file', status: 'refused', requestOnly: true, rejected: true, why: 'no' },
        {
          name: 'get_wether',
          status: 'refused',
          requestOnly: true,
          rejected: false,
          why: unknownTool.response,
        },
      ]);
    });

    it('a denied tool output, {denied: true, reason}', () => {
      const calls = answered([
        { type: 'tool_call_response', id: 'r1', response: { denied: true, reason: 'not today' } },
        unknownTool,
      ]);
      expect(calls.map((c) => [c.rejected, c.why])).toEqual([
        [true, 'not today'],
        [false, unknownTool.response],
      ]);
    });

    it('OpenAI Agents’ rejection text as the tool output', () => {
      const calls = answered([
        { type: 'tool_call_response', id: 'r1', response: 'Tool execution was not approved.' },
        unknownTool,
      ]);
      expect(calls.map((c) => c.rejected)).toEqual([true, false]);
    });

    it('an ordinary error result is not a rejection', () => {
      const calls = answered([
        { type: 'tool_call_response', id: 'r1', response: 'Permission denied: /etc/hosts' },
        unknownTool,
      ]);
      expect(calls.map((c) => c.rejected)).toEqual([false, false]);
    });
  });
});

describe('reconstructTrace: history', () => {
  it('a span flagged toolwatch.from_history and its subtree are history, never calls', () => {
    const t = new TraceBuilder();
    const a = t.agent('a');
    const replay = a.span('replay', { 'toolwatch.from_history': true });
    replay.tool('old_tool', { id: 'h1', args: { x: 1 } });
    replay.llm({ toolCalls: [{ name: 'older', id: 'h0', args: {} }] });
    a.tool('new_tool', { id: 'n1' });
    const run = rebuild(t).runs[0]!;
    expect(run.calls.map((c) => c.name)).toEqual(['new_tool']);
    expect(run.history).toEqual([
      expect.objectContaining({ name: 'old_tool', callId: 'h1', args: { x: 1 }, reason: 'flag' }),
      expect.objectContaining({ name: 'older', callId: 'h0', reason: 'flag' }),
    ]);
  });

  it('input-message calls matching no execution or output request are history; matching ones are not', () => {
    const t = new TraceBuilder();
    const a = t.agent('a');
    a.llm({ toolCalls: [{ name: 'w', id: 'c1', args: { city: 'Paris' } }] });
    a.tool('w', { id: 'c1', args: { city: 'Paris' } });
    a.llm({
      inputMessages: [
        {
          role: 'assistant',
          parts: [{ type: 'tool_call', id: 'old', name: 'w', arguments: { city: 'Rome' } }],
        },
        {
          role: 'assistant',
          parts: [{ type: 'tool_call', id: 'c1', name: 'w', arguments: { city: 'Paris' } }],
        },
        { role: 'assistant', parts: [{ type: 'tool_call', name: 'w', arguments: { city: 'Paris' } }] },
        {
          role: 'assistant',
          parts: [
            { type: 'tool_call', id: 'flagged', name: 'w', arguments: { city: 'Oslo' }, from_history: true },
          ],
        },
      ],
    });
    const run = rebuild(t).runs[0]!;
    expect(run.history.map((h) => [h.name, h.callId, h.reason])).toEqual([
      ['w', 'flagged', 'part_flag'],
      ['w', 'old', 'input_messages'],
    ]);
    expect(run.calls).toHaveLength(1);
  });

  it('AI SDK 7: every tool part of the root invoke_agent input is history, even if it matches', () => {
    const t = new TraceBuilder();
    const a = t.agent('a', {
      'gen_ai.input.messages': JSON.stringify([
        {
          role: 'assistant',
          parts: [{ type: 'tool_call', id: 'c1', name: 'w', arguments: { city: 'Paris' } }],
        },
      ]),
    });
    a.llm({ toolCalls: [{ name: 'w', id: 'c2', args: { city: 'Paris' } }] });
    a.tool('w', { id: 'c2', args: { city: 'Paris' } });
    const run = rebuild(t).runs[0]!;
    expect(run.history.map((h) => [h.callId, h.reason])).toEqual([['c1', 'agent_input']]);
    expect(run.calls.map((c) => c.callId)).toEqual(['c2']);
  });

  it('history is per run and de-duplicated across the LLM spans that repeat it', () => {
    const t = new TraceBuilder();
    const a = t.agent('a');
    const old = [{ role: 'assistant', parts: [{ type: 'tool_call', id: 'old', name: 'w', arguments: {} }] }];
    a.llm({ inputMessages: old });
    a.llm({ inputMessages: old });
    expect(rebuild(t).runs[0]!.history).toHaveLength(1);
  });
});

describe('reconstructTrace: millisecond clocks (OTel JS starts spans at Date.now())', () => {
  const toolCalls = (id: string, name: string, input: string) =>
    JSON.stringify([{ toolCallId: id, toolName: name, input }]);
  const prompt = (calls: Array<[string, string]>) =>
    JSON.stringify(
      calls.map(([id, name]) => ({
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId: id, toolName: name, input: {} }],
      })),
    );

  it('orders same-millisecond spans causally: an LLM after the calls in its input, a tool after its request', () => {
    const f = new SpanFactory();
    // Recorded as the SDK does: whole-ms starts, ends = start + precise duration (so ends are out of order too).
    const root = f.make('ai.generateText', { 'ai.telemetry.functionId': 'w' }, { start: 0, end: 6.1 });
    const g1 = f.make(
      'ai.generateText.doGenerate',
      { 'ai.response.toolCalls': toolCalls('call_1', 'getWeather', '{"city":"Paris"}') },
      { parent: root, start: 1, end: 1.0965, spanId: 'ffff000000000001' },
    );
    const t1 = f.make(
      'ai.toolCall',
      {
        'ai.toolCall.name': 'getWeather',
        'ai.toolCall.id': 'call_1',
        'ai.toolCall.args': '{"city":"Paris"}',
      },
      { parent: root, start: 1, end: 1.0646, spanId: 'eeee000000000002' },
    );
    const g2 = f.make(
      'ai.generateText.doGenerate',
      {
        'ai.response.toolCalls': toolCalls('call_2', 'celsiusToFahrenheit', '{"c":18}'),
        'ai.prompt.messages': prompt([['call_1', 'getWeather']]),
      },
      { parent: root, start: 1, end: 1.0745, spanId: 'dddd000000000003' },
    );
    const t2 = f.make(
      'ai.toolCall',
      {
        'ai.toolCall.name': 'celsiusToFahrenheit',
        'ai.toolCall.id': 'call_2',
        'ai.toolCall.args': '{"c":18}',
      },
      { parent: root, start: 1, end: 1.0465, spanId: 'cccc000000000004' },
    );
    const g3 = f.make(
      'ai.generateText.doGenerate',
      {
        'ai.prompt.messages': prompt([
          ['call_1', 'getWeather'],
          ['call_2', 'celsiusToFahrenheit'],
        ]),
      },
      { parent: root, start: 6, end: 6.1 },
    );
    const run = reconstructTrace([t2, g3, t1, root, g2, g1]).runs[0]!;
    expect(run.calls.map((c) => c.name)).toEqual(['getWeather', 'celsiusToFahrenheit']);
    expect(run.requests.map((r) => r.callId)).toEqual(['call_1', 'call_2']);
  });

  it('a child starting within 1 ms after a whole-millisecond parent’s recorded end still belongs to it', () => {
    const f = new SpanFactory();
    const root = f.make('ai.generateText', { 'ai.telemetry.functionId': 'w' }, { start: 0, end: 1.83 });
    const tool = f.make(
      'ai.toolCall',
      { 'ai.toolCall.name': 't', 'ai.toolCall.id': 'c' },
      { parent: root, start: 2, end: 2.05 },
    );
    const trace = reconstructTrace([root, tool]);
    expect(trace.runs.map((r) => [r.agent, r.calls.map((c) => c.name)])).toEqual([['w', ['t']]]);
  });
});

describe('reconstructTrace: LLM calls inside a tool', () => {
  it('an LLM span inside a tool span (no agent span between) asks for its own tools, not the run’s', () => {
    const t = new TraceBuilder();
    const a = t.agent('a');
    a.llm({ toolCalls: [{ name: 'summarize', id: 'c1', args: {} }] });
    const tool = a.tool('summarize', { id: 'c1', args: {} });
    tool.llm({ toolCalls: [{ name: 'internal_lookup', id: 'x1', args: {} }] });
    const run = rebuild(t).runs[0]!;
    expect(run.calls.map((c) => [c.name, c.requestOnly])).toEqual([['summarize', false]]);
    expect(run.requests.map((r) => r.name)).toEqual(['summarize']);
  });
});
