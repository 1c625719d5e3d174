/**
 * docs/processor.md, "The processor on your hot path": "Hooks never throw (problems go to `diag`, each
 * kind logged once, then counted)", "`forceFlush()` waits for pending judges and late runs".
 * The existing tests flush after a judge has already been released (a microtask away) or
 * when a judge hangs (its timeout bounds the wait), so a `forceFlush()` that returned at once
 * would pass them; and no test gives the processor callbacks that throw. Here a judge
 * answers on a real timer, a run waits on a real late-span timer, and `onVerdict` and
 * `onMisuse` throw on every call.
 */
import { diag } from '@opentelemetry/api';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { trajectory } from '../../src/scorers/trajectory.js';
import type { Scorer, ScorerResult, Verdict } from '../../src/types.js';
import { fakeScorer, policyOf } from './harness.js';
import { byName, evaluationEvents, pipeline, startAgent, startTool, tool } from './tracing.js';

afterEach(() => {
  vi.restoreAllMocks();
});

/** An `llm_judge`-kind scorer that answers `pass` after `ms` of real time. */
function slowJudge(ms: number): Scorer {
  return {
    ...fakeScorer({ name: 'judge', kind: 'llm_judge', async: true }),
    sampling: { ratio: 1 },
    score: () =>
      new Promise<ScorerResult>((resolve) =>
        setTimeout(
          () =>
            resolve({
              scorer: 'judge',
              kind: 'llm_judge',
              passed: true,
              score: 1,
              label: 'pass',
              reason: 'grounded',
              digest: 'digest-judge',
              detail: {},
            }),
          ms,
        ),
      ),
  };
}

describe('docs/processor.md: forceFlush() waits for pending judges and late runs', () => {
  it('returns only after a judge that answers 300 ms later has been delivered and its evaluate span exported', async () => {
    const verdicts: Verdict[] = [];
    const p = pipeline({
      policy: policyOf([{ scorers: [fakeScorer({ name: 'det' }), slowJudge(300)] }]),
      onVerdict: (v) => verdicts.push(v),
    });
    const agent = startAgent(p.tracer, 'asker');
    tool(p.tracer, 'lookup', agent);
    agent.end();
    expect(verdicts).toEqual([]);
    const started = Date.now();
    await p.processor.forceFlush();
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(verdicts.map((v) => v.results.map((r) => [r.scorer, r.label]))).toEqual([
      [
        ['det', 'pass'],
        ['judge', 'pass'],
      ],
    ]);
    // The exporting processor beside toolwatch (a SimpleSpanProcessor) got the evaluate span.
    const evaluate = byName(p.exporter.getFinishedSpans(), 'evaluate asker');
    expect(evaluationEvents(evaluate).map((e) => e.attributes?.['gen_ai.evaluation.score.label'])).toEqual([
      'pass',
    ]);
    await p.provider.shutdown();
  });

  it('returns only after a run waiting for a late span has been judged (lateSpanTimeoutMs later)', async () => {
    const verdicts: Verdict[] = [];
    const p = pipeline({
      policy: policyOf([{ scorers: [fakeScorer({ name: 'det' })] }]),
      lateSpanTimeoutMs: 300,
      onVerdict: (v) => verdicts.push(v),
    });
    const agent = startAgent(p.tracer, 'forgetful');
    tool(p.tracer, 'lookup', agent);
    startTool(p.tracer, 'fire_and_forget', agent);
    agent.end();
    expect(verdicts).toEqual([]);
    const started = Date.now();
    await p.processor.forceFlush();
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(verdicts.map((v) => [v.agent, v.results.map((r) => r.label)])).toEqual([['forgetful', ['pass']]]);
    expect(
      byName(p.exporter.getFinishedSpans(), 'evaluate forgetful').attributes['toolwatch.evaluation.passed'],
    ).toBe(true);
    await p.provider.shutdown();
  });
});

describe('docs/processor.md: hooks never throw; problems go to diag once per kind, then are counted', () => {
  it('onVerdict and onMisuse that throw on every call reach neither the application nor the verdicts', async () => {
    const warn = vi.spyOn(diag, 'warn');
    let verdictCalls = 0;
    let misuseCalls = 0;
    const p = pipeline({
      policy: policyOf([{ scorers: [trajectory({ forbiddenTools: ['delete_everything'] })] }]),
      onVerdict: () => {
        verdictCalls++;
        throw new Error('onVerdict blew up');
      },
      onMisuse: () => {
        misuseCalls++;
        throw new TypeError('onMisuse blew up');
      },
    });
    expect(() => {
      for (let i = 0; i < 3; i++) {
        const agent = startAgent(p.tracer, `agent${i}`);
        tool(p.tracer, 'delete_everything', agent);
        agent.end();
      }
    }).not.toThrow();
    expect(verdictCalls).toBe(3);
    expect(misuseCalls).toBe(3);
    // Every run still has its verdict on its exported agent span.
    const exported = (await p.flush()).filter((s) => s.name.startsWith('invoke_agent '));
    expect(exported.map((s) => s.attributes['toolwatch.evaluation.passed'])).toEqual([false, false, false]);
    const messages = () => warn.mock.calls.map((c) => String(c[0]));
    expect(messages().filter((m) => m.includes('onVerdict callback threw'))).toHaveLength(1);
    expect(messages().filter((m) => m.includes('onMisuse callback threw'))).toHaveLength(1);
    await p.provider.shutdown();
    // Counted: the count is said once, at shutdown.
    expect(messages().filter((m) => m.includes('on_verdict happened 3 times'))).toHaveLength(1);
    expect(messages().filter((m) => m.includes('on_misuse happened 3 times'))).toHaveLength(1);
  });
});
