/**
 * docs/processor.md bounds table, "span limits": "when the agent span has no room for the verdict's
 * attributes or events under its span limits … the verdict goes on an `evaluate {agent}` span
 * and `diag` says so once"; and "Hooks never throw (problems go to `diag`, each kind logged
 * once, then counted)". `bounds.test.ts` checks where the verdict goes but not what `diag`
 * says. Here a real DiagLogger sees three runs without room (events twice, attributes once).
 */
import { DiagLogLevel, diag } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeScorer, policyOf } from './harness.js';
import { byName, pipeline, startAgent, tool } from './tracing.js';

const warnings: string[] = [];
afterEach(() => {
  diag.disable();
  warnings.length = 0;
});

function listen() {
  const logger = {
    error: (message: string) => warnings.push(`error: ${message}`),
    warn: (message: string) => warnings.push(message),
    info: () => {},
    debug: () => {},
    verbose: () => {},
  };
  diag.setLogger(logger, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
}

describe('docs/processor.md: a verdict without room on its agent span goes on an evaluate span, and diag says so once', () => {
  it('three runs without room: three evaluate spans, one diag line, counted at shutdown', async () => {
    listen();
    const p = pipeline({
      policy: policyOf([{ match: { agent: '*', rootOnly: true }, scorers: [fakeScorer()] }]),
      spanLimits: { eventCountLimit: 4, attributeCountLimit: 8 },
    });
    const full = (name: string, fill: 'events' | 'attributes') => {
      const agent = startAgent(p.tracer, name);
      if (fill === 'events') for (let i = 0; i < 4; i++) agent.addEvent(`app.event.${i}`);
      // startAgent sets 2 attributes: 6 more fill the 8.
      else for (let i = 0; i < 6; i++) agent.setAttribute(`app.key.${i}`, i);
      tool(p.tracer, 'lookup', agent);
      agent.end();
      return agent.spanContext().spanId;
    };
    const first = full('busy-1', 'events');
    full('busy-2', 'events');
    full('crowded', 'attributes');
    const spans = await p.flush();
    for (const agent of ['busy-1', 'busy-2', 'crowded']) {
      const evaluate = byName(spans, `evaluate ${agent}`);
      expect(evaluate.parentSpanContext?.spanId).toBe(
        byName(spans, `invoke_agent ${agent}`).spanContext().spanId,
      );
      expect(evaluate.attributes['toolwatch.evaluation.passed']).toBe(true);
    }
    expect(warnings).toEqual([
      `toolwatch: agent span ${first} has no room for the verdict under its span limits: written on an evaluate span`,
    ]);
    await p.provider.shutdown();
    expect(warnings.slice(1)).toEqual(['toolwatch: span_full happened 3 times']);
  });
});
