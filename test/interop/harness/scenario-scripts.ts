import { type AgentScript, Script, type ScriptedCall } from './script.js';
import type { ScenarioName } from './types.js';

/**
 * The scripted conversations, shared by every framework. Agent names are the ones the
 * framework gets (function id, agent name or graph name).
 */

export const WEATHER_AGENT = 'weather_agent';

export function multiStep(agent = WEATHER_AGENT): AgentScript[] {
  return [
    {
      agent,
      parent: null,
      turns: [
        { calls: [{ id: 'call_1', name: 'getWeather', args: { city: 'Paris' } }] },
        { calls: [{ id: 'call_2', name: 'celsiusToFahrenheit', args: { c: 18 } }] },
        { text: 'It is 18°C (64.4°F) in Paris.' },
      ],
    },
  ];
}

export function toolError(agent = WEATHER_AGENT): AgentScript[] {
  return [
    {
      agent,
      parent: null,
      turns: [
        { calls: [{ id: 'call_e1', name: 'flakyDb', args: { query: 'orders' } }] },
        { text: 'The order database is unavailable right now.' },
      ],
    },
  ];
}

export function parallelCalls(agent = WEATHER_AGENT): AgentScript[] {
  return [
    {
      agent,
      parent: null,
      turns: [
        {
          calls: [
            { id: 'call_p1', name: 'getWeather', args: { city: 'Paris' } },
            { id: 'call_p2', name: 'getWeather', args: { city: 'Tokyo' } },
          ],
        },
        { text: 'Paris 18°C, Tokyo 22°C.' },
      ],
    },
  ];
}

/** `delegate` is how the framework exposes the researcher to the orchestrator's model. */
export function subagentAsTool(delegate: Omit<ScriptedCall, 'id'>): AgentScript[] {
  return [
    {
      agent: 'orchestrator',
      parent: null,
      turns: [{ calls: [{ id: 'call_o1', ...delegate }] }, { text: 'The researcher says Tokyo is 22°C.' }],
    },
    {
      agent: 'researcher',
      parent: 'orchestrator',
      turns: [
        { calls: [{ id: 'call_r1', name: 'getWeather', args: { city: 'Tokyo' } }] },
        { text: 'Research: Tokyo is 22°C.' },
      ],
    },
  ];
}

export function unknownTool(agent = WEATHER_AGENT): AgentScript[] {
  return [
    {
      agent,
      parent: null,
      turns: [
        { calls: [{ id: 'call_u1', name: 'launchRockets', args: { target: 'moon' } }] },
        { text: 'I cannot launch rockets.' },
      ],
    },
  ];
}

/** The first call fails the schema (city must be a string); the model then retries correctly. */
export function invalidInput(agent = WEATHER_AGENT): AgentScript[] {
  return [
    {
      agent,
      parent: null,
      turns: [
        { calls: [{ id: 'call_i1', name: 'getWeather', args: { city: 42 } }] },
        { calls: [{ id: 'call_i2', name: 'getWeather', args: { city: 'Paris' } }] },
        { text: 'It is 18°C in Paris.' },
      ],
    },
  ];
}

export function handoff(): AgentScript[] {
  return [
    {
      agent: 'triage',
      parent: null,
      turns: [{ calls: [{ id: 'call_h1', name: 'transfer_to_weather_specialist', args: {} }] }],
    },
    {
      agent: 'weather_specialist',
      parent: 'triage',
      turns: [
        { calls: [{ id: 'call_h2', name: 'getWeather', args: { city: 'Paris' } }] },
        { text: 'It is 18°C in Paris.' },
      ],
    },
  ];
}

/** The prompts of the two-turn conversation in `history`. */
export const HISTORY_PROMPTS = ['What is the weather in Paris?', 'And in Fahrenheit?'] as const;

/**
 * Two runs of one conversation: the first asks getWeather, the second is sent the first run's
 * messages (tool call and result included) and asks only celsiusToFahrenheit. Only the second
 * run is recorded, so the replayed getWeather is history, never one of its calls.
 */
export function history(agent = WEATHER_AGENT): AgentScript[] {
  return [
    {
      agent,
      parent: null,
      turns: [
        { calls: [{ id: 'call_h1', name: 'getWeather', args: { city: 'Paris' } }] },
        { text: 'It is 18°C in Paris.' },
        { calls: [{ id: 'call_h2', name: 'celsiusToFahrenheit', args: { c: 18 } }] },
        { text: 'That is 64.4°F.' },
      ],
    },
  ];
}

/**
 * The script of a scenario. Frameworks differ only in how a sub-agent is offered to the model
 * as a tool (`delegate`: its tool name and arguments).
 */
export function scriptFor(
  framework: string,
  scenario: ScenarioName,
  delegate: Omit<ScriptedCall, 'id'>,
): Script {
  switch (scenario) {
    case 'multi_step':
    case 'stream_multi_step':
      return new Script(multiStep());
    case 'tool_error':
      return new Script(toolError());
    case 'parallel_calls':
      return new Script(parallelCalls());
    case 'subagent_as_tool':
      return new Script(subagentAsTool(delegate));
    case 'unknown_tool':
      return new Script(unknownTool());
    case 'invalid_input':
      return new Script(invalidInput());
    case 'history':
      return new Script(history());
    case 'handoff':
      return new Script(handoff());
    default:
      throw new Error(`${framework} has no scenario ${scenario}`);
  }
}
