/**
 * The rollout agent of the tests: the AI SDK agent of `examples/ci/agent.mjs` (generateText
 * with tools on the SDK's mock model, scripted by the case's `context` and the rollout), plus
 * two ways to misbehave before the model is called: `fails_on_odd_rollouts` throws on odd
 * rollouts, `hangs_on_first_rollout` never answers on rollout 0 (until aborted).
 */

// @ts-expect-error an untyped ESM example module
import ciAgent from '../../examples/ci/agent.mjs';
import type { RolloutContext } from '../../src/rollouts/run-rollouts.js';

interface Behaviour {
  fails_on_odd_rollouts?: boolean;
  hangs_on_first_rollout?: boolean;
}

export default async function agent(input: unknown, ctx: RolloutContext): Promise<string> {
  const behaviour = (ctx.context ?? {}) as Behaviour;
  if (behaviour.fails_on_odd_rollouts && ctx.rollout % 2 === 1)
    throw new Error(`scripted failure on rollout ${ctx.rollout}`);
  if (behaviour.hangs_on_first_rollout && ctx.rollout === 0) {
    await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
    return 'too late';
  }
  return (ciAgent as (input: unknown, ctx: RolloutContext) => Promise<string>)(input, ctx);
}
