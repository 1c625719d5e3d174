/**
 * Nested runs judged from their own subtree (`NestedRuns`) get the verdict offline evaluation
 * gives them on the whole exported trace, in the shapes where the subtree alone would read
 * differently: a span started under a nested run after it ended, a span started after the
 * run's own span ended, a call in a model input that only the run around it made, a history
 * flag above the run. Each is mutation-checked against the guard that sends the run to a
 * whole-trace rebuild. Steps are a few milliseconds apart: the exported spans start on whole
 * milliseconds, and offline evaluation must see the order that ran.
 */
import type { Span, Tracer } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { trajectory } from '../../src/scorers/trajectory.js';
import type { AgentRun, Scorer, Verdict } from '../../src/types.js';
import { policyOf } from './harness.js';
import { liveAndOffline as liveAndOfflineUnder } from './live-and-offline.js';
import { inside, startAgent, startTool, tool } from './tracing.js';

/** Passes a run that kept nothing as history (a custom scorer may read `run.history`). */
const noHistory: Scorer = {
  name: 'no_history',
  kind: 'custom',
  digest: 'no-history',
  async: false,
  config: {},
  score: (run: AgentRun) => ({
    scorer: 'no_history',
    kind: 'custom',
    passed: run.history.length === 0,
    score: run.history.length === 0 ? 1 : 0,
    label: run.history.length === 0 ? 'pass' : 'fail',
    reason: run.history.map((h) => h.name).join(',') || null,
    digest: 'no-history',
    detail: {},
  }),
};

const POLICY = policyOf([
  {
    name: 'members',
    match: { rootOnly: false },
    scorers: [trajectory({ name: 'no_delete', forbiddenTools: ['delete'] }), noHistory],
  },
]);

/** A few milliseconds: the exported spans' starts (whole milliseconds) keep the order that ran. */
function tick(): void {
  const until = performance.now() + 3;
  while (performance.now() < until) {}
}

/** What a verdict says, by the name of the span it is about. */
function summary(verdicts: readonly Verdict[], spans: readonly ReadableSpan[]): string[] {
  const names = new Map(spans.map((s) => [s.spanContext().spanId, s.name]));
  return verdicts
    .map(
      (v) =>
        `${names.get(v.span_id)} ${v.rule} ${v.passed} ${v.results.map((r) => `${r.scorer}:${r.label}`).join(' ')}`,
    )
    .sort();
}

/** The processor's verdicts and offline evaluation's, summed up. */
async function liveAndOffline(program: (tracer: Tracer) => void) {
  const { live, offline, spans } = await liveAndOfflineUnder(POLICY, program);
  return { live: summary(live, spans), offline: summary(offline, spans) };
}

describe('a nested run judged from its subtree', () => {
  it('leaves to the run around it a span started under it after it ended', async () => {
    const { live, offline } = await liveAndOffline((tracer) => {
      const root = startAgent(tracer, 'root');
      const outer = startAgent(tracer, 'outer', root);
      const inner = startAgent(tracer, 'inner', outer);
      tool(tracer, 'lookup', inner);
      tick();
      inner.end();
      tick();
      // agno keeps a member's context current after it returns: this call is the outer run's.
      tool(tracer, 'delete', inner);
      tick();
      outer.end();
      root.end();
    });
    expect(offline).toContain('invoke_agent outer members false no_delete:fail no_history:pass');
    expect(offline).toContain('invoke_agent inner members true no_delete:pass no_history:pass');
    expect(live).toEqual(offline);
  });

  it('leaves to the run around it a span started below it after its own span ended', async () => {
    const { live, offline } = await liveAndOffline((tracer) => {
      const root = startAgent(tracer, 'root');
      const outer = startAgent(tracer, 'outer', root);
      const lookup = startTool(tracer, 'lookup', outer);
      tick();
      // The agent returns while its tool still runs; the tool's work goes on after.
      outer.end();
      tick();
      tool(tracer, 'delete', lookup);
      lookup.end();
      tick();
      root.end();
    });
    expect(offline).toContain('invoke_agent outer members true no_delete:pass no_history:pass');
    expect(offline).toContain('invoke_agent root members false no_delete:fail no_history:pass');
    expect(live).toEqual(offline);
  });

  it('does not take for history a call of its model input that the run around it made', async () => {
    const { live, offline } = await liveAndOffline((tracer) => {
      const root = startAgent(tracer, 'root');
      const lookup = tracer.startSpan(
        'execute_tool lookup',
        {
          attributes: {
            'gen_ai.operation.name': 'execute_tool',
            'gen_ai.tool.name': 'lookup',
            'gen_ai.tool.call.id': 'call_root_lookup',
            'gen_ai.tool.call.arguments': '{"id":1}',
          },
        },
        inside(root),
      );
      lookup.end();
      tick();
      const member = startAgent(tracer, 'member', root);
      const chat = tracer.startSpan(
        'chat model',
        {
          attributes: {
            'gen_ai.operation.name': 'chat',
            'gen_ai.input.messages': JSON.stringify([
              { role: 'user', parts: [{ type: 'text', content: 'what did you find?' }] },
              {
                role: 'assistant',
                parts: [{ type: 'tool_call', id: 'call_root_lookup', name: 'lookup', arguments: { id: 1 } }],
              },
              {
                role: 'tool',
                parts: [{ type: 'tool_call_response', id: 'call_root_lookup', response: 'ok' }],
              },
            ]),
          },
        },
        inside(member),
      );
      chat.end();
      tick();
      member.end();
      tick();
      root.end();
    });
    expect(offline).toContain('invoke_agent member members true no_delete:pass no_history:pass');
    expect(live).toEqual(offline);
  });

  it('is no run under a span flagged as history', async () => {
    const { live, offline } = await liveAndOffline((tracer) => {
      const root = startAgent(tracer, 'root');
      const replayed = startAgent(tracer, 'replayed', root, { 'toolwatch.from_history': true });
      const member = startAgent(tracer, 'member', replayed);
      tool(tracer, 'delete', member);
      tick();
      member.end();
      replayed.end();
      tick();
      root.end();
    });
    expect(offline).toEqual(['invoke_agent root members false no_delete:pass no_history:fail']);
    expect(live).toEqual(offline);
  });

  it('takes the runs below it as they were judged, and their errors and calls count in its verdict', async () => {
    const { live, offline } = await liveAndOffline((tracer) => {
      const root = startAgent(tracer, 'root');
      const chain: Span[] = [root];
      for (let i = 1; i <= 5; i++) chain.push(startAgent(tracer, `a${i}`, chain[i - 1]));
      tool(tracer, 'delete', chain[5]!);
      tool(tracer, 'lookup', chain[3]!);
      for (let i = 5; i >= 0; i--) {
        tick();
        chain[i]!.end();
      }
    });
    expect(offline.filter((line) => line.includes('no_delete:fail'))).toHaveLength(6);
    expect(live).toEqual(offline);
  });
});
