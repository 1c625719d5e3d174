import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { evaluateTraces } from '../../src/evaluation/evaluate-traces.js';
import { loadPolicy } from '../../src/policy/load-policy.js';
import { TraceBuilder } from '../helpers/trace-builder.js';
import { traceIdAt } from './helpers.js';

const EXAMPLE = new URL('../../examples/policies/refunds.yaml', import.meta.url).pathname;

function refundTrace(fraction: number, options: { submit?: boolean; env?: string } = {}) {
  const t = new TraceBuilder({
    traceId: traceIdAt(fraction),
    resource: { 'service.name': 'shop', 'deployment.environment': options.env ?? 'prod' },
  });
  const agent = t.agent('refund-agent', {
    'gen_ai.input.messages': JSON.stringify([
      { role: 'user', parts: [{ type: 'text', content: 'Can I get a refund for A1024?' }] },
    ]),
    'gen_ai.output.messages': JSON.stringify([
      { role: 'assistant', parts: [{ type: 'text', content: 'Order A1024 qualifies for a refund.' }] },
    ]),
  });
  const args = { order_id: 'A1024', include_history: true };
  agent.llm({ toolCalls: [{ name: 'get_order_detail', id: 'c1', args }] });
  agent.tool('get_order_detail', { id: 'c1', args, result: { total: 99.5, card: '4111-XXXX' } });
  agent.llm({ toolCalls: [{ name: 'check_refund_policy', id: 'c2', args: { order_id: 'A1024' } }] });
  agent.tool('check_refund_policy', { id: 'c2', args: { order_id: 'A1024' }, result: { eligible: true } });
  if (options.submit) agent.tool('submit_refund', { id: 'c3', args: { order_id: 'A1024', amount: 99.5 } });
  return t.toOtlp();
}

const generated = (text: string) => ({
  content: [{ type: 'text' as const, text }],
  finishReason: { unified: 'stop' as const, raw: 'stop' },
  usage: {
    inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 1, text: 1, reasoning: 0 },
  },
  warnings: [],
});

describe('the refunds example policy, end to end', () => {
  it('passes a good run, fails a run that submits a refund and escalates it to the judge', async () => {
    const policy = await loadPolicy(EXAMPLE);
    const model = new MockLanguageModelV3({
      doGenerate: generated(
        '```json\n{"arg_semantic_pass":true,"grounding_pass":false,"missing_facts":["does not claim a refund was submitted"],"reason":"claims more than the tools show"}\n```',
      ) as never,
    });
    const verdicts = await evaluateTraces(
      [refundTrace(0.5, { submit: true }), refundTrace(0.3), refundTrace(0.4, { env: 'staging' })],
      policy,
      { judges: { default: model } },
    );
    // The staging run matches no rule.
    expect(verdicts.map((v) => [v.trace_id, v.passed])).toEqual([
      [traceIdAt(0.3), true],
      [traceIdAt(0.5), false],
    ]);
    const [good, bad] = verdicts;
    expect(good!.results.map((r) => `${r.scorer}:${r.label}`)).toEqual([
      'reliability:pass',
      'grounded:pass',
      'tool_order:pass',
      'trajectory:pass',
      'llm_judge:skipped',
    ]);
    expect(bad!.results.map((r) => `${r.scorer}:${r.label}`)).toEqual([
      'reliability:fail',
      'grounded:pass',
      'tool_order:pass',
      'trajectory:fail',
      'llm_judge:fail',
    ]);
    expect(bad!.results[3]!.detail.errors).toEqual([
      expect.objectContaining({ code: 'forbidden_tool', tool: 'submit_refund' }),
    ]);
    expect(bad!.results[4]!.detail).toMatchObject({ grounding_pass: false, escalated: 'failure' });

    // Only the escalated run was judged, and with `redact: { values: true }` no value left.
    expect(model.doGenerateCalls).toHaveLength(1);
    const sent = JSON.stringify(model.doGenerateCalls[0]!.prompt);
    expect(sent).toContain('get_order_detail arguments with keys [order_id, include_history]');
    expect(sent).toContain('result with keys [total, card]');
    expect(sent).not.toContain('4111');
    expect(sent).not.toContain('99.5');
    expect(sent).toContain('- does not claim a refund was submitted');
  });
});
