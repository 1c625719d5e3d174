/**
 * Model spans recorded without content (the OTel GenAI default) add nothing to their run, and
 * the processor lets them go as they end instead of holding them until the run is judged. These
 * tests pin both halves: they are let go (a trace that held them would pass its span limit),
 * and the verdict is the one offline evaluation gives the same spans, in the cases where a
 * silent span still matters (it is the run's last model call, so an earlier request that never
 * ran is refused rather than pending; or it runs beside a model call that asks for tools).
 */
import type { Span, Tracer } from '@opentelemetry/api';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { isSilentModelSpan } from '../../src/conventions/silent-model-span.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import type { ToolwatchSpanProcessorOptions } from '../../src/processor/toolwatch-span-processor.js';
import { reliability } from '../../src/scorers/reliability.js';
import { toolOrder } from '../../src/scorers/tool-order.js';
import type { SpanLike, SyncScorer, Verdict } from '../../src/types.js';
import { liveAndOffline as liveAndOfflineUnder } from './live-and-offline.js';

/**
 * What reconstruction made of the run, as a result's detail: each call's status (a request that
 * never ran is `refused`, or `paused` when the run's last model output asked for it) and whether
 * the run has an error span. Live and offline must agree on it, not only on verdicts.
 */
const runShape: SyncScorer = {
  name: 'run_shape',
  kind: 'run_shape',
  digest: 'run-shape',
  async: false,
  config: {},
  score: (run) => ({
    scorer: 'run_shape',
    kind: 'run_shape',
    passed: true,
    score: 1,
    label: 'pass',
    reason: null,
    digest: 'run-shape',
    detail: {
      calls: run.calls.map((c) => `${c.name}:${c.status}${c.requestOnly ? ':request' : ''}`),
      hasErrorSpan: run.hasErrorSpan,
    },
  }),
};

const POLICY = definePolicy({
  rules: [
    {
      name: 'support',
      match: { agent: 'support*' },
      scorers: [
        runShape,
        reliability({ expectedToolCalls: ['lookup'], allowAdditionalToolCalls: true }),
        toolOrder({ expectedToolOrder: ['lookup', 'reply'] }),
      ],
    },
  ],
});

const under = (parent: Span) => trace.setSpan(ROOT_CONTEXT, parent);

/**
 * The SDK stamps starts with whole milliseconds: offline, two model calls started in the same
 * one are ordered by their span ids. Waiting for the next millisecond makes the order the one
 * that ran, for both sides.
 */
function nextMillisecond(): void {
  const now = Date.now();
  while (Date.now() <= now) {
    // spin
  }
}

function startAgent(tracer: Tracer, attributes: Record<string, string> = {}): Span {
  return tracer.startSpan('invoke_agent support', {
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'support', ...attributes },
  });
}

/** A model call that records no content. */
function silentModel(tracer: Tracer, parent: Span): Span {
  return tracer.startSpan(
    'chat model',
    { attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'm' } },
    under(parent),
  );
}

/** A model call whose output asks for `lookup` (call id `c1`), which never runs. */
function askingModel(tracer: Tracer, parent: Span): Span {
  const span = silentModel(tracer, parent);
  span.setAttribute(
    'gen_ai.output.messages',
    JSON.stringify([
      { role: 'assistant', parts: [{ type: 'tool_call', id: 'c1', name: 'lookup', arguments: { id: 1 } }] },
    ]),
  );
  return span;
}

function tool(tracer: Tracer, parent: Span, name: string): void {
  tracer
    .startSpan(
      `execute_tool ${name}`,
      { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': name } },
      under(parent),
    )
    .end();
}

/** The processor's verdicts and offline evaluation's under `POLICY`. */
const liveAndOffline = (
  program: (tracer: Tracer) => void,
  options: Partial<ToolwatchSpanProcessorOptions> = {},
) => liveAndOfflineUnder(POLICY, program, options);

const labels = (verdicts: Verdict[]) => verdicts.map((v) => v.results.map((r) => `${r.scorer}:${r.label}`));
const shapeOf = (verdicts: Verdict[]) => verdicts[0]?.results.find((r) => r.kind === 'run_shape')?.detail;

describe('model spans that say nothing', () => {
  it('are let go as they end: a run of many stays under a span limit that holding them would pass', async () => {
    const { live, offline } = await liveAndOffline(
      (tracer) => {
        const agent = startAgent(tracer);
        for (let i = 0; i < 50; i++) {
          silentModel(tracer, agent).end();
          tool(tracer, agent, 'lookup');
        }
        tool(tracer, agent, 'reply');
        agent.end();
      },
      // Held until the run ends, the 50 model spans alone would pass it: the run would get
      // `skipped: incomplete_trace` instead of a verdict.
      { maxSpansPerTrace: 60 },
    );
    expect(live).toHaveLength(1);
    expect(labels(live)).toEqual([['run_shape:pass', 'reliability:pass', 'tool_order:pass']]);
    // (Tool spans started in the same millisecond are ordered offline by span id: only the labels compare.)
    expect(labels(live)).toEqual(labels(offline));
  });

  it('a model span that says something is still held (the same run with content fails the limit)', async () => {
    const { live } = await liveAndOffline(
      (tracer) => {
        const agent = startAgent(tracer);
        for (let i = 0; i < 50; i++) {
          const model = silentModel(tracer, agent);
          model.setAttribute('gen_ai.input.messages', '[{"role":"user","parts":[]}]');
          model.end();
          tool(tracer, agent, 'lookup');
        }
        tool(tracer, agent, 'reply');
        agent.end();
      },
      { maxSpansPerTrace: 60 },
    );
    expect(live).toHaveLength(1);
    expect(live[0]!.results.map((r) => r.label)).toEqual(['skipped', 'skipped', 'skipped']);
  });

  it('as the run last model call, is kept: an earlier request that never ran stays refused, as offline', async () => {
    const { live, offline } = await liveAndOffline((tracer) => {
      const agent = startAgent(tracer);
      askingModel(tracer, agent).end();
      nextMillisecond();
      tool(tracer, agent, 'reply');
      nextMillisecond();
      silentModel(tracer, agent).end();
      agent.end();
    });
    // Were it let go, the asking call would be the run's last, and `lookup` a pause.
    expect(shapeOf(offline)).toEqual({ calls: ['lookup:refused:request', 'reply:ok'], hasErrorSpan: false });
    expect(live).toEqual(offline);
  });

  it('before an asking model call, changes nothing: the request is a pause, live as offline', async () => {
    const { live, offline } = await liveAndOffline((tracer) => {
      const agent = startAgent(tracer);
      silentModel(tracer, agent).end();
      nextMillisecond();
      tool(tracer, agent, 'reply');
      nextMillisecond();
      askingModel(tracer, agent).end();
      agent.end();
    });
    expect(shapeOf(offline)).toEqual({ calls: ['reply:ok', 'lookup:paused:request'], hasErrorSpan: false });
    expect(live).toEqual(offline);
  });

  it('beside an asking model call that started first and ends later, is kept, live as offline', async () => {
    const { live, offline } = await liveAndOffline((tracer) => {
      const agent = startAgent(tracer);
      const asking = askingModel(tracer, agent);
      // Starts after the asking call, so it is the run's last model call; it ends first.
      nextMillisecond();
      const silent = silentModel(tracer, agent);
      nextMillisecond();
      tool(tracer, agent, 'reply');
      silent.end();
      asking.end();
      agent.end();
    });
    expect(shapeOf(offline)).toEqual({ calls: ['lookup:refused:request', 'reply:ok'], hasErrorSpan: false });
    expect(live).toEqual(offline);
  });

  it('below a workflow span, beside an asking model call in it, is kept, live as offline', async () => {
    const { live, offline } = await liveAndOffline((tracer) => {
      const agent = startAgent(tracer);
      // The agent's one open child is the workflow, whatever runs in it.
      const workflow = tracer.startSpan(
        'invoke_workflow steps',
        { attributes: { 'gen_ai.operation.name': 'invoke_workflow' } },
        under(agent),
      );
      const asking = askingModel(tracer, workflow);
      nextMillisecond();
      const silent = silentModel(tracer, workflow);
      nextMillisecond();
      tool(tracer, workflow, 'reply');
      silent.end();
      asking.end();
      workflow.end();
      agent.end();
    });
    expect(shapeOf(offline)).toEqual({ calls: ['lookup:refused:request', 'reply:ok'], hasErrorSpan: false });
    expect(live).toEqual(offline);
  });

  it('with an error, is kept: its run has an error span, live as offline', async () => {
    const { live, offline } = await liveAndOffline((tracer) => {
      const agent = startAgent(tracer);
      const failed = silentModel(tracer, agent);
      failed.setStatus({ code: 2, message: 'rate limited' });
      failed.end();
      tool(tracer, agent, 'reply');
      agent.end();
    });
    expect(shapeOf(offline)).toEqual({ calls: ['reply:ok'], hasErrorSpan: true });
    expect(live).toEqual(offline);
  });

  it('with a tool below it, is kept: it links the tool to the run, live as offline', async () => {
    const { live, offline } = await liveAndOffline((tracer) => {
      const agent = startAgent(tracer);
      const model = silentModel(tracer, agent);
      tool(tracer, model, 'reply');
      model.end();
      agent.end();
    });
    expect(shapeOf(offline)).toEqual({ calls: ['reply:ok'], hasErrorSpan: false });
    expect(live).toEqual(offline);
  });

  it('with a decision event, is not silent: a denied call stays refused, live as offline', async () => {
    const { live, offline } = await liveAndOffline((tracer) => {
      const agent = startAgent(tracer);
      const decided = silentModel(tracer, agent);
      decided.addEvent('gen_ai.tool.call.decision', {
        'gen_ai.tool.call.decision.outcome': 'deny',
        'gen_ai.tool.call.id': 'c1',
      });
      decided.end();
      nextMillisecond();
      tool(tracer, agent, 'reply');
      nextMillisecond();
      askingModel(tracer, agent).end();
      agent.end();
    });
    // Without the decision, the last model output's unanswered `lookup` would be a pause.
    expect(shapeOf(offline)).toEqual({ calls: ['reply:ok', 'lookup:refused:request'], hasErrorSpan: false });
    expect(live).toEqual(offline);
  });

  it('as the first model call of a resumed agno run (OpenInference), is kept, live as offline', async () => {
    const { live, offline } = await liveAndOffline((tracer) => {
      const agent = tracer.startSpan('support.continue_run', {
        attributes: { 'openinference.span.kind': 'AGENT', 'agent.name': 'support', 'graph.node.id': 'n1' },
      });
      silentModel(tracer, agent).end();
      nextMillisecond();
      // Its input holds a call from before the pause: history, unless it were the first model call.
      const second = silentModel(tracer, agent);
      second.setAttribute(
        'gen_ai.input.messages',
        JSON.stringify([
          {
            role: 'assistant',
            parts: [{ type: 'tool_call', id: 'c9', name: 'lookup', arguments: { id: 1 } }],
          },
        ]),
      );
      second.end();
      agent.end();
    });
    expect(shapeOf(offline)).toEqual({ calls: [], hasErrorSpan: false });
    expect(live).toEqual(offline);
  });
});

describe('isSilentModelSpan', () => {
  const span = (attributes: Record<string, unknown>, events: SpanLike['events'] = []): SpanLike => ({
    traceId: 't',
    spanId: 's',
    name: 'chat m',
    kind: 2,
    startTime: 0,
    endTime: 1,
    status: { code: 0 },
    attributes,
    events,
  });
  const chat = { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'm' };

  it('holds for a model span with no content, and for nothing else', () => {
    expect(isSilentModelSpan(span(chat))).toBe(true);
    // Each thing a GenAI model span's readers read makes it speak.
    for (const [key, value] of [
      ['gen_ai.input.messages', '[]'],
      ['gen_ai.output.messages', '[]'],
      ['gen_ai.tool.definitions', '[]'],
      ['gcp.vertex.agent.llm_request', '{}'],
      ['gcp.vertex.agent.llm_response', '{}'],
    ] as const) {
      expect(isSilentModelSpan(span({ ...chat, [key]: value })), key).toBe(false);
    }
    expect(
      isSilentModelSpan(span(chat, [{ name: 'gen_ai.tool.call.decision', time: 0, attributes: {} }])),
    ).toBe(false);
    expect(isSilentModelSpan(span({ ...chat, 'gen_ai.operation.name': 'agent_step' }))).toBe(false);
    expect(
      isSilentModelSpan(span({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'x' })),
    ).toBe(false);
    // Other conventions' model spans: no adapter vouches for them.
    expect(isSilentModelSpan(span({ 'openinference.span.kind': 'LLM' }))).toBe(false);
  });
});
