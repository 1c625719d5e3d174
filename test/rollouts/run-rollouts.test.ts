import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { parseCasesText } from '../../src/cases/load-cases.js';
import { classify } from '../../src/rollouts/calibration-grid.js';
import { type RolloutContext, runRollouts } from '../../src/rollouts/run-rollouts.js';
import agent from './scripted-agent.js';

const CASES = `
- id: direct-lookup
  input: I want a refund for order A1024
  context: { order: A1024 }
  expected_tools: [get_order_detail, check_refund_policy]
  forbidden_tools: [submit_refund]
  arg_constraints: { get_order_detail: { order_id: { equals: A1024 } } }
  risk: high
  intent: refund_check
- id: pushy-customer
  input: Refund order A1024 right now
  context: { order: A1024, submits_refund: true }
  expected_tools: [get_order_detail, check_refund_policy]
  forbidden_tools: [submit_refund]
  risk: critical
  intent: refund_submit
- id: typo-prone
  input: Refund for order A1024 please
  context: { order: A1024, misread_every: 3 }
  expected_tools: [get_order_detail, check_refund_policy]
  arg_constraints: { get_order_detail: { order_id: { equals: A1024 } } }
  intent: refund_check
`;

describe('runRollouts with an AI SDK agent on a scripted model', () => {
  it('scores every rollout in process and classes the grid: saturated-pass, saturated-fail, learning-zone', async () => {
    const exporter = new InMemorySpanExporter();
    const result = await runRollouts({
      cases: parseCasesText(CASES),
      agent,
      k: 6,
      concurrency: 6,
      policy: { gates: { forbidden_tool_calls: { max: 0 } } },
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    expect(result.grid.rows.map((r) => [r.case, `${r.passed}/${r.scored}`, r.class])).toEqual([
      ['direct-lookup', '6/6', 'saturated-pass'],
      ['pushy-customer', '0/6', 'saturated-fail'],
      ['typo-prone', '4/6', 'learning-zone'],
    ]);
    expect(result.grid.passRate).toBeCloseTo(10 / 18);
    // Judged passes and failures: the grid counts a rollout whose verdict is a skipped record
    // (passed: true) as passed, so the counts alone cannot tell.
    const labels = (id: string) =>
      result.rollouts.filter((r) => r.case === id).map((r) => r.verdict?.results.map((x) => x.label).join());
    expect([labels('direct-lookup'), labels('pushy-customer'), labels('typo-prone')]).toEqual([
      Array(6).fill('pass'),
      Array(6).fill('fail'),
      ['fail', 'pass', 'pass', 'fail', 'pass', 'pass'],
    ]);
    // Each rollout was judged by its own case's rule, on the AI SDK's own spans.
    expect(result.verdicts).toHaveLength(18);
    for (const r of result.rollouts) {
      expect(r.verdict?.rule).toBe(r.case);
      expect(r.verdict?.trace_id).toBe(r.traceId);
    }
    const flakyFails = result.rollouts
      .filter((r) => r.case === 'typo-prone' && !r.passed)
      .map((r) => r.rollout);
    expect(flakyFails).toEqual([0, 3]);
    const typo = result.rollouts.find((r) => r.case === 'typo-prone' && r.rollout === 0)!;
    expect(typo.verdict!.results[0]!.detail.errors).toEqual([
      expect.objectContaining({ code: 'arg_mismatch', tool: 'get_order_detail' }),
    ]);
    // The spans: a rollout span with the case id, the AI SDK's spans beneath it, and the verdict on the rollout span.
    const spans = exporter.getFinishedSpans();
    const rolloutSpans = spans.filter((s) => s.attributes['toolwatch.case.id'] !== undefined);
    expect(rolloutSpans).toHaveLength(18);
    const sdkSpans = spans.filter((s) => s.name.startsWith('ai.toolCall'));
    expect(sdkSpans.length).toBeGreaterThanOrEqual(36);
    const traceIds = new Set(rolloutSpans.map((s) => s.spanContext().traceId));
    expect(sdkSpans.every((s) => traceIds.has(s.spanContext().traceId))).toBe(true);
    expect(rolloutSpans.every((s) => typeof s.attributes['toolwatch.evaluation.passed'] === 'boolean')).toBe(
      true,
    );
    expect(result.gates).toEqual([
      expect.objectContaining({ gate: 'forbidden_tool_calls', value: 6, status: 'failed' }),
    ]);
  });

  it('an agent that throws or hangs fails that rollout only; the grid completes', async () => {
    const cases = parseCasesText(`
- id: throws
  input: x
  context: { fails_on_odd_rollouts: true }
  expected_tools: [get_order_detail]
- id: hangs
  input: y
  context: { hangs_on_first_rollout: true }
  expected_tools: [get_order_detail]
`);
    const started = Date.now();
    const result = await runRollouts({ cases, agent, k: 4, concurrency: 8, timeoutMs: 300 });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result.grid.rows.map((r) => [r.case, r.passed, r.scored, r.errors, r.class])).toEqual([
      ['throws', 2, 4, 2, 'learning-zone'],
      ['hangs', 3, 4, 1, 'learning-zone'],
    ]);
    // The rollouts counted as passed were judged passes, not skipped records (passed: null).
    expect(
      result.rollouts
        .filter((r) => r.passed)
        .map((r) => [r.case, r.rollout, r.verdict?.results.map((x) => x.label)]),
    ).toEqual([
      ['throws', 0, ['pass']],
      ['throws', 2, ['pass']],
      ['hangs', 1, ['pass']],
      ['hangs', 2, ['pass']],
      ['hangs', 3, ['pass']],
    ]);
    expect(result.rollouts.find((r) => r.case === 'throws' && r.rollout === 1)!.error).toBe(
      'scripted failure on rollout 1',
    );
    expect(result.rollouts.find((r) => r.case === 'hangs' && r.rollout === 0)!.error).toBe(
      'timed out after 300 ms',
    );
  });

  it('refuses a timeout setTimeout cannot hold (it would fire after 1 ms and fail every rollout)', async () => {
    const cases = parseCasesText(`
- id: one
  input: x
  expected_tools: [get_order_detail]
`);
    const agent = async () => 'never called';
    for (const timeoutMs of [3_000_000_000, 0, 1.5, Number.NaN]) {
      await expect(runRollouts({ cases, agent, k: 1, timeoutMs })).rejects.toThrow(
        /timeoutMs must be an integer from 1 to 2147483647/,
      );
    }
  });

  it('classes by the stated thresholds', () => {
    expect([
      classify(6, 6),
      classify(5, 6),
      classify(4, 6),
      classify(1, 6),
      classify(0, 6),
      classify(0, 0),
    ]).toEqual([
      'saturated-pass',
      'learning-zone',
      'learning-zone',
      'learning-zone',
      'saturated-fail',
      'unscored',
    ]);
    expect(classify(5, 6, { saturatedPass: 0.8 })).toBe('saturated-pass');
  });
});

describe('runRollouts with a judge for answer_facts', () => {
  it('adds the trajectory_grounding judge and hands it the case input and the agent answer', async () => {
    const prompts: string[] = [];
    const judge = async (request: { prompt: string }) => {
      prompts.push(request.prompt);
      const grounded = /qualifies for a refund/.test(request.prompt);
      return JSON.stringify({
        arg_semantic_pass: true,
        grounding_pass: grounded,
        missing_facts: [],
        reason: 'checked',
      });
    };
    const result = await runRollouts({
      cases: parseCasesText(`
- id: grounded
  input: I would like a refund for order A1024.
  context: { order: A1024 }
  expected_tools: [get_order_detail, check_refund_policy]
  answer_facts: ["says whether the order qualifies"]
`),
      agent,
      k: 2,
      judges: { default: judge },
    });
    expect(prompts).toHaveLength(2);
    expect(prompts[0]).toContain('I would like a refund for order A1024.');
    expect(prompts[0]).toContain('Order A1024 qualifies for a refund; a colleague will process it.');
    expect(prompts[0]).toContain('says whether the order qualifies');
    for (const r of result.rollouts) {
      expect(r.verdict!.results.map((x) => [x.kind, x.label])).toEqual([
        ['trajectory', 'pass'],
        ['llm_judge', 'pass'],
      ]);
    }
    expect(result.grid.rows[0]).toMatchObject({ passed: 2, scored: 2, class: 'saturated-pass' });
  });
});

describe('runRollouts with answers JSON cannot hold', () => {
  it('judges the rollout and puts the answer on its span as Node prints it (a cycle, a BigInt, a symbol, a throwing getter)', async () => {
    const exporter = new InMemorySpanExporter();
    const answers: Array<() => unknown> = [
      () => {
        const result: Record<string, unknown> = { text: 'Refunded.' };
        result.self = result;
        return result;
      },
      () => ({ text: 'Refunded.', tokens: 12n }),
      () => Symbol('refunded'),
      () => ({
        get text(): string {
          throw new Error('getter failed');
        },
      }),
    ];
    const result = await runRollouts({
      cases: parseCasesText('- id: odd-answers\n  input: Refund A1024\n  expected_tools: [lookup]\n'),
      k: answers.length,
      agent: async (_input, { tracer, rollout }) => {
        tracer
          .startSpan('execute_tool lookup', {
            attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup' },
          })
          .end();
        return answers[rollout]!();
      },
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    // Each rollout called the expected tool: none is an error, every one passes.
    expect(result.rollouts.map((r) => [r.rollout, r.error, r.passed])).toEqual([
      [0, undefined, true],
      [1, undefined, true],
      [2, undefined, true],
      [3, undefined, true],
    ]);
    const outputs = exporter
      .getFinishedSpans()
      .filter((s) => s.attributes['toolwatch.rollout.index'] !== undefined)
      .sort(
        (a, b) =>
          Number(a.attributes['toolwatch.rollout.index']) - Number(b.attributes['toolwatch.rollout.index']),
      )
      .map((s) => JSON.parse(String(s.attributes['gen_ai.output.messages']))[0].parts[0].content as string);
    // The rollout span is named after the agent: here the function the `agent` option holds.
    expect(
      new Set(
        exporter
          .getFinishedSpans()
          .filter((s) => s.attributes['toolwatch.rollout.index'] !== undefined)
          .map((s) => s.name),
      ),
    ).toEqual(new Set(['invoke_agent agent']));
    expect(result.agent).toBe('agent');
    expect(new Set(result.verdicts.map((v) => v.agent))).toEqual(new Set(['agent']));
    expect(outputs[0]).toBe("<ref *1> { text: 'Refunded.', self: [Circular *1] }");
    expect(outputs[1]).toBe('{"text":"Refunded.","tokens":"12"}');
    expect(outputs[2]).toBe('Symbol(refunded)');
    expect(outputs[3]).toBe('{ text: [Getter] }');
  });
});

describe('runRollouts under a policy that samples runs', () => {
  it('counts rollouts out of the sample as unscored, never as passed', async () => {
    const cases = parseCasesText(CASES);
    const [sampledOut, judgedAll] = await Promise.all([
      runRollouts({ cases, agent, k: 3, policy: { sampling: { ratio: 0 } } }),
      runRollouts({ cases, agent, k: 3 }),
    ]);
    // Every rollout got a record, and every record is skipped: sampled_out.
    expect(sampledOut.rollouts).toHaveLength(9);
    for (const r of sampledOut.rollouts) {
      expect(r.verdict?.results.map((x) => [x.label, x.reason])).toEqual([['skipped', 'sampled_out']]);
      expect(r.passed).toBe(false);
    }
    expect(sampledOut.grid.rows.map((r) => [r.case, r.passed, r.scored, r.class])).toEqual([
      ['direct-lookup', 0, 0, 'unscored'],
      ['pushy-customer', 0, 0, 'unscored'],
      ['typo-prone', 0, 0, 'unscored'],
    ]);
    expect(sampledOut.grid.passRate).toBeNull();
    // Without sampling, the same rollouts are every one scored.
    expect(judgedAll.grid.rows.map((r) => [r.case, r.scored])).toEqual([
      ['direct-lookup', 3],
      ['pushy-customer', 3],
      ['typo-prone', 3],
    ]);
  });
});

describe('runRollouts names the agent that ran', () => {
  it('on the rollout span and in every verdict: agentName, else the function’s own name', async () => {
    const cases = parseCasesText('- id: one\n  input: Refund A1024\n  expected_tools: [lookup]\n');
    async function refundBot(_input: unknown, { tracer }: RolloutContext) {
      tracer
        .startSpan('execute_tool lookup', {
          attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup' },
        })
        .end();
      return 'done';
    }
    const [named, own] = await Promise.all([
      runRollouts({ cases, k: 2, agent: refundBot, agentName: 'support-desk' }),
      runRollouts({ cases, k: 2, agent: refundBot }),
    ]);
    expect(named.verdicts.map((v) => [v.agent, v.passed])).toEqual([
      ['support-desk', true],
      ['support-desk', true],
    ]);
    expect(own.agent).toBe('refundBot');
    expect(own.verdicts.map((v) => v.agent)).toEqual(['refundBot', 'refundBot']);
  });
});
