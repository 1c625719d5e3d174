import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { spansFromOtlpJson } from '../../src/conventions/from-otlp-json.js';
import { reconstructTraces } from '../../src/reconstruction/reconstruct-trace.js';
import {
  mastraCheckToolOrder,
  toolOrder,
  toolOrderConfigSchema,
  toolOrderFromConfig,
} from '../../src/scorers/tool-order.js';
import type { AgentRun, HistoryCall, ToolStatus } from '../../src/types.js';
import { configDigest } from '../../src/util/digest.js';
import { inMemoryRun } from '../helpers/in-memory-run.js';
import { TraceBuilder } from '../helpers/trace-builder.js';

type CallState = 'result' | 'call' | 'output-error';

/**
 * A run as Mastra's upstream tests build it, as a trace: each invocation is an LLM output
 * asking for the tool, then the tool span (`result`), a failed tool span (`output-error`),
 * or nothing (`call`: requested, never ran).
 */
function runOf(calls: Array<string | [string, CallState]>, history: string[] = []): AgentRun {
  const t = new TraceBuilder();
  const agent = t.agent('weather-agent');
  if (history.length > 0) {
    agent.llm({
      inputMessages: [
        { role: 'user', parts: [{ type: 'text', content: 'earlier' }] },
        {
          role: 'assistant',
          parts: history.map((name, i) => ({ type: 'tool_call', id: `old-${i}`, name, arguments: {} })),
        },
      ],
    });
  }
  calls.forEach((c, i) => {
    const [name, state] = typeof c === 'string' ? [c, 'result' as const] : c;
    const id = `call-${i}`;
    agent.llm({ toolCalls: [{ name, id, args: { q: i } }] });
    if (state === 'result') agent.tool(name, { id, args: { q: i }, result: { ok: true } });
    if (state === 'output-error') agent.tool(name, { id, args: { q: i }, status: 'error' });
  });
  agent.llm();
  const traces = reconstructTraces(spansFromOtlpJson(t.toOtlp()));
  expect(traces).toHaveLength(1);
  expect(traces[0]!.runs).toHaveLength(1);
  return traces[0]!.runs[0]!;
}

function infos(run: AgentRun) {
  return run.calls.map((c) => ({ toolName: c.name, toolCallId: c.callId!, spanId: c.spanId }));
}

describe('tool_order: Mastra upstream tests as traces', () => {
  it('1. the expected tool is called', () => {
    const run = runOf(['weather-tool']);
    const r = toolOrder({ expectedTool: 'weather-tool' }).score(run);
    expect(r).toEqual({
      scorer: 'tool_order',
      kind: 'tool_order',
      passed: true,
      score: 1,
      label: 'pass',
      reason: null,
      digest: configDigest({
        kind: 'tool_order',
        expected_tool: 'weather-tool',
        strict_mode: false,
        order_semantics: 'mastra',
      }),
      detail: {
        expectedTool: 'weather-tool',
        actualTools: ['weather-tool'],
        strictMode: false,
        hasToolCalls: true,
        correctToolCalled: true,
        toolCallInfos: infos(run),
        correctOrderCalled: null,
        orderSemantics: 'mastra',
      },
    });
    expect(infos(run)[0]!.toolCallId).toBe('call-0');
  });

  it('2. a different tool is called', () => {
    const r = toolOrder({ expectedTool: 'weather-tool' }).score(runOf(['calculator-tool']));
    expect(r.score).toBe(0);
    expect(r.passed).toBe(false);
    expect(r.label).toBe('fail');
    expect(r.reason).toBe('weather-tool was not called');
    expect(r.detail.correctToolCalled).toBe(false);
    expect(r.detail.actualTools).toEqual(['calculator-tool']);
  });

  it('3. no tool calls at all', () => {
    const r = toolOrder({ expectedTool: 'weather-tool' }).score(runOf([]));
    expect(r.score).toBe(0);
    expect(r.reason).toBe('no tool calls');
    expect(r.detail.hasToolCalls).toBe(false);
    expect(r.detail.actualTools).toEqual([]);
    expect(r.detail.toolCallInfos).toEqual([]);
  });

  it('4. lenient: the expected tool among several', () => {
    const r = toolOrder({ expectedTool: 'weather-tool', strictMode: false }).score(
      runOf(['search-tool', 'weather-tool', 'calendar-tool']),
    );
    expect(r.score).toBe(1);
    expect(r.detail.correctToolCalled).toBe(true);
  });

  it('5. strict: the expected tool among several fails', () => {
    const r = toolOrder({ expectedTool: 'weather-tool', strictMode: true }).score(
      runOf(['search-tool', 'weather-tool', 'calendar-tool']),
    );
    expect(r.score).toBe(0);
    expect(r.detail.correctToolCalled).toBe(false);
    expect(r.reason).toBe('strict mode expects exactly one call of weather-tool, got 3 calls');
  });

  it('6. strict: exactly the expected tool', () => {
    const r = toolOrder({ expectedTool: 'weather-tool', strictMode: true }).score(runOf(['weather-tool']));
    expect(r.score).toBe(1);
    expect(r.detail.correctToolCalled).toBe(true);
  });

  it('7. a requested call that never ran (state `call`) counts', () => {
    const run = runOf([['weather-tool', 'call']]);
    expect(run.calls.map((c) => [c.name, c.requestOnly])).toEqual([['weather-tool', true]]);
    const r = toolOrder({ expectedTool: 'weather-tool' }).score(run);
    expect(r.score).toBe(1);
  });

  it('a failed call (state `output-error`) counts, as in 1.10.2', () => {
    const run = runOf([['weather-tool', 'output-error']]);
    expect(run.calls[0]!.status).toBe('error');
    expect(toolOrder({ expectedTool: 'weather-tool' }).score(run).score).toBe(1);
  });

  it('10. strict order, exact sequence; expectedTool is ignored for the score', () => {
    const r = toolOrder({
      expectedTool: 'search-tool',
      expectedToolOrder: ['search-tool', 'weather-tool'],
      strictMode: true,
    }).score(runOf(['search-tool', 'weather-tool']));
    expect(r.score).toBe(1);
    expect(r.detail.correctOrderCalled).toBe(true);
    // Computed strict-aware even in order mode (two calls ≠ exactly one).
    expect(r.detail.correctToolCalled).toBe(false);
  });

  it('11. strict order, reversed', () => {
    const r = toolOrder({ expectedToolOrder: ['search-tool', 'weather-tool'], strictMode: true }).score(
      runOf(['weather-tool', 'search-tool']),
    );
    expect(r.score).toBe(0);
    expect(r.detail.correctOrderCalled).toBe(false);
    expect(r.detail).not.toHaveProperty('expectedTool');
    expect(r.reason).toBe(
      'calls [weather-tool, search-tool] do not follow [search-tool, weather-tool] exactly',
    );
  });

  it('12. flexible order allows extra calls', () => {
    const r = toolOrder({ expectedToolOrder: ['search-tool', 'weather-tool'] }).score(
      runOf(['search-tool', 'calendar-tool', 'weather-tool']),
    );
    expect(r.score).toBe(1);
    expect(r.detail.correctOrderCalled).toBe(true);
  });

  it('13. flexible order, wrong relative order', () => {
    const r = toolOrder({ expectedToolOrder: ['search-tool', 'weather-tool'] }).score(
      runOf(['weather-tool', 'calendar-tool', 'search-tool']),
    );
    expect(r.score).toBe(0);
    expect(r.detail.correctOrderCalled).toBe(false);
  });

  it('14. flexible order, an expected tool is missing', () => {
    const r = toolOrder({ expectedToolOrder: ['search-tool', 'weather-tool', 'calendar-tool'] }).score(
      runOf(['search-tool', 'weather-tool']),
    );
    expect(r.score).toBe(0);
  });

  it('15. strict order fails on an extra call', () => {
    const r = toolOrder({ expectedToolOrder: ['search-tool', 'weather-tool'], strictMode: true }).score(
      runOf(['search-tool', 'log-tool', 'weather-tool']),
    );
    expect(r.score).toBe(0);
  });

  it('16. single tool without order: correctOrderCalled is null', () => {
    const r = toolOrder({ expectedTool: 'weather-tool' }).score(runOf(['weather-tool']));
    expect(r.score).toBe(1);
    expect(r.detail.correctOrderCalled).toBeNull();
  });
});

describe('tool_order: Mastra edge cases and subsequence semantics', () => {
  const cases: Array<{
    calls: string[];
    order: string[];
    strict?: boolean;
    mastra: number;
    subsequence: number;
  }> = [
    { calls: ['b', 'a', 'b'], order: ['a', 'b'], mastra: 0, subsequence: 1 },
    { calls: ['a', 'b', 'a'], order: ['a', 'b'], mastra: 1, subsequence: 1 },
    { calls: ['a', 'a'], order: ['a', 'a'], mastra: 0, subsequence: 1 },
    { calls: ['a', 'b', 'a'], order: ['a', 'b', 'a'], mastra: 0, subsequence: 1 },
    { calls: ['a', 'a'], order: ['a', 'a'], strict: true, mastra: 1, subsequence: 1 },
    { calls: ['a', 'a', 'b'], order: ['a', 'b'], strict: true, mastra: 0, subsequence: 0 },
    { calls: ['a', 'c'], order: ['a', 'b'], mastra: 0, subsequence: 0 },
  ];
  for (const c of cases) {
    it(`[${c.calls}] against [${c.order}]${c.strict ? ' strict' : ''}: mastra ${c.mastra}, subsequence ${c.subsequence}`, () => {
      const run = runOf(c.calls);
      const m = toolOrder({ expectedToolOrder: c.order, strictMode: c.strict }).score(run);
      const s = toolOrder({
        expectedToolOrder: c.order,
        strictMode: c.strict,
        orderSemantics: 'subsequence',
      }).score(run);
      expect([m.score, s.score]).toEqual([c.mastra, c.subsequence]);
      expect(s.detail.orderSemantics).toBe('subsequence');
    });
  }

  it('strict single tool means exactly one call: [w, w] fails', () => {
    expect(toolOrder({ expectedTool: 'w', strictMode: true }).score(runOf(['w', 'w'])).score).toBe(0);
  });

  it('expectedToolOrder [] falls back to expectedTool, and alone always scores 0', () => {
    const run = runOf(['a']);
    const alone = toolOrder({ expectedToolOrder: [] }).score(run);
    expect(alone.score).toBe(0);
    expect(alone.detail.correctOrderCalled).toBe(true);
    expect(alone.reason).toBe('expected_tool_order is empty and no expected_tool is set');
    expect(toolOrder({ expectedToolOrder: [], expectedTool: 'a' }).score(run).score).toBe(1);
    expect(toolOrder({ expectedToolOrder: [], expectedTool: 'b' }).score(run).score).toBe(0);
  });

  it('an empty run always scores 0, whatever the options', () => {
    const run = runOf([]);
    for (const s of [
      toolOrder({ expectedToolOrder: [], expectedTool: 'a' }),
      toolOrder({ expectedToolOrder: ['a'], orderSemantics: 'subsequence' }),
      toolOrder({ expectedTool: 'a', strictMode: true }),
    ]) {
      expect(s.score(run).score).toBe(0);
    }
  });

  it('counts only the run itself (scope self), never nested runs or history', () => {
    const t = new TraceBuilder();
    const parent = t.agent('parent');
    parent.llm({ toolCalls: [{ name: 'agent-helper', id: 'h' }] });
    const asTool = parent.tool('agent-helper', { id: 'h' });
    const child = asTool.agent('helper');
    child.llm({ toolCalls: [{ name: 'search', id: 's' }] });
    child.tool('search', { id: 's' });
    const run = reconstructTraces(spansFromOtlpJson(t.toOtlp()))[0]!.runs[0]!;
    expect(run.children.map((c) => c.agent)).toEqual(['helper']);
    const r = toolOrder({ expectedTool: 'search' }).score(run);
    expect(r.detail.actualTools).toEqual(['agent-helper']);
    expect(r.score).toBe(0);

    const withHistory = runOf(['b'], ['a']);
    expect(withHistory.history.map((h) => h.name)).toEqual(['a']);
    expect(toolOrder({ expectedToolOrder: ['a', 'b'] }).score(withHistory).score).toBe(0);
  });
});

describe('tool_order: config', () => {
  it('parses the refunds rule entry and builds the same scorer as the code factory', () => {
    const parsed = toolOrderConfigSchema.parse({
      kind: 'tool_order',
      expected_tool: 'get_order_detail',
      expected_tool_order: ['get_order_detail', 'check_refund_policy'],
      strict_mode: false,
      order_semantics: 'mastra',
    });
    const fromConfig = toolOrderFromConfig(parsed);
    const fromCode = toolOrder({
      expectedTool: 'get_order_detail',
      expectedToolOrder: ['get_order_detail', 'check_refund_policy'],
    });
    expect(fromConfig.digest).toBe(fromCode.digest);
    expect(fromConfig.config).toEqual({
      kind: 'tool_order',
      expected_tool: 'get_order_detail',
      expected_tool_order: ['get_order_detail', 'check_refund_policy'],
      strict_mode: false,
      order_semantics: 'mastra',
    });
    expect(fromConfig.digest).toBe(configDigest(fromConfig.config));
    expect(fromConfig.name).toBe('tool_order');
    expect(fromConfig.async).toBe(false);
    expect(fromConfig.sampling).toBeUndefined();
    const named = toolOrderFromConfig(
      toolOrderConfigSchema.parse({
        kind: 'tool_order',
        name: 'order',
        expected_tool: 'a',
        sampling: { ratio: 0.25 },
      }),
    );
    expect([named.name, named.sampling]).toEqual(['order', { ratio: 0.25 }]);
    expect(named.digest).toBe(toolOrder({ expectedTool: 'a' }).digest);
    expect(toolOrder({ expectedTool: 'a', orderSemantics: 'subsequence' }).digest).not.toBe(
      toolOrder({ expectedTool: 'a' }).digest,
    );
  });

  it('refuses bad entries with the path and message', () => {
    const problems = (input: unknown) => {
      const r = toolOrderConfigSchema.safeParse(input);
      return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    };
    expect(problems({ kind: 'tool_order' })).toEqual([
      ': Either expectedTool or expectedToolOrder must be provided',
    ]);
    expect(problems({ kind: 'tool_order', expected_tool: '' })).toEqual([
      ': Either expectedTool or expectedToolOrder must be provided',
    ]);
    expect(problems({ kind: 'tool_order', expected_tool_order: 'a' })).toEqual([
      'expected_tool_order: expected array of strings',
    ]);
    expect(problems({ kind: 'tool_order', expected_tool: 'a', strict: true })).toHaveLength(1);
    expect(problems({ kind: 'tool_order', expected_tool: 'a', order_semantics: 'greedy' })).toHaveLength(1);
    expect(problems({ kind: 'tool_order', expected_tool_order: [] })).toEqual([]);
  });

  it('a throwing run becomes an error result, never an exception', () => {
    const broken = { calls: null } as unknown as AgentRun;
    const r = toolOrder({ expectedTool: 'a', name: 'order' }).score(broken);
    expect(r.label).toBe('error');
    expect(r.passed).toBe(false);
    expect(r.score).toBe(0);
    expect(r.scorer).toBe('order');
    expect(typeof r.reason).toBe('string');
  });
});

// ---------------------------------------------------------------------------------------
// Properties on in-memory runs (fast; the trace path is covered above).

function fakeRun(names: Array<[string, ToolStatus]>, history: string[] = []): AgentRun {
  return inMemoryRun(
    names.map(([name, status], i) => ({ name, status, callId: `c${i}` })),
    history.map((name, i): HistoryCall => ({ name, spanId: `h${i}`, reason: 'input_messages' })),
  );
}

const nameArb = fc.constantFrom('a', 'b', 'c', 'd');
const callsArb = fc.array(
  fc.tuple(nameArb, fc.constantFrom<ToolStatus>('ok', 'error', 'refused', 'paused')),
  {
    maxLength: 10,
  },
);
const optionsArb = fc.record({
  expectedTool: fc.option(nameArb, { nil: undefined }),
  expectedToolOrder: fc.option(fc.array(nameArb, { maxLength: 4 }), { nil: undefined }),
  strictMode: fc.boolean(),
});

describe('tool_order: properties', () => {
  it('scores are 0 or 1, and passed ⇔ score 1', () => {
    fc.assert(
      fc.property(callsArb, optionsArb, fc.constantFrom('mastra', 'subsequence'), (calls, o, semantics) => {
        fc.pre(o.expectedTool !== undefined || o.expectedToolOrder !== undefined);
        const r = toolOrder({ ...o, orderSemantics: semantics as 'mastra' }).score(fakeRun(calls));
        expect([0, 1]).toContain(r.score);
        expect(r.passed).toBe(r.score === 1);
        expect(r.label).toBe(r.passed ? 'pass' : 'fail');
      }),
      { seed: 7, numRuns: 1000 },
    );
  });

  it('subsequence passes ⊇ mastra flexible passes', () => {
    let mastraPasses = 0;
    fc.assert(
      fc.property(callsArb, fc.array(nameArb, { minLength: 1, maxLength: 4 }), (calls, order) => {
        const run = fakeRun(calls);
        const m = toolOrder({ expectedToolOrder: order }).score(run);
        const s = toolOrder({ expectedToolOrder: order, orderSemantics: 'subsequence' }).score(run);
        if (m.passed) {
          mastraPasses++;
          expect(s.passed).toBe(true);
        }
        expect(
          mastraCheckToolOrder(
            run.calls.map((c) => c.name),
            order,
            false,
          ),
        ).toBe(m.passed);
      }),
      { seed: 11, numRuns: 2000 },
    );
    expect(mastraPasses).toBeGreaterThan(100);
  });

  it('history replayed in the input messages of a trace never changes a verdict', () => {
    fc.assert(
      fc.property(
        fc.array(nameArb, { maxLength: 5 }),
        fc.array(nameArb, { minLength: 1, maxLength: 4 }),
        optionsArb,
        (calls, history, o) => {
          fc.pre(o.expectedTool !== undefined || o.expectedToolOrder !== undefined);
          const scorer = toolOrder(o);
          const withHistory = runOf(calls, history);
          expect(withHistory.history.map((h) => h.name)).toEqual(history);
          const a = scorer.score(withHistory);
          const b = scorer.score(runOf(calls));
          expect([a.score, a.passed, a.detail.actualTools, a.detail.correctOrderCalled]).toEqual([
            b.score,
            b.passed,
            b.detail.actualTools,
            b.detail.correctOrderCalled,
          ]);
        },
      ),
      { seed: 17, numRuns: 100 },
    );
  });

  it('history never changes a verdict', () => {
    fc.assert(
      fc.property(callsArb, fc.array(nameArb, { maxLength: 6 }), optionsArb, (calls, history, o) => {
        fc.pre(o.expectedTool !== undefined || o.expectedToolOrder !== undefined);
        const scorer = toolOrder(o);
        expect(scorer.score(fakeRun(calls, history))).toEqual(scorer.score(fakeRun(calls)));
      }),
      { seed: 13, numRuns: 500 },
    );
  });
});
