import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Framework, ScenarioName, ScenarioOptions, ScenarioResult } from './types.js';

/** The scenarios every framework runs, in recording order. */
const COMMON: readonly ScenarioName[] = [
  'multi_step',
  'tool_error',
  'parallel_calls',
  'subagent_as_tool',
  'stream_multi_step',
  'unknown_tool',
  'invalid_input',
  'history',
];

/** Scenarios each framework supports, in recording order. */
export const SCENARIOS: Record<Framework, readonly ScenarioName[]> = {
  'ai-sdk': COMMON,
  mastra: COMMON,
  // Only the OpenAI Agents SDK has handoffs (a sibling agent span naming its source).
  'openai-agents': [...COMMON.slice(0, 6), 'handoff', ...COMMON.slice(6)],
  langchain: COMMON,
  // LangChain with a chat model whose tool calls are on the message only (not OpenAI-shaped).
  'langchain-message-tool-calls': COMMON,
  // AI SDK 7 and Mastra 1 live in test/interop/next (their own install); see NEXT_INSTALLED.
  'ai-sdk-v7': COMMON,
  'mastra-v1': COMMON,
};

/** True when test/interop/next has been installed (`npm ci --prefix test/interop/next`). */
export const NEXT_INSTALLED = existsSync(
  join(dirname(fileURLToPath(import.meta.url)), '../next/node_modules/@mastra/otel-exporter/package.json'),
);

/**
 * Runs one scenario of one real framework, offline, with a scripted model and real tools.
 * Framework modules load lazily so a test of one framework does not import the others.
 */
export async function runScenario(
  framework: Framework,
  scenario: ScenarioName,
  options: ScenarioOptions = {},
): Promise<ScenarioResult> {
  if (!SCENARIOS[framework].includes(scenario)) {
    throw new Error(`${framework} has no scenario ${scenario}`);
  }
  switch (framework) {
    case 'ai-sdk':
      return (await import('./ai-sdk.js')).runAiSdkScenario(scenario, options);
    case 'mastra':
      return (await import('./mastra.js')).runMastraScenario(scenario, options);
    case 'openai-agents':
      return (await import('./openai-agents.js')).runOpenAiAgentsScenario(scenario, options);
    case 'langchain':
      return (await import('./langchain.js')).runLangChainScenario(scenario, options);
    case 'langchain-message-tool-calls':
      return (await import('./langchain.js')).runLangChainScenario(scenario, options, 'message-only');
    case 'ai-sdk-v7':
      return (await import('../next/ai-sdk-v7.js')).runAiSdkV7Scenario(scenario, options);
    case 'mastra-v1':
      return (await import('../next/mastra-v1.js')).runMastraV1Scenario(scenario, options);
  }
}
