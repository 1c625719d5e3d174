import { HISTORY_PROMPTS } from './scenario-scripts.js';
import type { Script } from './script.js';
import type { ToolRecorder } from './tool-recorder.js';

/**
 * The history scenario on a Mastra agent (0.24 and 1.x alike): run the first turn, forget it,
 * then send its messages with a second prompt. Returns the trace id of the second run, the only
 * one the scenario keeps.
 */
export async function runMastraConversation(
  agent: { generate: (...args: any[]) => Promise<any> },
  script: Script,
  recorder: ToolRecorder,
): Promise<string | undefined> {
  const first = await agent.generate(HISTORY_PROMPTS[0], { maxSteps: 5 });
  script.forgetServed();
  recorder.forget();
  const second = await agent.generate(
    [
      { role: 'user', content: HISTORY_PROMPTS[0] },
      ...first.response.messages,
      { role: 'user', content: HISTORY_PROMPTS[1] },
    ],
    { maxSteps: 5 },
  );
  return second.traceId;
}
