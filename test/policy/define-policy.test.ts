import { describe, expect, it } from 'vitest';
import { definePolicy, isPolicy } from '../../src/policy/define-policy.js';
import { loadPolicy } from '../../src/policy/load-policy.js';
import { PolicyError } from '../../src/policy/policy-error.js';
import { llmJudge } from '../../src/scorers/llm-judge.js';
import { reliability } from '../../src/scorers/reliability.js';
import { toolCalls } from '../../src/scorers/tool-calls.js';
import { toolOrder } from '../../src/scorers/tool-order.js';

describe('definePolicy', () => {
  it('keeps a redact.prompt hook on the policy without changing its digest', () => {
    const rules = [{ name: 'r', scorers: [toolOrder({ expectedTool: 'a' })] }];
    const mask = (text: string) => text.replaceAll('@', ' at ');
    const hooked = definePolicy({ redact: { values: false, prompt: mask }, rules });
    const plain = definePolicy({ redact: { values: false }, rules });
    expect(hooked.redact.prompt).toBe(mask);
    expect(hooked.redact.values).toBe(false);
    expect(hooked.digest).toBe(plain.digest);
    expect(definePolicy({ rules }).redact).toEqual({ values: true });
  });

  it('builds the same policy (and digest) as the equivalent file', async () => {
    const coded = definePolicy({
      judge: { escalateOn: ['failure'] },
      rules: [
        {
          name: 'refunds',
          match: { agent: 'refund-*' },
          scorers: [
            reliability({ expectedToolCalls: ['get_order_detail'] }),
            toolOrder({ expectedTool: 'get_order_detail' }),
            llmJudge({ prompt: 'trajectory_grounding', answerFacts: ['says whether it qualifies'] }),
          ],
        },
      ],
    });
    const file = await loadPolicy(`version: 1
judge: { escalate_on: [failure] }
rules:
  - name: refunds
    match: { agent: "refund-*" }
    scorers:
      - kind: reliability
        expected_tool_calls: [get_order_detail]
      - kind: tool_order
        expected_tool: get_order_detail
      - kind: llm_judge
        prompt: trajectory_grounding
        answer_facts: ["says whether it qualifies"]
`);
    expect(isPolicy(coded)).toBe(true);
    expect(coded.rules[0]!.match).toEqual({ agent: 'refund-*', rootOnly: true });
    expect(coded.rules[0]!.scorers.map((s) => s.digest)).toEqual(file.rules[0]!.scorers.map((s) => s.digest));
    expect(coded.digest).toBe(file.digest);
  });

  it('reports problems by path like a policy file', () => {
    const err = (() => {
      try {
        definePolicy({
          sampling: { ratio: -1 },
          rules: [
            { name: 'a', scorers: [toolOrder({ expectedTool: 'x' }), toolOrder({ expectedTool: 'y' })] },
            { name: 'a', scorers: [{ name: 'not a scorer' } as never] },
          ],
        });
      } catch (e) {
        return e as PolicyError;
      }
    })();
    expect(err).toBeInstanceOf(PolicyError);
    // In path order, as a file's.
    expect(err!.problems.map((p) => p.path)).toEqual([
      'rules[0].scorers[1].name',
      'rules[1].name',
      'rules[1].scorers[0]',
      'sampling.ratio',
    ]);
  });

  it('accepts scorer entries in the policy-file form, checked like the file', () => {
    const policy = definePolicy({
      rules: [
        {
          name: 'r',
          scorers: [
            toolOrder({ expectedTool: 'a' }),
            { kind: 'reliability', name: 'rel', expected_tool_calls: ['a'] },
          ],
        },
      ],
    });
    expect(policy.rules[0]!.scorers.map((s) => [s.name, s.kind])).toEqual([
      ['tool_order', 'tool_order'],
      ['rel', 'reliability'],
    ]);
    expect(() =>
      definePolicy({ rules: [{ name: 'r', scorers: [{ kind: 'tool_order', expected_tool_order: 'a' }] }] }),
    ).toThrow('rules[0].scorers[0].expected_tool_order: expected array of strings');
  });

  it("lets the factories' construction errors through with agno's message", () => {
    expect(() => toolCalls({ expectedTools: [] })).toThrow(
      'ToolCallScorer needs expected_tools and/or arguments; with neither there is no check',
    );
    expect(() => toolOrder({})).toThrow('Either expectedTool or expectedToolOrder must be provided');
  });
});
