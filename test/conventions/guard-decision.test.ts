import { describe, expect, it } from 'vitest';
import { reconstructTrace } from '../../src/reconstruction/reconstruct-trace.js';
import { SpanFactory } from '../helpers/span-like.js';

/** One agent run with one tool span carrying these guard attributes, in the given convention. */
function callsWith(
  guard: Record<string, unknown>,
  convention: 'gen_ai' | 'openinference' | 'ai_sdk' = 'gen_ai',
) {
  const spans = new SpanFactory();
  const agent = spans.make('invoke_agent bot', {
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': 'bot',
  });
  const shapes = {
    gen_ai: ['execute_tool wipe', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'wipe' }],
    openinference: ['wipe', { 'openinference.span.kind': 'TOOL', 'tool.name': 'wipe' }],
    ai_sdk: [
      'ai.toolCall',
      { 'ai.operationId': 'ai.toolCall', 'ai.toolCall.name': 'wipe', 'ai.toolCall.id': 'c1' },
    ],
  } as const;
  const [name, attributes] = shapes[convention];
  const tool = spans.make(name, { ...attributes, ...guard }, { parent: agent });
  const run = reconstructTrace([agent, tool]).runs[0]!;
  return run.calls.map((c) => [c.name, c.status, c.requestOnly, c.errorMessage]);
}

const refused = {
  'toolwatch.guard.decision': 'deny',
  'toolwatch.guard.enforced': true,
  'toolwatch.guard.reason': 'no',
};

describe('a guard decision on a tool span', () => {
  it('is a call refused before it ran, in every convention, even with no model request recorded', () => {
    for (const convention of ['gen_ai', 'openinference', 'ai_sdk'] as const) {
      expect(callsWith(refused, convention), convention).toEqual([['wipe', 'refused', true, 'no']]);
    }
  });

  it('reads enforced as the other boolean attributes are read ("true", 1), and nothing else', () => {
    expect(callsWith({ ...refused, 'toolwatch.guard.enforced': 'true' })[0]![1]).toBe('refused');
    expect(callsWith({ ...refused, 'toolwatch.guard.enforced': 1 })[0]![1]).toBe('refused');
    for (const enforced of [false, 'false', 0, 'yes', undefined, null, ['true'], {}]) {
      expect(callsWith({ ...refused, 'toolwatch.guard.enforced': enforced }), String(enforced)).toEqual([
        ['wipe', 'ok', false, undefined],
      ]);
    }
  });

  it('changes nothing for a decision other than deny, and names a default reason', () => {
    for (const decision of ['allow', 'DENY', 42, '', null]) {
      expect(callsWith({ ...refused, 'toolwatch.guard.decision': decision })[0]![1], String(decision)).toBe(
        'ok',
      );
    }
    const { 'toolwatch.guard.reason': _, ...noReason } = refused;
    expect(callsWith(noReason)).toEqual([['wipe', 'refused', true, 'refused by the toolwatch guard']]);
    expect(callsWith({ ...refused, 'toolwatch.guard.reason': 7 })[0]![3]).toBe('7');
  });
});
