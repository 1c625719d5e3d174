import { describe, expect, it } from 'vitest';
import { completeRunAsync, evaluateRunSync, finalizeVerdict } from '../../src/evaluation/evaluate-run.js';
import { JudgeLimiter } from '../../src/evaluation/judge-limiter.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { llmJudge } from '../../src/scorers/llm-judge.js';
import type { Scorer } from '../../src/types.js';
import { TraceBuilder } from '../helpers/trace-builder.js';
import { fakeScorer, runsOf, traceIdAt } from './helpers.js';

function runAt(fraction: number, options: { errorSpan?: boolean } = {}) {
  const t = new TraceBuilder({ traceId: traceIdAt(fraction) });
  const a = t.agent('refund-agent');
  a.tool('get_order_detail', { args: { order_id: 'A1' }, status: options.errorSpan ? 'error' : 'ok' });
  return runsOf(t)[0]!;
}

function policyOf(
  scorers: Scorer[],
  extra: Parameters<typeof definePolicy>[0] extends infer P ? Partial<P> : never = {},
) {
  return definePolicy({ ...extra, rules: [{ name: 'r', scorers }] });
}

const unlimited = () => new JudgeLimiter({ maxPerMinute: 1000, maxConcurrent: 10 }, () => 0);

describe('evaluateRunSync', () => {
  it('runs deterministic scorers and builds the verdict object', () => {
    const run = runAt(0.5);
    const ok = fakeScorer('ok', 'pass');
    const policy = policyOf([ok]);
    const { verdict, pending } = evaluateRunSync(run, policy.rules[0]!, policy);
    expect(pending).toEqual([]);
    expect(ok.calls).toBe(1);
    expect(verdict).toEqual({
      trace_id: run.traceId,
      span_id: run.spanId,
      agent: 'refund-agent',
      rule: 'r',
      passed: true,
      policy_digest: policy.digest,
      sampled: true,
      results: [expect.objectContaining({ scorer: 'ok', label: 'pass' })],
    });
  });

  it('turns a throwing scorer into an error result and a failed verdict', () => {
    const policy = policyOf([fakeScorer('ok', 'pass'), fakeScorer('boom', 'throw')]);
    const { verdict } = evaluateRunSync(runAt(0.5), policy.rules[0]!, policy);
    expect(verdict.passed).toBe(false);
    expect(verdict.results[1]).toMatchObject({
      scorer: 'boom',
      label: 'error',
      reason: 'boom exploded',
      passed: false,
    });
  });

  it('skips scorers whose sample does not select the run; skipped results do not fail the verdict', () => {
    const failing = fakeScorer('rare', 'fail', { ratio: 0.1 });
    const policy = policyOf([fakeScorer('ok', 'pass'), failing]);
    const { verdict } = evaluateRunSync(runAt(0.5), policy.rules[0]!, policy);
    expect(failing.calls).toBe(0);
    expect(verdict.results[1]).toMatchObject({ scorer: 'rare', label: 'skipped', reason: 'sampled_out' });
    expect(verdict.passed).toBe(true);
    const inSample = evaluateRunSync(runAt(0.05), policy.rules[0]!, policy);
    expect(inSample.verdict.results[1]!.label).toBe('fail');
    expect(inSample.verdict.passed).toBe(false);
  });

  it('caps every scorer by the policy-wide ratio and reports sampled', () => {
    const ok = fakeScorer('ok', 'pass');
    const policy = policyOf([ok], { sampling: { ratio: 0.3 } });
    const out = evaluateRunSync(runAt(0.5), policy.rules[0]!, policy);
    expect(out.verdict.sampled).toBe(false);
    expect(out.verdict.results[0]!.label).toBe('skipped');
    const inside = evaluateRunSync(runAt(0.2), policy.rules[0]!, policy);
    expect(inside.verdict.sampled).toBe(true);
    expect(inside.verdict.results[0]!.label).toBe('pass');
  });

  it('leaves judges unsampled by default (ratio 0)', () => {
    const judge = fakeScorer('judge', 'pass', { async: true });
    const policy = policyOf([fakeScorer('ok', 'pass'), judge]);
    const { verdict, pending } = evaluateRunSync(runAt(0.0001), policy.rules[0]!, policy);
    expect(pending).toEqual([]);
    expect(verdict.results.map((r) => [r.scorer, r.label, r.reason])).toEqual([
      ['ok', 'pass', null],
      ['judge', 'skipped', 'sampled_out'],
    ]);
  });

  it('selects sampled judges', () => {
    const judge = fakeScorer('judge', 'pass', { async: true, ratio: 0.1 });
    const policy = policyOf([judge]);
    expect(evaluateRunSync(runAt(0.05), policy.rules[0]!, policy).pending).toEqual([judge]);
    expect(evaluateRunSync(runAt(0.5), policy.rules[0]!, policy).pending).toEqual([]);
  });

  it('escalates on failure only when configured', () => {
    const judge = fakeScorer('judge', 'pass', { async: true });
    const scorers = [fakeScorer('bad', 'fail'), judge];
    const off = policyOf(scorers);
    expect(evaluateRunSync(runAt(0.5), off.rules[0]!, off).pending).toEqual([]);
    const on = policyOf(scorers, { judge: { escalateOn: ['failure'] } });
    const out = evaluateRunSync(runAt(0.5), on.rules[0]!, on);
    expect(out.pending).toEqual([judge]);
    expect(out.reasons).toEqual({ judge: 'failure' });
    // No failure, no escalation.
    const calm = policyOf([fakeScorer('ok', 'pass'), judge], { judge: { escalateOn: ['failure'] } });
    expect(evaluateRunSync(runAt(0.5), calm.rules[0]!, calm).pending).toEqual([]);
  });

  it('escalates on an error span when configured', () => {
    const judge = fakeScorer('judge', 'pass', { async: true });
    const policy = policyOf([judge], { judge: { escalateOn: ['error_span'] } });
    const errored = runAt(0.5, { errorSpan: true });
    expect(errored.hasErrorSpan).toBe(true);
    expect(evaluateRunSync(errored, policy.rules[0]!, policy).pending).toEqual([judge]);
    expect(evaluateRunSync(runAt(0.5), policy.rules[0]!, policy).pending).toEqual([]);
  });
});

describe('completeRunAsync and finalizeVerdict', () => {
  it('runs pending judges and merges them in rule order', async () => {
    const judge = fakeScorer('judge', 'fail', { async: true, ratio: 1 });
    const policy = policyOf([judge, fakeScorer('ok', 'pass')]);
    const rule = policy.rules[0]!;
    const run = runAt(0.5);
    const evaluation = evaluateRunSync(run, rule, policy);
    expect(evaluation.verdict.passed).toBe(true);
    const extra = await completeRunAsync(run, rule, policy, evaluation, { limiter: unlimited() });
    expect(extra.map((r) => r.label)).toEqual(['fail']);
    const final = finalizeVerdict(evaluation.verdict, extra, rule);
    expect(final.results.map((r) => r.scorer)).toEqual(['judge', 'ok']);
    expect(final.passed).toBe(false);
  });

  it('refuses judges over budget with skipped: budget, and releases slots', async () => {
    let now = 0;
    const limiter = new JudgeLimiter({ maxPerMinute: 2, maxConcurrent: 1 }, () => now);
    const judges = [1, 2, 3].map((i) => fakeScorer(`j${i}`, 'pass', { async: true, ratio: 1 }));
    const policy = policyOf(judges);
    const rule = policy.rules[0]!;
    const run = runAt(0.5);
    const evaluation = evaluateRunSync(run, rule, policy);
    const results = await completeRunAsync(run, rule, policy, evaluation, { limiter });
    expect(results.map((r) => [r.scorer, r.label, r.reason])).toEqual([
      ['j1', 'pass', null],
      ['j2', 'pass', null],
      ['j3', 'skipped', 'budget'],
    ]);
    expect(judges[2]!.calls).toBe(0);
    expect(limiter.active).toBe(0);
    const final = finalizeVerdict(evaluation.verdict, results, rule);
    // Passed on the two judged passes; the refused judge does not count.
    expect(final.results.map((r) => [r.scorer, r.label])).toEqual([
      ['j1', 'pass'],
      ['j2', 'pass'],
      ['j3', 'skipped'],
    ]);
    expect(final.passed).toBe(true);
    now = 60_000;
    const later = await completeRunAsync(run, rule, policy, evaluation, { limiter });
    expect(later.map((r) => r.label)).toEqual(['pass', 'pass', 'skipped']);
  });

  it('refuses a judge while another call holds the only concurrent slot', async () => {
    const limiter = new JudgeLimiter({ maxPerMinute: 100, maxConcurrent: 1 }, () => 0);
    expect(limiter.tryAcquire()).toBe(true);
    const judge = fakeScorer('j', 'pass', { async: true, ratio: 1 });
    const policy = policyOf([judge]);
    const run = runAt(0.5);
    const evaluation = evaluateRunSync(run, policy.rules[0]!, policy);
    const results = await completeRunAsync(run, policy.rules[0]!, policy, evaluation, { limiter });
    expect(results[0]).toMatchObject({ label: 'skipped', reason: 'budget' });
  });

  it('turns a rejecting async scorer into an error result and marks escalated results', async () => {
    const boom = fakeScorer('boom', 'throw', { async: true });
    const policy = policyOf([fakeScorer('bad', 'fail'), boom], { judge: { escalateOn: ['failure'] } });
    const run = runAt(0.5);
    const evaluation = evaluateRunSync(run, policy.rules[0]!, policy);
    const [r] = await completeRunAsync(run, policy.rules[0]!, policy, evaluation, { limiter: unlimited() });
    expect(r).toMatchObject({ scorer: 'boom', label: 'error', reason: 'boom exploded' });

    const judge = fakeScorer('judge', 'pass', { async: true });
    const p2 = policyOf([fakeScorer('bad', 'fail'), judge], { judge: { escalateOn: ['failure'] } });
    const ev2 = evaluateRunSync(run, p2.rules[0]!, p2);
    const [j] = await completeRunAsync(run, p2.rules[0]!, p2, ev2, { limiter: unlimited() });
    expect(j!.detail.escalated).toBe('failure');
  });

  it('passes judges and the policy redaction to llm_judge scorers', async () => {
    const prompts: string[] = [];
    const judge = llmJudge({ prompt: 'tool_appropriateness', sampling: { ratio: 1 } });
    const policy = policyOf([judge], { redact: { values: true } });
    const run = runAt(0.5);
    const evaluation = evaluateRunSync(run, policy.rules[0]!, policy);
    const [r] = await completeRunAsync(run, policy.rules[0]!, policy, evaluation, {
      limiter: unlimited(),
      judges: {
        default: ({ prompt }: { prompt: string }) => {
          prompts.push(prompt);
          return '{"evaluations":[{"toolCalled":"get_order_detail","wasAppropriate":true,"reasoning":"ok"}]}';
        },
      },
    });
    expect(r!.label).toBe('pass');
    expect(prompts[0]).toContain('get_order_detail arguments with keys [order_id]');
    expect(prompts[0]).not.toContain('A1');
  });
});
