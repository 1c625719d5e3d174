import { describe, expect, it } from 'vitest';
import { genAiAgent, genAiLlm, genAiRole, genAiTool } from '../../src/conventions/gen-ai-semconv.js';
import { SpanFactory } from '../helpers/span-like.js';

const f = new SpanFactory();
const tool = (attrs: Record<string, unknown>, options = {}) =>
  f.make(
    `execute_tool ${attrs['gen_ai.tool.name'] ?? 'x'}`,
    { 'gen_ai.operation.name': 'execute_tool', ...attrs },
    options,
  );

describe('GenAI semconv adapter: tool spans', () => {
  it('reads name, id, JSON-string or structured arguments and the result (AI SDK 7 / Mastra 1.x shape)', () => {
    const facts = genAiTool(
      tool({
        'gen_ai.tool.name': 'getWeather',
        'gen_ai.tool.call.id': 'call_1',
        'gen_ai.tool.type': 'function',
        'gen_ai.tool.call.arguments': '{"city":"Paris"}',
        'gen_ai.tool.call.result': '{"city":"Paris","tempC":18}',
      }),
    );
    expect(facts).toMatchObject({
      convention: 'gen_ai',
      name: 'getWeather',
      callId: 'call_1',
      args: { city: 'Paris' },
      usable: true,
      result: { city: 'Paris', tempC: 18 },
      status: 'ok',
    });
    expect(
      genAiTool(tool({ 'gen_ai.tool.name': 't', 'gen_ai.tool.call.arguments': { a: [1] } }))!.args,
    ).toEqual({ a: [1] });
  });

  it('keeps unparseable arguments raw with the parser error', () => {
    const facts = genAiTool(
      tool({ 'gen_ai.tool.name': 't', 'gen_ai.tool.call.arguments': '{"city": "Par' }),
    )!;
    expect(facts.args).toBeUndefined();
    expect(facts.argsRaw).toBe('{"city": "Par');
    expect(facts.argsError).toMatch(/unparseable arguments/);
    expect(facts.usable).toBe(false);
  });

  it('takes the name from the span name when the attribute is missing', () => {
    const span = f.make('execute_tool lookup', { 'gen_ai.operation.name': 'execute_tool' });
    expect(genAiTool(span)!.name).toBe('lookup');
  });

  it('Google ADK: `<not specified>` ids are no id, vertex args/response are read, the merged span is not a tool', () => {
    const facts = genAiTool(
      tool({
        'gen_ai.tool.name': 'get_weather',
        'gen_ai.tool.call.id': '<not specified>',
        'gen_ai.tool.type': 'FunctionTool',
        'gcp.vertex.agent.tool_call_args': '{"city":"Rome"}',
        'gcp.vertex.agent.tool_response': '{"result":"sunny"}',
      }),
    )!;
    expect(facts.callId).toBeUndefined();
    expect(facts.args).toEqual({ city: 'Rome' });
    expect(facts.result).toEqual({ result: 'sunny' });
    const merged = f.make('execute_tool (merged)', {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': '(merged tools)',
      'gen_ai.tool.call.id': 'evt-1',
    });
    expect(genAiRole(merged)).toBe('other');
    expect(genAiTool(merged)).toBeUndefined();
  });

  it('Pydantic AI: output functions are not tools; deferral pauses; validation failures never ran', () => {
    expect(
      genAiRole(
        tool({ 'gen_ai.tool.name': 'final_result', 'logfire.msg': 'running output function: final_result' }),
      ),
    ).toBe('other');
    const deferred = genAiTool(
      tool({ 'gen_ai.tool.name': 'delete', 'pydantic_ai.tool.deferral.name': 'ApprovalRequired' }),
    )!;
    expect(deferred.status).toBe('paused');
    // Older instrumentation versions also set ERROR on deferrals: the deferral still wins.
    const deferredError = genAiTool(
      tool(
        { 'gen_ai.tool.name': 'delete', 'pydantic_ai.tool.deferral.name': 'CallDeferred' },
        { status: { code: 2 } },
      ),
    )!;
    expect(deferredError.status).toBe('paused');
    const invalid = genAiTool(
      tool(
        { 'gen_ai.tool.name': 'get', 'pydantic_ai.tool.failure_stage': 'validation' },
        { status: { code: 2, message: 'bad' } },
      ),
    )!;
    expect(invalid.notRun).toBe(true);
  });

  it('status: ERROR, error.type, gen_ai.tool.success=false and error=true are errors; UNSET and OK are ok', () => {
    const status = (attrs: Record<string, unknown>, code: 0 | 1 | 2 = 0) =>
      genAiTool(tool({ 'gen_ai.tool.name': 't', ...attrs }, { status: { code } }))!.status;
    expect(status({}, 0)).toBe('ok');
    expect(status({}, 1)).toBe('ok');
    expect(status({}, 2)).toBe('error');
    expect(status({ 'error.type': 'TimeoutError' })).toBe('error');
    expect(status({ 'gen_ai.tool.success': false })).toBe('error');
    expect(status({ 'gen_ai.tool.success': 'false' })).toBe('error');
    expect(status({ error: true })).toBe('error');
    expect(status({ 'gen_ai.tool.call.decision.outcome': 'deny' })).toBe('refused');
    expect(status({ 'gen_ai.tool.call.decision.outcome': 'require_approval' })).toBe('paused');
    expect(status({ 'toolwatch.tool.status': 'paused' })).toBe('paused');
    expect(status({ 'toolwatch.tool.status': 'refused' }, 2)).toBe('refused');
  });

  it('error type and message come from error.type / status / exception event', () => {
    const facts = genAiTool(
      tool(
        { 'gen_ai.tool.name': 't' },
        {
          status: { code: 2 },
          events: [
            {
              name: 'exception',
              time: 1,
              attributes: { 'exception.type': 'DbError', 'exception.message': 'refused' },
            },
          ],
        },
      ),
    )!;
    expect(facts).toMatchObject({ status: 'error', errorType: 'DbError', errorMessage: 'refused' });
  });
});

describe('GenAI semconv adapter: agent and LLM spans', () => {
  it('names agents by gen_ai.agent.name (AI SDK 7 names the span after the model) and reads the id', () => {
    const span = f.make('invoke_agent mock-model-id', {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'multi_step',
      'gen_ai.agent.id': 'agent-1',
      'gen_ai.tool.definitions':
        '[{"type":"function","name":"getWeather","description":"w","parameters":{"type":"object"}}]',
    });
    expect(genAiAgent(span)).toMatchObject({
      name: 'multi_step',
      agentId: 'agent-1',
      toolDefinitions: [{ name: 'getWeather', description: 'w', parameters: { type: 'object' } }],
    });
    expect(
      genAiAgent(f.make('invoke_agent researcher', { 'gen_ai.operation.name': 'invoke_agent' }))!.name,
    ).toBe('researcher');
  });

  it('every tool part of the agent input is history (AI SDK 7 root input)', () => {
    const span = f.make('invoke_agent m', {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.input.messages': JSON.stringify([
        {
          role: 'assistant',
          parts: [{ type: 'tool_call', id: 'old1', name: 'getWeather', arguments: { city: 'Rome' } }],
        },
        { role: 'tool', parts: [{ type: 'tool_call_response', id: 'old1', response: 'sunny' }] },
        { role: 'user', parts: [{ type: 'text', content: 'and Paris?' }] },
      ]),
    });
    expect(genAiAgent(span)!.history).toEqual([
      { name: 'getWeather', callId: 'old1', args: { city: 'Rome' }, reason: 'agent_input' },
    ]);
  });

  it('Pydantic AI: calls before pydantic_ai.new_message_index are history, later ones are not', () => {
    const messages = [
      { role: 'assistant', parts: [{ type: 'tool_call', id: 'p1', name: 'lookup', arguments: '{"q":"a"}' }] },
      { role: 'user', parts: [{ type: 'tool_call_response', id: 'p1', response: 'x' }] },
      { role: 'assistant', parts: [{ type: 'tool_call', id: 'n1', name: 'lookup', arguments: '{"q":"b"}' }] },
    ];
    const span = f.make('invoke_agent pa', {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'pa',
      'pydantic_ai.all_messages': JSON.stringify(messages),
      'pydantic_ai.new_message_index': 2,
    });
    expect(genAiAgent(span)!.history).toEqual([
      { name: 'lookup', callId: 'p1', args: { q: 'a' }, reason: 'new_message_index' },
    ]);
  });

  it('LLM spans: requests from output tool_call parts; input parts and responses (`response` or `result`)', () => {
    const span = f.make('chat mock', {
      'gen_ai.operation.name': 'chat',
      'gen_ai.output.messages': JSON.stringify([
        {
          role: 'assistant',
          finish_reason: 'tool_call',
          parts: [
            { type: 'text', content: 'let me check' },
            { type: 'tool_call', id: 'c1', name: 'getWeather', arguments: { city: 'Paris' } },
            { type: 'tool_call', name: 'convert', arguments: '{"c":18}' },
          ],
        },
      ]),
      'gen_ai.input.messages': JSON.stringify([
        {
          role: 'assistant',
          parts: [{ type: 'tool_call', id: 'h1', name: 'old', arguments: {}, from_history: true }],
        },
        { role: 'tool', parts: [{ type: 'tool_call_response', id: ' h2', result: 'rainy' }] },
        {
          role: 'tool',
          parts: [{ type: 'tool_call_response', id: 'h3', response: { denied: true, reason: 'no' } }],
        },
      ]),
    });
    const facts = genAiLlm(span)!;
    expect(facts.requests.map((r) => [r.name, r.callId, r.args])).toEqual([
      ['getWeather', 'c1', { city: 'Paris' }],
      ['convert', undefined, { c: 18 }],
    ]);
    expect(facts.inputCalls).toMatchObject([{ name: 'old', callId: 'h1', fromHistory: true }]);
    expect(facts.refusals).toEqual([
      { callId: 'h2', text: 'rainy' },
      { callId: 'h3', text: 'no', rejected: true },
    ]);
  });

  it('decision events refuse or pend calls by id', () => {
    const span = f.make(
      'chat m',
      { 'gen_ai.operation.name': 'chat' },
      {
        events: [
          {
            name: 'gen_ai.tool.call.decision',
            time: 1,
            attributes: { 'gen_ai.tool.call.decision.outcome': 'deny', 'gen_ai.tool.call.id': 'd1' },
          },
          {
            name: 'gen_ai.tool.call.decision',
            time: 2,
            attributes: {
              'gen_ai.tool.call.decision.outcome': 'require_approval',
              'gen_ai.tool.call.id': 'd2',
            },
          },
          {
            name: 'gen_ai.tool.call.decision',
            time: 3,
            attributes: { 'gen_ai.tool.call.decision.outcome': 'allow' },
          },
        ],
      },
    );
    expect(genAiLlm(span)!.refusals).toEqual([
      { callId: 'd1', text: 'decision: deny', rejected: true },
      { callId: 'd2', text: 'decision: require_approval', pending: true },
    ]);
  });

  it('steps, workflows and unknown operations are not claimed as agents, tools or LLMs', () => {
    expect(genAiRole(f.make('step 1', { 'gen_ai.operation.name': 'agent_step' }))).toBe('other');
    expect(genAiRole(f.make('invoke_workflow w', { 'gen_ai.operation.name': 'invoke_workflow' }))).toBe(
      'other',
    );
    expect(genAiRole(f.make('tool.execute x', { 'gen_ai.operation.name': 'tool.execute' }))).toBeUndefined();
    expect(genAiRole(f.make('GET /', { 'http.method': 'GET' }))).toBeUndefined();
  });

  it('never throws on attributes of the wrong type', () => {
    const weird = tool({
      'gen_ai.tool.name': 42,
      'gen_ai.tool.call.id': { x: 1 },
      'gen_ai.tool.call.arguments': 7,
    });
    expect(() => genAiTool(weird)).not.toThrow();
    expect(genAiTool(weird)!.name).toBe('42');
    const llm = f.make('chat', {
      'gen_ai.operation.name': 'chat',
      'gen_ai.output.messages': '[{"parts": 5}, null, "x"]',
    });
    expect(genAiLlm(llm)!.requests).toEqual([]);
  });
});

describe('GenAI semconv adapter: Mastra 1.x specifics', () => {
  it('agent_step spans with mastra.model_step.output carry the requests the chat span leaves out', () => {
    const step = f.make('agent_step weather_agent', {
      'gen_ai.operation.name': 'agent_step',
      'mastra.model_step.output':
        '{"text":"","toolCalls":[{"toolCallId":"call_i1","toolName":"getWeather","args":{"city":42}}]}',
    });
    expect(genAiRole(step)).toBe('llm');
    expect(genAiLlm(step)!.requests).toMatchObject([
      { name: 'getWeather', callId: 'call_i1', args: { city: 42 } },
    ]);
    expect(genAiRole(f.make('step 1', { 'gen_ai.operation.name': 'agent_step' }))).toBe('other');
  });

  it('client_tool_call spans only confirm a call; schema-rejected execute_tool spans never ran', () => {
    const client = f.make('client_tool_call launchRockets', {
      'gen_ai.operation.name': 'client_tool_call',
      'mastra.metadata.args': '{"target":"moon"}',
    });
    const facts = genAiLlm(client)!;
    expect(facts.requests).toEqual([]);
    expect(facts.hints).toMatchObject([{ name: 'launchRockets', args: { target: 'moon' } }]);
    const rejected = genAiTool(
      tool({
        'gen_ai.tool.name': 'getWeather',
        'gen_ai.tool.call.arguments': '{"city":42}',
        'gen_ai.tool.call.result': '{"error":true,"message":"Tool input validation failed for getWeather."}',
      }),
    )!;
    expect(rejected.notRun).toBe(true);
    const toolError = genAiTool(
      tool({ 'gen_ai.tool.name': 'x', 'gen_ai.tool.call.result': '{"error":true,"message":"other"}' }),
    )!;
    expect(toolError.notRun).toBeUndefined();
  });
});

describe('GenAI semconv adapter: Pydantic AI instrumentation version 2', () => {
  it('reads `running tool` spans (tool_arguments / tool_response) and `agent run` spans', () => {
    const span = f.make('running tool', {
      'gen_ai.tool.name': 'lookup',
      'gen_ai.tool.call.id': 'p1',
      tool_arguments: '{"q":"x"}',
      tool_response: 'found',
    });
    expect(genAiTool(span)).toMatchObject({
      name: 'lookup',
      callId: 'p1',
      args: { q: 'x' },
      result: 'found',
      status: 'ok',
    });
    expect(genAiAgent(f.make('agent run', { agent_name: 'support' }))!.name).toBe('support');
    expect(genAiRole(f.make('running tool', {}))).toBeUndefined();
  });
});

describe('GenAI semconv adapter: Google ADK model calls', () => {
  it('reads call_llm: requests from the llm_response function calls, history and results from llm_request', () => {
    const span = f.make('call_llm', {
      'gen_ai.system': 'gcp.vertex.agent',
      'gcp.vertex.agent.llm_request': JSON.stringify({
        contents: [
          { role: 'user', parts: [{ text: 'Weather?' }] },
          {
            role: 'model',
            parts: [{ function_call: { id: 'adk-1', name: 'get_weather', args: { city: 'Rome' } } }],
          },
          {
            role: 'user',
            parts: [
              { function_response: { id: 'adk-1', name: 'get_weather', response: { result: 'sunny' } } },
            ],
          },
        ],
      }),
      'gcp.vertex.agent.llm_response': JSON.stringify({
        content: {
          role: 'model',
          parts: [{ functionCall: { id: 'adk-2', name: 'get_weather', args: { city: 'Oslo' } } }],
        },
      }),
    });
    expect(genAiRole(span)).toBe('llm');
    const facts = genAiLlm(span)!;
    expect(facts.requests).toMatchObject([{ name: 'get_weather', callId: 'adk-2', args: { city: 'Oslo' } }]);
    expect(facts.inputCalls).toMatchObject([
      { name: 'get_weather', callId: 'adk-1', args: { city: 'Rome' } },
    ]);
    expect(facts.refusals).toEqual([{ callId: 'adk-1', name: 'get_weather', text: '{"result":"sunny"}' }]);
  });
});
