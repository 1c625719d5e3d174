/**
 * Differential test: `toolOrder` in `mastra` mode against the real `@mastra/evals` 1.10.2
 * `createToolCallAccuracyScorerCode`, on seeded random call sequences and option sets
 * (the run object it takes is built below).
 */
import { createToolCallAccuracyScorerCode } from '@mastra/evals/scorers/prebuilt';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { spansFromOtlpJson } from '../../src/conventions/from-otlp-json.js';
import { reconstructTraces } from '../../src/reconstruction/reconstruct-trace.js';
import { toolOrder } from '../../src/scorers/tool-order.js';
import type { AgentRun, ToolStatus } from '../../src/types.js';
import { inMemoryRun } from '../helpers/in-memory-run.js';
import { TraceBuilder } from '../helpers/trace-builder.js';

interface CallSpec {
  name: string;
  callId: string | undefined;
  status: ToolStatus;
}

interface OptionSpec {
  expectedTool: string | undefined;
  expectedToolOrder: string[] | undefined;
  strictMode: boolean | undefined;
}

// `x` is never called; `` is a nameless call, which Mastra skips.
const ALPHABET = ['a', 'b', 'c', 'd', ''];
const EXPECTED_NAMES = ['a', 'b', 'c', 'd', 'x'];
const STATUSES: ToolStatus[] = ['ok', 'error', 'refused', 'paused'];

function fakeRun(calls: CallSpec[]): AgentRun {
  // Paused calls are requests the model made that never ran: Mastra sees them as `call`.
  return inMemoryRun(
    calls.map((c) => ({ ...c, requestOnly: c.status === 'refused' || c.status === 'paused' })),
  );
}

/** The state Mastra gives such a call (its run object). */
function mastraState(status: ToolStatus): string {
  if (status === 'ok') return 'result';
  if (status === 'error') return 'output-error';
  return 'call';
}

function mastraRun(calls: CallSpec[]) {
  return {
    input: {
      inputMessages: [
        { id: 'u', role: 'user', content: { format: 2, parts: [{ type: 'text', text: 'hi' }] } },
      ],
    },
    output: [
      {
        id: 'm',
        role: 'assistant',
        createdAt: new Date(0),
        content: {
          format: 2,
          parts: calls.map((c) => ({
            type: 'tool-invocation',
            toolInvocation: {
              ...(c.callId !== undefined ? { toolCallId: c.callId } : {}),
              toolName: c.name,
              args: {},
              state: mastraState(c.status),
            },
          })),
        },
      },
    ],
  };
}

function mastraOptions(o: OptionSpec): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (o.expectedTool !== undefined) out.expectedTool = o.expectedTool;
  if (o.expectedToolOrder !== undefined) out.expectedToolOrder = o.expectedToolOrder;
  if (o.strictMode !== undefined) out.strictMode = o.strictMode;
  return out;
}

const callArb = fc.record({
  name: fc.constantFrom(...ALPHABET),
  callId: fc.oneof(
    fc.constant(undefined),
    fc.constant(''),
    fc.integer({ min: 0, max: 9 }).map((n) => `call-${n}`),
  ),
  status: fc.constantFrom(...STATUSES),
});
const optionArb = fc.record({
  expectedTool: fc.option(fc.constantFrom('', ...EXPECTED_NAMES), { nil: undefined }),
  expectedToolOrder: fc.option(fc.array(fc.constantFrom(...EXPECTED_NAMES), { maxLength: 4 }), {
    nil: undefined,
  }),
  strictMode: fc.option(fc.boolean(), { nil: undefined }),
});

async function compare(calls: CallSpec[], options: OptionSpec): Promise<void> {
  let mastraError: unknown;
  let mastraScorer: ReturnType<typeof createToolCallAccuracyScorerCode> | undefined;
  try {
    mastraScorer = createToolCallAccuracyScorerCode(mastraOptions(options) as never);
  } catch (e) {
    mastraError = e;
  }
  if (mastraError) {
    expect(() => toolOrder(options)).toThrow((mastraError as Error).message);
    return;
  }
  const ours = toolOrder(options).score(fakeRun(calls));
  const theirs = await mastraScorer!.run(mastraRun(calls) as never);
  expect(ours.score).toBe(theirs.score);
  expect(ours.passed).toBe(theirs.score === 1);
  const expected = JSON.parse(JSON.stringify(theirs.preprocessStepResult)) as Record<string, unknown>;
  expected.toolCallInfos = (expected.toolCallInfos as Array<Record<string, unknown>>).map((i) => ({
    toolName: i.toolName,
    toolCallId: i.toolCallId,
  }));
  const detail = JSON.parse(JSON.stringify(ours.detail)) as Record<string, unknown>;
  detail.toolCallInfos = (detail.toolCallInfos as Array<Record<string, unknown>>).map((i) => ({
    toolName: i.toolName,
    toolCallId: i.toolCallId,
  }));
  delete detail.orderSemantics;
  expect(detail).toEqual(expected);
}

describe('tool_order (mastra) against @mastra/evals 1.10.2', () => {
  it('agrees on score and detail for 4,000 seeded random runs and option sets', async () => {
    let compared = 0;
    let scoredOne = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(callArb, { maxLength: 8 }), optionArb, async (calls, options) => {
        await compare(calls, options);
        compared++;
        if (calls.some((c) => c.name !== '')) scoredOne++;
      }),
      { seed: 20261129, numRuns: 4000 },
    );
    expect(compared).toBe(4000);
    // The generator really produced runs with calls (not only empty ones).
    expect(scoredOne).toBeGreaterThan(3000);
  }, 120_000);

  it('agrees end to end: OTLP trace → reconstruction → toolOrder vs Mastra on the same calls (400 runs)', async () => {
    const traceCallArb = fc.record({
      name: fc.constantFrom('a', 'b', 'c', 'd'),
      // `refused` here is a request the model made that never ran (Mastra state `call`).
      status: fc.constantFrom<ToolStatus>('ok', 'error', 'refused'),
    });
    let withCalls = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(traceCallArb, { maxLength: 6 }), optionArb, async (specs, options) => {
        const t = new TraceBuilder();
        const agent = t.agent('agent');
        specs.forEach((c, i) => {
          agent.llm({ toolCalls: [{ name: c.name, id: `call-${i}`, args: { i } }] });
          if (c.status !== 'refused') agent.tool(c.name, { id: `call-${i}`, args: { i }, status: c.status });
        });
        agent.llm();
        const run = reconstructTraces(spansFromOtlpJson(t.toOtlp()))[0]!.runs[0]!;
        expect(run.calls.map((c) => [c.name, c.status])).toEqual(specs.map((c) => [c.name, c.status]));
        if (specs.length > 0) withCalls++;
        const calls: CallSpec[] = specs.map((c, i) => ({ ...c, callId: `call-${i}` }));
        let ours: ReturnType<ReturnType<typeof toolOrder>['score']>;
        try {
          ours = toolOrder(options).score(run);
        } catch {
          expect(() => createToolCallAccuracyScorerCode(mastraOptions(options) as never)).toThrow();
          return;
        }
        const theirs = await createToolCallAccuracyScorerCode(mastraOptions(options) as never).run(
          mastraRun(calls) as never,
        );
        expect(ours.score).toBe(theirs.score);
        expect(ours.detail.actualTools).toEqual(theirs.preprocessStepResult!.actualTools);
        expect(ours.detail.correctOrderCalled).toEqual(theirs.preprocessStepResult!.correctOrderCalled);
        expect(ours.detail.correctToolCalled).toEqual(theirs.preprocessStepResult!.correctToolCalled);
      }),
      { seed: 4242, numRuns: 400 },
    );
    expect(withCalls).toBeGreaterThan(300);
  }, 120_000);

  it('agrees on the cases where the two order semantics famously diverge', async () => {
    const cases: Array<[string[], OptionSpec]> = [
      [['b', 'a', 'b'], { expectedTool: undefined, expectedToolOrder: ['a', 'b'], strictMode: false }],
      [['a', 'a'], { expectedTool: undefined, expectedToolOrder: ['a', 'a'], strictMode: false }],
      [['a', 'a'], { expectedTool: undefined, expectedToolOrder: ['a', 'a'], strictMode: true }],
      [['a', 'b', 'a'], { expectedTool: undefined, expectedToolOrder: ['a', 'b'], strictMode: undefined }],
      [['a'], { expectedTool: undefined, expectedToolOrder: [], strictMode: undefined }],
      [['a'], { expectedTool: 'a', expectedToolOrder: [], strictMode: true }],
      [[], { expectedTool: 'a', expectedToolOrder: undefined, strictMode: undefined }],
      [['a', 'a'], { expectedTool: 'a', expectedToolOrder: undefined, strictMode: true }],
    ];
    for (const [names, options] of cases) {
      await compare(
        names.map((name, i) => ({ name, callId: `c${i}`, status: 'ok' })),
        options,
      );
    }
  });

  it('throws the same constructor error as Mastra', () => {
    expect(() => createToolCallAccuracyScorerCode({} as never)).toThrow(
      'Either expectedTool or expectedToolOrder must be provided',
    );
    expect(() => toolOrder({})).toThrow('Either expectedTool or expectedToolOrder must be provided');
    expect(() => toolOrder({ expectedTool: '' })).toThrow(
      'Either expectedTool or expectedToolOrder must be provided',
    );
  });
});
