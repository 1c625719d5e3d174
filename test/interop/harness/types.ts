import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace-base';

export type Framework =
  | 'ai-sdk'
  | 'mastra'
  | 'openai-agents'
  | 'langchain'
  | 'langchain-message-tool-calls'
  | 'ai-sdk-v7'
  | 'mastra-v1';

export type ScenarioName =
  | 'multi_step'
  | 'tool_error'
  | 'parallel_calls'
  | 'subagent_as_tool'
  | 'stream_multi_step'
  | 'unknown_tool'
  | 'invalid_input'
  | 'handoff'
  | 'history';

export interface ScenarioOptions {
  /**
   * Extra span processors attached next to the harness's in-memory exporter (e.g. toolwatch's
   * processor). Default none. Mastra builds its spans outside any TracerProvider, so for Mastra
   * each processor receives `onStart` then `onEnd` for every span when the trace is flushed.
   */
  spanProcessors?: SpanProcessor[];
}

/** Status of one call in the ground truth; `refused` is used for every request-only call. */
export type TruthStatus = 'ok' | 'error' | 'refused';

export interface TruthCall {
  name: string;
  /** What the tool function received (executed calls) or what the model asked for (request-only). */
  args: unknown;
  status: TruthStatus;
  /** True when the model asked for the call and no tool function ever ran. */
  requestOnly: boolean;
}

export interface TruthRun {
  agent: string;
  /** Agent name of the delegating run; null for the outermost run. */
  parent: string | null;
  calls: TruthCall[];
}

/**
 * What really happened in a scenario, known without looking at any span: the scripted model's
 * requests plus what the tool functions recorded. Runs are listed depth-first, parents first.
 */
export interface GroundTruth {
  framework: Framework;
  scenario: ScenarioName;
  runs: TruthRun[];
  /** True when the framework aborted the run (e.g. OpenAI Agents on an unknown tool). */
  aborted: boolean;
}

export interface ScenarioResult {
  spans: ReadableSpan[];
  groundTruth: GroundTruth;
  /** Errors the framework logged on purpose for this scenario, held back from the console. */
  frameworkErrors?: string[];
}
