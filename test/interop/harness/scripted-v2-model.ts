import { isCallTurn, type ScriptedTurn } from './script.js';

const USAGE = { inputTokens: 10, outputTokens: 5, totalTokens: 15 };

type V2Part = Record<string, unknown> & { type: string };

function streamParts(turn: ScriptedTurn): V2Part[] {
  const parts: V2Part[] = [{ type: 'stream-start', warnings: [] }];
  if (isCallTurn(turn)) {
    for (const c of turn.calls) {
      parts.push({ type: 'tool-call', toolCallId: c.id, toolName: c.name, input: JSON.stringify(c.args) });
    }
    parts.push({ type: 'finish', finishReason: 'tool-calls', usage: USAGE });
  } else {
    parts.push(
      { type: 'text-start', id: 't1' },
      { type: 'text-delta', id: 't1', delta: turn.text },
      { type: 'text-end', id: 't1' },
      { type: 'finish', finishReason: 'stop', usage: USAGE },
    );
  }
  return parts;
}

/**
 * A scripted AI SDK v5 model (spec v2), as both Mastra 0.24 (which rejects v3 models) and 1.x
 * accept it: each call, generated or streamed, answers with `next(prompt)`, the turn the script
 * serves for the prompt the model was given.
 */
export function scriptedV2Model(next: (prompt: unknown) => ScriptedTurn) {
  return {
    specificationVersion: 'v2' as const,
    provider: 'mock-provider',
    modelId: 'mock-model-id',
    supportedUrls: {},
    async doGenerate(options: { prompt: unknown }) {
      const turn = next(options.prompt);
      const content = isCallTurn(turn)
        ? turn.calls.map((c) => ({
            type: 'tool-call',
            toolCallId: c.id,
            toolName: c.name,
            input: JSON.stringify(c.args),
          }))
        : [{ type: 'text', text: turn.text }];
      return { content, finishReason: isCallTurn(turn) ? 'tool-calls' : 'stop', usage: USAGE, warnings: [] };
    },
    async doStream(options: { prompt: unknown }) {
      const parts = streamParts(next(options.prompt));
      return {
        stream: new ReadableStream<V2Part>({
          start(controller) {
            for (const p of parts) controller.enqueue(p);
            controller.close();
          },
        }),
      };
    },
  };
}
