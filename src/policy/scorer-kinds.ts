import type { z } from 'zod';
import { llmJudgeConfigSchema, llmJudgeFromConfig } from '../scorers/llm-judge.js';
import { reliabilityConfigSchema, reliabilityFromConfig } from '../scorers/reliability.js';
import { toolCallsConfigSchema, toolCallsFromConfig } from '../scorers/tool-calls.js';
import { toolOrderConfigSchema, toolOrderFromConfig } from '../scorers/tool-order.js';
import { trajectoryFromConfig } from '../scorers/trajectory.js';
import { trajectoryConfigSchema } from '../scorers/trajectory-config.js';
import type { Scorer } from '../types.js';

/** How a policy file's scorer entry of one `kind` is validated and built. */
export interface ScorerKind {
  schema: z.ZodType;
  build: (config: any) => Scorer;
}

/** Every scorer kind a policy file may name. */
export const SCORER_KINDS: Readonly<Record<string, ScorerKind>> = {
  reliability: { schema: reliabilityConfigSchema, build: reliabilityFromConfig },
  tool_calls: { schema: toolCallsConfigSchema, build: toolCallsFromConfig },
  tool_order: { schema: toolOrderConfigSchema, build: toolOrderFromConfig },
  trajectory: { schema: trajectoryConfigSchema, build: trajectoryFromConfig },
  llm_judge: { schema: llmJudgeConfigSchema, build: llmJudgeFromConfig },
};
