import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { spansFromOtlpJson } from '../../src/conventions/from-otlp-json.js';
import { reconstructTrace, reconstructTraces } from '../../src/reconstruction/reconstruct-trace.js';
import type { SpanLike } from '../../src/types.js';
import { encloseChildren, SpanFactory } from '../helpers/span-like.js';
import { deepChainTrace, syntheticAgentTrace } from '../helpers/synthetic-trace.js';
import { TraceBuilder } from '../helpers/trace-builder.js';

const codes = (t: { problems: Array<{ code: string }> }) => t.problems.map((p) => p.code);

describe('reconstructTrace on bad input: never throws, records problems', () => {
  it('malformed JSON arguments: raw text and the parse error are kept', () => {
    const t = new TraceBuilder();
    t.agent('a').tool('w', { args: '{"city": "Paris", "days": [1, 2' });
    const exec = reconstructTrace(spansFromOtlpJson(t.toOtlp())).runs[0]!.executions[0]!;
    expect(exec).toMatchObject({ argsRaw: '{"city": "Paris", "days": [1, 2', argsSource: 'span' });
    expect(exec.args).toBeUndefined();
    expect(exec.argsError).toMatch(/unparseable arguments/);
  });

  it('truncated values (an attribute length limit cut the JSON) behave like malformed ones', () => {
    const t = new TraceBuilder();
    const a = t.agent('a');
    const full = JSON.stringify([
      {
        role: 'assistant',
        parts: [{ type: 'tool_call', id: 'c1', name: 'w', arguments: { q: 'x'.repeat(50) } }],
      },
    ]);
    a.llm({ attributes: { 'gen_ai.output.messages': full.slice(0, 40) } });
    a.tool('w', { id: 'c1', args: JSON.stringify({ q: 'x'.repeat(50) }).slice(0, 20), result: '{"ok": tr' });
    const run = reconstructTrace(spansFromOtlpJson(t.toOtlp())).runs[0]!;
    expect(run.requests).toEqual([]);
    expect(run.executions[0]).toMatchObject({
      name: 'w',
      callId: 'c1',
      argsRaw: '{"q":"xxxxxxxxxxxxxx',
      result: '{"ok": tr',
    });
  });

  it('attributes of the wrong type are read defensively', () => {
    const f = new SpanFactory();
    const agent = f.make('invoke_agent a', {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': ['not', 'a', 'string'],
    });
    const tool = f.make(
      'execute_tool x',
      {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': { nested: true },
        'gen_ai.tool.call.id': 12,
        'gen_ai.tool.call.arguments': 3.5,
        'gen_ai.tool.call.result': null,
        'toolwatch.from_history': 'maybe',
      },
      { parent: agent },
    );
    const llm = f.make(
      'chat',
      {
        'gen_ai.operation.name': 'chat',
        'gen_ai.output.messages': { parts: 'nope' },
        'gen_ai.input.messages': 7,
      },
      { parent: agent },
    );
    const broken = {
      ...f.make('weird', {}, { parent: agent }),
      attributes: 'oops',
      events: 'x',
      status: 'bad',
    } as unknown as SpanLike;
    const oddResource = {
      ...f.make('invoke_agent b', { 'gen_ai.operation.name': 'invoke_agent' }),
      resource: 'svc',
    } as unknown as SpanLike;
    expect(reconstructTrace([oddResource]).runs[0]!.attributes).toEqual({
      'gen_ai.operation.name': 'invoke_agent',
    });
    const trace = reconstructTrace(encloseChildren([agent, tool, llm, broken]));
    const run = trace.runs[0]!;
    expect(run.agent).toBe('a');
    expect(run.executions.map((e) => [e.name, e.callId, e.args, e.argsSource])).toEqual([
      ['x', '12', 3.5, 'span'],
    ]);
    expect(codes(trace)).toContain('attributes_invalid');
  });

  it('spans missing names or ids are kept with a problem', () => {
    const f = new SpanFactory();
    const agent = f.make('invoke_agent a', { 'gen_ai.operation.name': 'invoke_agent' });
    const noId = {
      ...f.make(
        'execute_tool t',
        { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 't' },
        { parent: agent },
      ),
      spanId: '',
    };
    const noName = {
      ...f.make('', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'u' }, { parent: agent }),
    } as SpanLike;
    (noName as { name?: unknown }).name = undefined;
    const trace = reconstructTrace(encloseChildren([agent, noId, noName]));
    expect(trace.runs[0]!.executions.map((e) => e.name)).toEqual(['t', 'u']);
    expect(codes(trace)).toEqual(expect.arrayContaining(['span_missing_id', 'span_missing_name']));
  });

  it('non-span items are skipped with a problem', () => {
    const trace = reconstructTrace([null, 42, 'x', undefined] as unknown as SpanLike[]);
    expect(trace.runs).toEqual([]);
    expect(codes(trace)).toEqual(['span_invalid', 'span_invalid', 'span_invalid', 'span_invalid']);
    expect(reconstructTrace(undefined as unknown as SpanLike[])).toEqual({
      traceId: '',
      runs: [],
      problems: [],
    });
    expect(reconstructTraces('nope' as unknown as SpanLike[])).toEqual([]);
  });

  it('duplicate span ids: the first span is kept', () => {
    const f = new SpanFactory();
    const agent = f.make('invoke_agent a', { 'gen_ai.operation.name': 'invoke_agent' });
    const first = f.make(
      'execute_tool first',
      { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'first' },
      { parent: agent },
    );
    const dup = {
      ...f.make(
        'execute_tool dup',
        { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'dup' },
        { parent: agent },
      ),
      spanId: first.spanId,
    };
    const trace = reconstructTrace(encloseChildren([agent, first, dup]));
    expect(trace.runs[0]!.executions.map((e) => e.name)).toEqual(['first']);
    expect(codes(trace)).toEqual(['duplicate_span_id']);
  });

  it('orphans (parent never arrived) are roots; a lone tool span becomes an implicit run', () => {
    const f = new SpanFactory();
    const orphan = f.make(
      'execute_tool t',
      { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 't' },
      { parent: 'deadbeefdeadbeef' },
    );
    const trace = reconstructTrace([orphan]);
    expect(codes(trace)).toEqual(['orphan_span']);
    expect(trace.runs.map((r) => [r.agent, r.implicit, r.calls.map((c) => c.name)])).toEqual([
      ['execute_tool t', true, ['t']],
    ]);
  });

  it('parent cycles are broken and recorded; self-parents too', () => {
    const f = new SpanFactory();
    const a = f.make(
      'invoke_agent a',
      { 'gen_ai.operation.name': 'invoke_agent' },
      { spanId: 'a1', parent: 'c1', start: 0, end: 10 },
    );
    const b = f.make('span b', {}, { spanId: 'b1', parent: 'a1', start: 1, end: 9 });
    const c = f.make(
      'execute_tool t',
      { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 't' },
      { spanId: 'c1', parent: 'b1', start: 2, end: 3 },
    );
    const self = f.make(
      'execute_tool s',
      { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 's' },
      { spanId: 's1', parent: 's1', start: 4, end: 5 },
    );
    const trace = reconstructTrace([a, b, c, self]);
    expect(codes(trace).filter((x) => x === 'parent_cycle')).toHaveLength(2);
    const names = trace.runs.flatMap((r) => r.calls.map((x) => x.name)).sort();
    expect(names).toEqual(['s', 't']);
  });

  it('10,000-deep nesting reconstructs without recursion', () => {
    const trace = reconstructTrace(deepChainTrace(10_000));
    expect(trace.problems).toEqual([]);
    expect(trace.runs).toHaveLength(1);
    expect(trace.runs[0]!.calls.map((c) => c.name)).toEqual(['leaf']);
  });

  it('10,000 nested agents: each is the child of the one above', () => {
    const f = new SpanFactory();
    const spans: SpanLike[] = [];
    let parent: SpanLike | undefined;
    for (let i = 0; i < 10_000; i++) {
      const s: SpanLike = f.make(
        `invoke_agent a${i}`,
        { 'gen_ai.operation.name': 'invoke_agent' },
        { start: i, end: 30_000 - i, ...(parent ? { parent } : {}) },
      );
      spans.push(s);
      parent = s;
    }
    const trace = reconstructTrace(spans);
    let depth = 0;
    for (let run = trace.runs[0]; run; run = run.children[0]) depth++;
    expect(depth).toBe(10_000);
  });

  it('a 100,000-span trace reconstructs in linear time', () => {
    const small = syntheticAgentTrace({ tools: 2_500, members: 250 });
    const large = syntheticAgentTrace({ tools: 25_000, members: 2_500 });
    expect(large.length).toBeGreaterThanOrEqual(100_000);
    // The fastest of three: one garbage collection or a busy neighbour on a shared machine
    // must not read as a complexity change.
    const time = (spans: SpanLike[]) => {
      let trace = reconstructTrace(spans);
      let ms = Number.POSITIVE_INFINITY;
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        trace = reconstructTrace(spans);
        ms = Math.min(ms, performance.now() - t0);
      }
      return { ms, trace };
    };
    const a = time(small);
    const b = time(large);
    expect(b.trace.problems).toEqual([]);
    const run = b.trace.runs[0]!;
    expect(run.calls).toHaveLength(27_500);
    expect(run.children).toHaveLength(2_500);
    expect(run.calls.every((c) => c.request !== undefined && !c.requestOnly)).toBe(true);
    // 10× the spans must not cost anywhere near 100× the time (quadratic); allow generous noise.
    expect(b.ms / a.ms).toBeLessThan(40);
  });

  it('arbitrary span soups never throw', () => {
    const id = fc.constantFrom('a', 'b', 'c', 'd', '', undefined);
    const spanArb = fc.record({
      traceId: fc.constantFrom('t1', 't2', '', undefined),
      spanId: id,
      parentSpanId: id,
      name: fc.oneof(
        fc.constantFrom('execute_tool x', 'invoke_agent y', 'chat m', 'ai.toolCall', 'Agent workflow'),
        fc.string(),
        fc.constant(undefined),
      ),
      startTime: fc.oneof(fc.double(), fc.constant(undefined)),
      endTime: fc.oneof(fc.double(), fc.constant(undefined)),
      status: fc.oneof(fc.record({ code: fc.constantFrom(0, 1, 2, 3) }), fc.constant(undefined)),
      attributes: fc.oneof(
        fc.dictionary(
          fc.constantFrom(
            'gen_ai.operation.name',
            'gen_ai.tool.name',
            'gen_ai.tool.call.id',
            'gen_ai.tool.call.arguments',
            'gen_ai.output.messages',
            'gen_ai.input.messages',
            'openinference.span.kind',
            'graph.node.id',
            'graph.node.parent_id',
            'toolwatch.from_history',
            'ai.response.toolCalls',
            'input.value',
          ),
          fc.oneof(
            fc.jsonValue(),
            fc.constantFrom('execute_tool', 'invoke_agent', 'chat', 'TOOL', 'AGENT', 'LLM', 'a', 'b'),
          ),
        ),
        fc.constant(null),
      ),
      events: fc.constant([]),
    });
    fc.assert(
      fc.property(fc.array(spanArb, { maxLength: 12 }), (spans) => {
        expect(() => reconstructTraces(spans as unknown as SpanLike[])).not.toThrow();
      }),
      { numRuns: 300 },
    );
  });
});
