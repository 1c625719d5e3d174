/**
 * Agent runs no rule matches are never silent in the processor: each is counted in
 * `toolwatch.runs.unmatched` by agent name, and each of the first few names is logged once
 * through `diag` — whichever way the processor followed the run (a root no rule can match,
 * a held trace, runs side by side, out of the sample). Nested runs are part of theirs.
 */
import { DiagLogLevel, diag } from '@opentelemetry/api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { trajectory } from '../../src/scorers/trajectory.js';
import { METRIC_TOOLWATCH_RUNS_UNMATCHED } from '../../src/semconv.js';
import type { Policy } from '../../src/types.js';
import { createMetrics, pointValue, policyOf } from './harness.js';
import { pipeline, startAgent, startPlain, tool } from './tracing.js';

let warnings: string[];

beforeEach(() => {
  warnings = [];
  diag.setLogger(
    {
      error: () => {},
      warn: (message: string) => warnings.push(message),
      info: () => {},
      debug: () => {},
      verbose: () => {},
    },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
});

afterEach(() => {
  diag.disable();
});

const refunds = (extra: Partial<Policy> = {}, attributes?: Record<string, string>) =>
  policyOf(
    [
      {
        name: 'refunds',
        match: { agent: 'refund-*', rootOnly: true, ...(attributes ? { attributes } : {}) },
        scorers: [trajectory({ expectedTools: ['get_order'] })],
      },
    ],
    extra,
  );

async function unmatchedCounts(policy: Policy, drive: (p: ReturnType<typeof pipeline>) => void) {
  const metrics = createMetrics();
  const p = pipeline({ policy, meterProvider: metrics.meterProvider });
  drive(p);
  await p.flush();
  const metric = (await metrics.collect()).get(METRIC_TOOLWATCH_RUNS_UNMATCHED);
  await p.provider.shutdown();
  await metrics.shutdown();
  return (agent: string) => pointValue(metric, { 'gen_ai.agent.name': agent }) ?? 0;
}

describe('runs no rule matched, in the processor', () => {
  it('a root no rule can match (followed without its spans): counted, logged once by name', async () => {
    const count = await unmatchedCounts(refunds(), (p) => {
      for (let i = 0; i < 3; i++) {
        const agent = startAgent(p.tracer, 'weather_agent');
        tool(p.tracer, 'getWeather', agent);
        // A nested run is part of its outermost run.
        const member = startAgent(p.tracer, 'forecaster', agent);
        member.end();
        agent.end();
      }
      // A held trace: its nested run is judged (by no rule) when the outermost span closes.
      const matched = startAgent(p.tracer, 'refund-bot');
      tool(p.tracer, 'get_order', matched);
      startAgent(p.tracer, 'policy-checker', matched).end();
      matched.end();
    });
    expect(count('weather_agent')).toBe(3);
    expect(count('forecaster')).toBe(0);
    expect(count('refund-bot')).toBe(0);
    expect(count('policy-checker')).toBe(0);
    const said = warnings.filter((w) => w.includes('matched no rule'));
    expect(said).toEqual([
      'toolwatch: agent run "weather_agent" matched no rule of the policy (rules refunds: "refund-*"), so it is not judged; such runs are counted in toolwatch.runs.unmatched',
    ]);
  });

  it('a held trace (rules read attributes), runs side by side, and runs out of the sample', async () => {
    const held = await unmatchedCounts(refunds({}, { tier: 'gold' }), (p) => {
      const agent = startAgent(p.tracer, 'weather_agent');
      tool(p.tracer, 'getWeather', agent);
      agent.end();
    });
    expect(held('weather_agent')).toBe(1);
    // Two runs open at once under a request span: rebuilt together, judged one by one.
    const sideBySide = await unmatchedCounts(refunds(), (p) => {
      const request = startPlain(p.tracer, 'POST /chat');
      const a = startAgent(p.tracer, 'weather_agent', request);
      const b = startAgent(p.tracer, 'refund-bot', request);
      tool(p.tracer, 'getWeather', a);
      tool(p.tracer, 'get_order', b);
      a.end();
      b.end();
      request.end();
    });
    expect(sideBySide('weather_agent')).toBe(1);
    expect(sideBySide('refund-bot')).toBe(0);
    // With a rule for nested runs too, nested agent spans are followed out of the sample: a
    // nested run no rule matches is still part of its outermost run.
    const withMembers = policyOf(
      [
        {
          name: 'refunds',
          match: { agent: 'refund-*', rootOnly: true },
          scorers: [trajectory({ expectedTools: ['a'] })],
        },
        {
          name: 'members',
          match: { agent: 'checker-*', rootOnly: false },
          scorers: [trajectory({ expectedTools: ['a'] })],
        },
      ],
      { sampling: { ratio: 0 } },
    );
    const sampledOut = await unmatchedCounts(withMembers, (p) => {
      const weather = startAgent(p.tracer, 'weather_agent');
      startAgent(p.tracer, 'forecaster', weather).end();
      weather.end();
      startAgent(p.tracer, 'refund-bot').end();
    });
    expect(sampledOut('weather_agent')).toBe(1);
    expect(sampledOut('forecaster')).toBe(0);
    expect(sampledOut('refund-bot')).toBe(0);
  });

  it('logs at most five names, then says once that more are only counted', async () => {
    const count = await unmatchedCounts(refunds(), (p) => {
      for (let i = 0; i < 8; i++) startAgent(p.tracer, `agent-${i}`).end();
      startAgent(p.tracer, 'agent-7').end();
    });
    for (let i = 0; i < 7; i++) expect(count(`agent-${i}`)).toBe(1);
    expect(count('agent-7')).toBe(2);
    const said = warnings.filter((w) => w.includes('matched no rule'));
    expect(said).toHaveLength(6);
    expect(said.slice(0, 5).map((w) => /"(agent-\d)"/.exec(w)?.[1])).toEqual([
      'agent-0',
      'agent-1',
      'agent-2',
      'agent-3',
      'agent-4',
    ]);
    expect(said[5]).toBe(
      'toolwatch: runs of more agents matched no rule; only the first 5 names are logged, every run is counted in toolwatch.runs.unmatched',
    );
  });
});
