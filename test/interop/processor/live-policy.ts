import { parsePolicy } from '../../../src/policy/parse-policy.js';
import type { Policy } from '../../../src/types.js';

/** Tools the live policy forbids: each is really executed in some scenario (multi_step, history, tool_error). */
export const FORBIDDEN_TOOLS = ['celsiusToFahrenheit', 'flakyDb'] as const;

/**
 * One policy for every scenario: every deterministic scorer kind, on the outermost run
 * (`root`) and on every run, nested ones included (`every_run`, `root_only: false`), so that
 * delegated agents (researcher, handoff targets) get verdicts too. The expectations are the
 * weather scripts', so verdicts mix passes and failures of every kind.
 */
export function livePolicy(): Policy {
  return parsePolicy({
    version: 1,
    // Unredacted, so the test can compare each emitted explanation with its result's reason.
    redact: { values: false },
    rules: [
      {
        name: 'root',
        match: { agent: '*' },
        scorers: [
          {
            kind: 'reliability',
            expected_tool_calls: ['getWeather'],
            expected_tool_call_arguments: { getWeather: { city: 'Paris' } },
          },
          {
            kind: 'tool_calls',
            expected_tools: ['getWeather'],
            arguments: { getWeather: [{ city: 'Paris' }] },
            allow_additional: false,
          },
          {
            kind: 'tool_order',
            name: 'order_mastra',
            expected_tool_order: ['getWeather', 'celsiusToFahrenheit'],
          },
          {
            kind: 'tool_order',
            name: 'order_subsequence',
            expected_tool_order: ['getWeather', 'celsiusToFahrenheit'],
            order_semantics: 'subsequence',
          },
          {
            kind: 'trajectory',
            expected_tools: ['getWeather'],
            forbidden_tools: [...FORBIDDEN_TOOLS],
            max_calls: 1,
            arg_constraints: { getWeather: { city: { in: ['Paris', 'Tokyo'] } } },
            expected_order: [['getWeather', 'celsiusToFahrenheit']],
            risk: 'high',
          },
        ],
      },
      {
        name: 'every_run',
        match: { agent: '*', root_only: false },
        scorers: [
          {
            kind: 'reliability',
            expected_tool_calls: ['getWeather'],
            scope: 'self',
            allow_additional_tool_calls: true,
          },
          { kind: 'tool_calls', expected_tools: ['getWeather'] },
          { kind: 'tool_order', expected_tool: 'getWeather', strict_mode: true },
          {
            kind: 'trajectory',
            expected_tools: ['getWeather'],
            forbidden_tools: [...FORBIDDEN_TOOLS],
            max_calls: 2,
            max_repeats: 1,
            scope: 'self',
          },
        ],
      },
    ],
  });
}
