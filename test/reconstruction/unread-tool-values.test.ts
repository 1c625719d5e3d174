/**
 * The processor leaves tool arguments and results unread unless a scorer of its policy reads
 * them (`readAhead` with `deferToolValues`, `reconstructTrace` with `argsRead`). On every
 * recorded trace of every framework, the runs must be the runs read in full, less the values
 * of tools no scorer reads, and each built-in scorer must score them exactly as it scores the
 * runs read in full.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { spansFromOtlpJson } from '../../src/conventions/from-otlp-json.js';
import { genAiSemconv } from '../../src/conventions/gen-ai-semconv.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { readAhead } from '../../src/reconstruction/read-facts.js';
import { reconstructTrace } from '../../src/reconstruction/reconstruct-trace.js';
import { runsInOrder } from '../../src/reconstruction/run-tree.js';
import { policyArgumentsRead } from '../../src/scorers/arguments-read.js';
import { reliability } from '../../src/scorers/reliability.js';
import { toolCalls } from '../../src/scorers/tool-calls.js';
import { toolOrder } from '../../src/scorers/tool-order.js';
import { trajectory } from '../../src/scorers/trajectory.js';
import type { AgentRun, Scorer, SpanLike, ToolExecution } from '../../src/types.js';
import { TraceBuilder } from '../helpers/trace-builder.js';

const fixtures = fileURLToPath(new URL('../fixtures/', import.meta.url));

function traces(dir: string): Array<{ file: string; spans: SpanLike[] }> {
  const out: Array<{ file: string; spans: SpanLike[] }> = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...traces(path));
    else if (name.endsWith('.otlp.json')) {
      const byTrace = new Map<string, SpanLike[]>();
      for (const span of spansFromOtlpJson(JSON.parse(readFileSync(path, 'utf8')))) {
        const list = byTrace.get(span.traceId) ?? [];
        list.push(span);
        byTrace.set(span.traceId, list);
      }
      for (const spans of byTrace.values()) out.push({ file: path.slice(fixtures.length), spans });
    }
  }
  return out;
}

/**
 * GenAI traces whose model spans carry no messages (the recorded ones all do): tool values of
 * every kind (unparseable, redacted, empty, text, escapes, validation failures), errors,
 * refusals, pauses, a member run, history-flagged calls.
 */
function messageless(): Array<{ file: string; spans: SpanLike[] }> {
  const t = new TraceBuilder();
  const agent = t.agent('support');
  agent.llm();
  agent.tool('lookup', { id: 'c1', args: { id: 1 }, result: { ok: true } });
  agent.tool('lookup', { id: 'c2', args: '{"id": 1', result: 'plain text' });
  agent.tool('reply', { id: 'c3', args: '__REDACTED__', result: '"quoted \\"json\\""' });
  agent.tool('reply', { id: 'c4', args: {}, result: '42' });
  agent.tool('search', {
    id: 'c5',
    args: '[1,2]',
    result: { error: true, message: 'Tool input validation failed' },
  });
  agent.tool('search', { args: 'not json', status: 'error', errorMessage: 'boom' });
  agent.tool('notify', { id: 'c7', args: { to: 'a' }, status: 'refused' });
  agent.tool('notify', { id: 'c8', args: { to: 'b' }, status: 'paused' });
  agent.tool('lookup', { id: 'c9', args: { id: 1 } }).set({ 'toolwatch.from_history': true });
  const member = agent.agent('support-triage');
  member.tool('lookup', { id: 'c10', args: { id: 2 }, result: [1, 2] });
  member.tool('delete', {
    id: 'c11',
    args: { id: 3 },
    result: { error: true, message: 'validation\\u0020failed' },
  });
  const u = new TraceBuilder();
  u.span('GET /orders').tool('lookup', { id: 'c12', args: { id: 1 }, result: { ok: true } });
  return [t, u].map((b, i) => ({ file: `messageless-${i}`, spans: spansFromOtlpJson(b.toOtlp()) }));
}

const all = [...traces(fixtures), ...messageless()];
const allTools = (spans: SpanLike[]) => {
  const names = new Set<string>();
  for (const run of runsInOrder(reconstructTrace(spans).runs))
    for (const e of run.executions) names.add(e.name);
  return names;
};
/** The processor's way: readings made ahead, some values left unread. */
const lazily = (spans: SpanLike[], argsRead: ReadonlySet<string>) =>
  reconstructTrace(
    spans,
    spans.map((s) => readAhead(s, true)),
    argsRead,
  );
const VALUES = ['args', 'argsRaw', 'argsError', 'result'] as const;
/** The conventions whose tool readers leave values unread. */
const DEFERRING = new Set(['gen_ai', 'ai_sdk']);
/** An execution without its values, links by span id (linked objects carry values of their own). */
const withoutValues = (e: ToolExecution) => {
  const copy: Record<string, unknown> = { ...e, run: e.run?.spanId, request: e.request?.llmSpanId };
  for (const k of VALUES) delete copy[k];
  return copy;
};
/**
 * The trace with no execution's `result` and no run's own `input` and `output` (never read when
 * values are left unread: no built-in scorer reads them).
 */
const withoutResults = (trace: ReturnType<typeof reconstructTrace>) => {
  for (const run of runsInOrder(trace.runs)) {
    delete run.input;
    delete run.output;
    for (const e of run.executions) delete e.result;
  }
  return trace;
};
/** A run less its calls, links by span id. */
const shape = ({ input: _input, output: _output, ...run }: AgentRun) => ({
  ...run,
  executions: run.executions.map(withoutValues),
  calls: run.calls.map((c) => ('spanId' in c ? withoutValues(c as ToolExecution) : c)),
  requests: run.requests.map((r) => ({ ...r, execution: r.execution?.spanId })),
  children: run.children.map((c) => c.spanId),
  parent: run.parent?.spanId,
});

describe('tool values left unread', () => {
  it('has recorded traces with tool spans to check, of several conventions', () => {
    const withTools = all.filter((t) => allTools(t.spans).size > 0);
    expect(withTools.length).toBeGreaterThan(20);
    const files = new Set(withTools.map((t) => t.file.split('/')[0]));
    expect(files.size).toBeGreaterThanOrEqual(5);
  });

  it('gives the runs read in full, less tool results, when every tool is named', () => {
    for (const { file, spans } of all) {
      const eager = withoutResults(reconstructTrace(spans));
      const lazy = withoutResults(lazily(spans, allTools(spans)));
      expect(lazy, file).toEqual(eager);
    }
  });

  it('never parses a GenAI or AI SDK tool result (no built-in scorer reads one)', () => {
    let unread = 0;
    let unreadAiSdk = 0;
    for (const { file, spans } of all) {
      const eager = runsInOrder(reconstructTrace(spans).runs);
      runsInOrder(lazily(spans, allTools(spans)).runs).forEach((run, i) => {
        run.executions.forEach((e, k) => {
          // (The other conventions' adapters read everything at once: a result may hold the
          // call id or a handoff.)
          if (!DEFERRING.has(e.convention) || eager[i]!.executions[k]!.result === undefined) return;
          if (e.result === undefined) {
            unread++;
            if (e.convention !== 'gen_ai') unreadAiSdk++;
          }
          // Else read at once, because it might have made the call a refusal.
          else expect(JSON.stringify(e.result), file).toMatch(/validation|\\/);
        });
      });
    }
    expect(unread).toBeGreaterThan(20);
    expect(unreadAiSdk).toBeGreaterThan(5);
  });

  it("leaves agents' own input and output unread: no built-in scorer reads them", () => {
    let read = 0;
    for (const { file, spans } of all) {
      const eager = runsInOrder(reconstructTrace(spans).runs);
      runsInOrder(lazily(spans, allTools(spans)).runs).forEach((run, i) => {
        if (eager[i]!.input !== undefined || eager[i]!.output !== undefined) read++;
        expect([run.input, run.output], file).toEqual([undefined, undefined]);
      });
    }
    // The recordings carry agents' inputs and outputs, read in full.
    expect(read).toBeGreaterThan(10);
  });

  it('reads no value of a tool nobody names (unless joins or history need them), and nothing else changes', () => {
    let unread = 0;
    for (const { file, spans } of all) {
      const eager = runsInOrder(reconstructTrace(spans).runs);
      const lazy = runsInOrder(lazily(spans, new Set()).runs);
      expect(lazy.length, file).toBe(eager.length);
      lazy.forEach((run, i) => {
        const full = eager[i]!;
        expect(shape(run), file).toEqual(shape(full));
        run.executions.forEach((e, k) => {
          const f = full.executions[k]!;
          if (VALUES.every((v) => e[v] === undefined) && VALUES.some((v) => f[v] !== undefined)) unread++;
          // Values read are the values read in full.
          for (const v of VALUES) if (e[v] !== undefined) expect(e[v], file).toEqual(f[v]);
        });
      });
    }
    // GenAI semconv traces without model messages leave their tool values unread.
    expect(unread).toBeGreaterThan(0);
  });

  it('reads every value when the trace joins calls to model requests', () => {
    const joined = all.filter(({ spans }) =>
      runsInOrder(reconstructTrace(spans).runs).some((r) => r.requests.length > 0),
    );
    expect(joined.length).toBeGreaterThan(5);
    for (const { file, spans } of joined)
      expect(withoutResults(lazily(spans, new Set())), file).toEqual(withoutResults(reconstructTrace(spans)));
  });

  it('lets every built-in scorer score the runs as it scores them read in full', () => {
    let compared = 0;
    for (const { file, spans } of all) {
      const names = [...allTools(spans)];
      if (names.length === 0) continue;
      const [first, second] = [names[0]!, names[names.length - 1]!];
      const scorers: Scorer[] = [
        trajectory({
          expectedTools: [first],
          maxCalls: 3,
          argConstraints: { [second]: { id: { exists: true } } },
          ...(names.length > 1 ? { expectedOrder: [[first, second]] as Array<[string, string]> } : {}),
        }),
        trajectory({ expectedTools: [first], maxRepeats: 1 }),
        toolOrder({ expectedToolOrder: names }),
        reliability({ expectedToolCalls: [first], expectedToolCallArguments: { [second]: { id: 1 } } }),
        toolCalls({ expectedTools: [first], arguments: { [second]: { query: 'x' } } }),
      ];
      for (const scorer of scorers) {
        const argsRead = policyArgumentsRead(definePolicy({ rules: [{ name: 'r', scorers: [scorer] }] }));
        const eager = runsInOrder(reconstructTrace(spans).runs);
        const lazy = runsInOrder(
          argsRead === undefined ? reconstructTrace(spans).runs : lazily(spans, argsRead).runs,
        );
        lazy.forEach((run: AgentRun, i) => {
          expect(scorer.score(run), `${file} ${scorer.kind}`).toEqual(scorer.score(eager[i]!));
          compared++;
        });
      }
    }
    expect(compared).toBeGreaterThan(100);
  });
});

describe('policyArgumentsRead', () => {
  const custom: Scorer = {
    name: 'mine',
    kind: 'custom',
    digest: 'x',
    async: false,
    config: {},
    score: () => ({
      scorer: 'mine',
      kind: 'custom',
      passed: true,
      score: 1,
      label: 'pass',
      reason: null,
      digest: 'x',
    }),
  } as unknown as Scorer;

  it('is the union of the tools whose arguments built-in scorers check', () => {
    const policy = definePolicy({
      rules: [
        {
          name: 'a',
          scorers: [
            trajectory({ expectedTools: ['x'], argConstraints: { lookup: { id: { equals: 1 } } } }),
            toolOrder({ expectedToolOrder: ['x', 'y'] }),
          ],
        },
        { name: 'b', scorers: [reliability({ expectedToolCallArguments: { reply: { id: 2 } } })] },
      ],
    });
    expect([...policyArgumentsRead(policy)!].sort()).toEqual(['lookup', 'reply']);
  });

  it('is undefined (read everything) for custom scorers, LLM judges and identical-call limits', () => {
    const judge = definePolicy({
      rules: [{ name: 'j', scorers: [{ kind: 'llm_judge', name: 'judge', prompt: 'tool_appropriateness' }] }],
    });
    expect(policyArgumentsRead(judge)).toBeUndefined();
    expect(policyArgumentsRead(definePolicy({ rules: [{ name: 'c', scorers: [custom] }] }))).toBeUndefined();
    expect(
      policyArgumentsRead(
        definePolicy({
          rules: [{ name: 'm', scorers: [trajectory({ expectedTools: ['x'], maxRepeats: 2 })] }],
        }),
      ),
    ).toBeUndefined();
  });
});

describe('GenAI tool spans read with deferValues', () => {
  const span = (attributes: Record<string, unknown>): SpanLike =>
    ({
      traceId: 't',
      spanId: 's',
      name: 'execute_tool lookup',
      kind: 0,
      startTime: 1,
      endTime: 2,
      attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup', ...attributes },
      events: [],
      status: { code: 0 },
    }) as unknown as SpanLike;
  const read = (attributes: Record<string, unknown>) => genAiSemconv.claimed!.tool(span(attributes), true)!;

  it('leaves arguments and result unread', () => {
    const facts = read({
      'gen_ai.tool.call.arguments': '{"id":1}',
      'gen_ai.tool.call.result': '{"ok":true}',
    });
    expect(facts.unread).toEqual({ args: '{"id":1}', result: '{"ok":true}' });
    expect(facts.args).toBeUndefined();
    expect(facts.result).toBeUndefined();
  });

  it('reads a result that may be a validation failure now: it decides that the tool never ran', () => {
    const failure = '{"error":true,"message":"Tool input validation failed"}';
    const facts = read({ 'gen_ai.tool.call.arguments': '{"id":"x"}', 'gen_ai.tool.call.result': failure });
    expect(facts.unread).toBeUndefined();
    expect(facts.notRun).toBe(true);
    // The phrase hidden behind JSON escapes is still found.
    const escaped = '{"error":true,"message":"validation\\u0020failed"}';
    expect(read({ 'gen_ai.tool.call.result': escaped }).notRun).toBe(true);
  });
});
