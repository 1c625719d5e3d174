import { describe, expect, it, vi } from 'vitest';
import {
  openInference,
  openInferenceAgent,
  openInferenceLlm,
  openInferenceRole,
  openInferenceTool,
} from '../../src/conventions/openinference.js';
import { SpanFactory } from '../helpers/span-like.js';

const f = new SpanFactory();
const TOOL = { 'openinference.span.kind': 'TOOL' };

describe('OpenInference adapter', () => {
  it('classifies by openinference.span.kind; CHAIN and others are structure', () => {
    expect(openInferenceRole(f.make('x', TOOL))).toBe('tool');
    expect(openInferenceRole(f.make('x', { 'openinference.span.kind': 'AGENT' }))).toBe('agent');
    expect(openInferenceRole(f.make('x', { 'openinference.span.kind': 'LLM' }))).toBe('llm');
    expect(openInferenceRole(f.make('x', { 'openinference.span.kind': 'CHAIN' }))).toBe('other');
    expect(openInferenceRole(f.make('x', {}))).toBeUndefined();
  });

  it("does not parse a model span's input.value that names no tool call (most inputs, every one before a run's first call)", () => {
    const llm = (input: string) =>
      f.make('ChatOpenAI', { 'openinference.span.kind': 'LLM', 'input.value': input });
    const plain = JSON.stringify({ messages: [{ role: 'user', content: 'x'.repeat(2000) }], model: 'gpt' });
    const parse = vi.spyOn(JSON, 'parse');
    try {
      expect(openInference.llmInput(llm(plain))).toEqual({ inputCalls: [], refusals: [] });
      expect(parse.mock.calls.filter(([text]) => text === plain)).toHaveLength(0);
    } finally {
      parse.mockRestore();
    }
    // One that does is read (an OpenAI chat request's tool result, agno's history flags).
    const withTool = JSON.stringify({
      messages: [
        {
          role: 'assistant',
          tool_calls: [{ id: 'c1', function: { name: 'lookup', arguments: '{}' } }],
          from_history: true,
        },
        { role: 'tool', tool_call_id: 'c2', content: 'Invalid input for tool lookup' },
      ],
    });
    const read = openInference.llmInput(llm(withTool));
    expect(read.inputCalls.map((c) => [c.name, c.callId, c.fromHistory])).toEqual([['lookup', 'c1', true]]);
    expect(read.refusals.map((r) => r.callId)).toEqual(['c2']);
  });

  it('reads an OpenAI Agents TOOL span: tool.name, input.value JSON, output.value', () => {
    const span = f.make('getWeather', {
      ...TOOL,
      'tool.name': 'getWeather',
      'input.value': '{"city":"Paris"}',
      'output.value': '{"city":"Paris","tempC":18}',
    });
    expect(openInferenceTool(span)).toMatchObject({
      convention: 'openinference',
      name: 'getWeather',
      args: { city: 'Paris' },
      usable: true,
      result: { city: 'Paris', tempC: 18 },
      status: 'ok',
    });
    expect(openInferenceTool(span)!.callId).toBeUndefined();
  });

  it('LangChain unwraps a single string argument: kept, but not usable (the request args win)', () => {
    const span = f.make('getWeather', {
      ...TOOL,
      'tool.name': 'getWeather',
      'input.value': 'Paris',
      'output.value':
        '{"output":{"lc":1,"type":"constructor","id":["langchain_core","messages","ToolMessage"],"kwargs":{"status":"success","content":"{}","tool_call_id":"call_1","name":"getWeather"}}}',
    });
    const facts = openInferenceTool(span)!;
    expect(facts.args).toBe('Paris');
    expect(facts.usable).toBe(false);
    // The serialized ToolMessage is the only place LangGraph records the call id.
    expect(facts.callId).toBe('call_1');
  });

  it('redacted input falls back to tool.parameters (agno writes the arguments there, unmasked)', () => {
    const facts = openInferenceTool(
      f.make('multiply', {
        ...TOOL,
        'tool.name': 'multiply',
        'input.value': '__REDACTED__',
        'tool.parameters': '{"a":2,"b":3}',
      }),
    )!;
    expect(facts.args).toEqual({ a: 2, b: 3 });
    const hidden = openInferenceTool(
      f.make('multiply', { ...TOOL, 'tool.name': 'multiply', 'input.value': '__REDACTED__' }),
    )!;
    expect(hidden.args).toBeUndefined();
    expect(hidden.usable).toBe(false);
  });

  it('handoff TOOL spans answer to transfer_to_<agent> and take the model’s arguments', () => {
    const facts = openInferenceTool(
      f.make('handoff to weather_specialist', {
        ...TOOL,
        'tool.name': 'handoff_to_weather_specialist',
        'input.value': '{"from_agent":"triage"}',
        'output.value': '{"to_agent":"weather_specialist"}',
      }),
    )!;
    expect(facts.aliases).toEqual(['transfer_to_weather_specialist']);
    expect(facts.usable).toBe(false);
  });

  it('ERROR TOOL spans are errors; approval rejection text is a refusal with the leaked call id', () => {
    const failed = openInferenceTool(
      f.make(
        'flakyDb',
        { ...TOOL, 'tool.name': 'flakyDb' },
        {
          status: {
            code: 2,
            message: 'Error running tool (non-fatal): {"tool_name":"flakyDb","error":"DB down"}',
          },
        },
      ),
    )!;
    expect(failed.status).toBe('error');
    const rejected = openInferenceTool(
      f.make(
        'deleteFile',
        { ...TOOL, 'tool.name': 'deleteFile' },
        {
          status: {
            code: 2,
            message:
              'Tool execution was not approved.: {"tool_name":"deleteFile","error":"Tool execution for call_r9 was manually rejected by user."}',
          },
        },
      ),
    )!;
    expect(rejected).toMatchObject({ status: 'refused', callId: 'call_r9' });
  });

  it('invalid JSON input spans never ran the tool', () => {
    const facts = openInferenceTool(
      f.make(
        'getWeather',
        { ...TOOL, 'tool.name': 'getWeather', 'output.value': 'An error occurred while running the tool.' },
        {
          status: {
            code: 2,
            message:
              'Error running tool (non-fatal): {"error":"InvalidToolInputError: Invalid JSON input for tool"}',
          },
        },
      ),
    )!;
    expect(facts.notRun).toBe(true);
  });

  it('reads agents: name, graph node ids, agno ids; no node id marks a possible wrapper', () => {
    const agno = openInferenceAgent(
      f.make('Weather_Agent.run', {
        'openinference.span.kind': 'AGENT',
        'agent.name': 'Weather Agent',
        'graph.node.id': 'afb6139b4a65dfa5',
        'graph.node.parent_id': '09616119dd2c7934',
        'agno.agent.id': 'weather-agent',
        'input.value': 'Weather in Paris',
      }),
    )!;
    expect(agno).toMatchObject({
      name: 'Weather Agent',
      nodeId: 'afb6139b4a65dfa5',
      parentNodeId: '09616119dd2c7934',
      agentId: 'weather-agent',
      input: 'Weather in Paris',
    });
    expect(agno.wrapperCandidate).toBeUndefined();
    const root = openInferenceAgent(f.make('Agent workflow', { 'openinference.span.kind': 'AGENT' }))!;
    expect(root.wrapperCandidate).toBe(true);
    expect(
      openInferenceAgent(
        f.make('Files_Agent.continue_run', { 'openinference.span.kind': 'AGENT', 'graph.node.id': 'n' }),
      )!.continuation,
    ).toBe(true);
  });

  it('reads flattened LLM output tool calls (requests), input tool calls and tool messages', () => {
    const span = f.make('generation', {
      'openinference.span.kind': 'LLM',
      'llm.output_messages.0.message.role': 'assistant',
      'llm.output_messages.0.message.tool_calls.1.tool_call.id': 'call_2',
      'llm.output_messages.0.message.tool_calls.1.tool_call.function.name': 'convert',
      'llm.output_messages.0.message.tool_calls.1.tool_call.function.arguments': '{"c":18}',
      'llm.output_messages.0.message.tool_calls.0.tool_call.id': 'call_1',
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.name': 'getWeather',
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments': '{"city":"Paris"}',
      'llm.input_messages.1.message.role': 'assistant',
      'llm.input_messages.1.message.tool_calls.0.tool_call.id': 'old_1',
      'llm.input_messages.1.message.tool_calls.0.tool_call.function.name': 'getWeather',
      'llm.input_messages.1.message.tool_calls.0.tool_call.function.arguments': '{"city":"Rome"}',
      'llm.input_messages.2.message.role': 'tool',
      'llm.input_messages.2.message.tool_call_id': 'old_1',
      'llm.input_messages.2.message.content': 'Tool call limit reached.',
      'llm.tools.0.tool.json_schema':
        '{"type":"function","function":{"name":"getWeather","parameters":{"type":"object"}}}',
    });
    const facts = openInferenceLlm(span)!;
    expect(facts.requests.map((r) => [r.callId, r.name, r.args])).toEqual([
      ['call_1', 'getWeather', { city: 'Paris' }],
      ['call_2', 'convert', { c: 18 }],
    ]);
    expect(facts.inputCalls).toMatchObject([{ callId: 'old_1', name: 'getWeather', args: { city: 'Rome' } }]);
    expect(facts.refusals).toEqual([{ callId: 'old_1', text: 'Tool call limit reached.' }]);
    expect(facts.toolDefinitions).toEqual([{ name: 'getWeather', parameters: { type: 'object' } }]);
  });

  it('agno: messages flagged from_history in input.value are history candidates with the flag', () => {
    const span = f.make('OpenAIChat.invoke', {
      'openinference.span.kind': 'LLM',
      'input.value': JSON.stringify({
        messages: [
          {
            role: 'assistant',
            from_history: true,
            tool_calls: [
              {
                id: 'call_009',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city": "Paris"}' },
              },
            ],
          },
          { role: 'user', content: 'and Rome?', from_history: false },
        ],
      }),
    });
    expect(openInferenceLlm(span)!.inputCalls).toMatchObject([
      { name: 'get_weather', callId: 'call_009', args: { city: 'Paris' }, fromHistory: true },
    ]);
  });
});
