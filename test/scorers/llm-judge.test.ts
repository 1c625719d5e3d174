import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { llmJudge, llmJudgeConfigSchema } from '../../src/scorers/llm-judge.js';
import type { AgentRun, JudgeRequest, ToolExecution } from '../../src/types.js';

function makeRun(
  calls: Array<{ name: string; args?: unknown; result?: unknown }>,
  extra: Partial<AgentRun> = {},
) {
  const run: AgentRun = {
    agent: 'refund-agent',
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    implicit: false,
    children: [],
    executions: [],
    requests: [],
    calls: [],
    history: [],
    input: [{ role: 'user', parts: [{ type: 'text', content: 'Can order A1024 be refunded?' }] }],
    output: [{ role: 'assistant', parts: [{ type: 'text', content: 'Yes, it qualifies.' }] }],
    start: 0,
    status: 0,
    attributes: {},
    hasErrorSpan: false,
    ...extra,
  };
  run.calls = calls.map(
    (c, i): ToolExecution => ({
      name: c.name,
      args: c.args,
      result: c.result,
      argsSource: 'span',
      status: 'ok',
      fromHistory: false,
      requestOnly: false,
      spanId: `s${i}`,
      start: i,
      end: i + 0.5,
      run,
      convention: 'gen_ai',
    }),
  );
  run.executions = run.calls;
  return run;
}

function scripted(replies: Array<string | Error>) {
  const requests: JudgeRequest[] = [];
  const judge = async (request: JudgeRequest) => {
    requests.push(request);
    const next = replies[requests.length - 1];
    if (next === undefined) throw new Error('judge called too often');
    if (next instanceof Error) throw next;
    return next;
  };
  return { judge, requests };
}

const goodAppropriateness = JSON.stringify({
  evaluations: [
    { toolCalled: 'get_order_detail', wasAppropriate: true, reasoning: 'needed' },
    { toolCalled: 'check_refund_policy', wasAppropriate: true, reasoning: 'needed' },
  ],
  missingTools: [],
});

const twoCalls = [
  {
    name: 'get_order_detail',
    args: { order_id: 'A1024', secret_note: 'TOP-SECRET-777' },
    result: { total: 99.5 },
  },
  { name: 'check_refund_policy', args: { order_id: 'A1024' }, result: { eligible: true } },
];

describe('llmJudge tool_appropriateness', () => {
  it('scores appropriate calls over actual calls and keeps the raw reply', async () => {
    const { judge, requests } = scripted([goodAppropriateness]);
    const scorer = llmJudge({ prompt: 'tool_appropriateness', judge });
    expect(scorer.async).toBe(true);
    expect(scorer.sampling).toEqual({ ratio: 0 });
    const r = await scorer.score(makeRun(twoCalls));
    expect(r).toMatchObject({
      scorer: 'llm_judge',
      kind: 'llm_judge',
      passed: true,
      score: 1,
      label: 'pass',
    });
    expect(r.detail.raw).toBe(goodAppropriateness);
    expect(r.detail.attempts).toBe(1);
    expect(requests).toHaveLength(1);
    expect(requests[0]!.temperature).toBe(0);
    expect(requests[0]!.prompt).toContain(
      'TOOLS THE AGENT ACTUALLY CALLED: get_order_detail, check_refund_policy',
    );
    expect(requests[0]!.prompt).toContain('USER REQUEST: "Can order A1024 be refunded?"');
    expect(requests[0]!.prompt).toContain('A1024');
  });

  it('divides by the actual calls, not by the evaluations returned (unlike Mastra)', async () => {
    const reply = JSON.stringify({
      evaluations: [
        { toolCalled: 'get_order_detail', wasAppropriate: true, reasoning: 'ok' },
        { toolCalled: 'unrelated', wasAppropriate: true, reasoning: 'ok' },
        { toolCalled: 'unrelated2', wasAppropriate: true, reasoning: 'ok' },
      ],
    });
    const { judge } = scripted([reply]);
    const r = await llmJudge({ prompt: 'tool_appropriateness', judge }).score(makeRun(twoCalls));
    // Mastra would give 3/3; only one of the two real calls was judged appropriate.
    expect(r.score).toBe(0.5);
    expect(r.passed).toBe(false);
    expect(r.reason).toContain('call 2 (check_refund_policy) was not evaluated');
  });

  it('fails on non-empty missingTools even when every call was appropriate', async () => {
    const reply = JSON.stringify({
      evaluations: [
        { toolCalled: 'get_order_detail', wasAppropriate: true, reasoning: 'ok' },
        { toolCalled: 'check_refund_policy', wasAppropriate: true, reasoning: 'ok' },
      ],
      missingTools: ['get_customer'],
    });
    const r = await llmJudge({ prompt: 'tool_appropriateness', judge: scripted([reply]).judge }).score(
      makeRun(twoCalls),
    );
    expect(r.score).toBe(1);
    expect(r.passed).toBe(false);
    expect(r.label).toBe('fail');
    expect(r.reason).toBe('missing tools: get_customer');
  });

  it('with no calls scores 1 unless tools were missing', async () => {
    const ok = await llmJudge({
      prompt: 'tool_appropriateness',
      judge: scripted(['{"evaluations":[],"missingTools":[]}']).judge,
    }).score(makeRun([]));
    expect([ok.score, ok.passed]).toEqual([1, true]);
    const missing = await llmJudge({
      prompt: 'tool_appropriateness',
      judge: scripted(['{"evaluations":[],"missingTools":["get_order_detail"]}']).judge,
    }).score(makeRun([]));
    expect([missing.score, missing.passed]).toEqual([0, false]);
  });

  it('offers the run tool definitions, or the configured tools when the run has none', async () => {
    const a = scripted([goodAppropriateness]);
    await llmJudge({ prompt: 'tool_appropriateness', judge: a.judge, tools: ['config_tool'] }).score(
      makeRun(twoCalls, { toolDefinitions: [{ name: 'get_order_detail', description: 'Reads an order' }] }),
    );
    expect(a.requests[0]!.prompt).toContain('get_order_detail: Reads an order');
    expect(a.requests[0]!.prompt).not.toContain('config_tool');
    const b = scripted([goodAppropriateness]);
    await llmJudge({ prompt: 'tool_appropriateness', judge: b.judge, tools: ['config_tool'] }).score(
      makeRun(twoCalls),
    );
    expect(b.requests[0]!.prompt).toContain('config_tool');
  });
});

describe('llmJudge reply handling', () => {
  it('strips code fences', async () => {
    const r = await llmJudge({
      prompt: 'tool_appropriateness',
      judge: scripted(['Here you go:\n```json\n' + goodAppropriateness + '\n```']).judge,
    }).score(makeRun(twoCalls));
    expect(r.label).toBe('pass');
  });

  it('retries once after garbage and then uses the good reply', async () => {
    const { judge, requests } = scripted(['I think it is fine!', goodAppropriateness]);
    const r = await llmJudge({ prompt: 'tool_appropriateness', judge }).score(makeRun(twoCalls));
    expect(r.label).toBe('pass');
    expect(r.detail.attempts).toBe(2);
    expect(r.detail.raw).toBe(goodAppropriateness);
    expect(requests).toHaveLength(2);
    expect(requests[1]!.prompt).toContain(
      'Your previous reply could not be used (no JSON object in the reply)',
    );
  });

  it('retries on a schema violation too', async () => {
    const { judge, requests } = scripted(['{"evaluations":"yes"}', goodAppropriateness]);
    const r = await llmJudge({ prompt: 'tool_appropriateness', judge }).score(makeRun(twoCalls));
    expect(r.label).toBe('pass');
    expect(requests[1]!.prompt).toContain('evaluations');
  });

  it('labels error after garbage twice, keeping the last raw reply', async () => {
    const { judge, requests } = scripted(['nope', '{"evaluations": [ broken }']);
    const r = await llmJudge({ prompt: 'tool_appropriateness', judge }).score(makeRun(twoCalls));
    expect(r).toMatchObject({ label: 'error', passed: false, score: 0 });
    expect(r.reason).toMatch(/^judge reply unreadable twice: invalid JSON/);
    expect(r.detail.raw).toBe('{"evaluations": [ broken }');
    expect(requests).toHaveLength(2);
  });

  it('labels error when the judge rejects, without retrying', async () => {
    const { judge, requests } = scripted([new Error('rate limited')]);
    const r = await llmJudge({ prompt: 'tool_appropriateness', judge }).score(makeRun(twoCalls));
    expect(r.label).toBe('error');
    expect(r.reason).toBe('judge failed: rate limited');
    expect(requests).toHaveLength(1);
  });

  it('labels error when the judge throws synchronously', async () => {
    const judge = () => {
      throw new Error('boom');
    };
    const r = await llmJudge({ prompt: 'tool_appropriateness', judge }).score(makeRun(twoCalls));
    expect(r.reason).toBe('judge failed: boom');
  });

  it('labels error on timeout and aborts the judge signal', async () => {
    let seen: AbortSignal | undefined;
    const judge = (request: JudgeRequest) => {
      seen = request.signal;
      return new Promise<string>(() => {});
    };
    const r = await llmJudge({ prompt: 'tool_appropriateness', judge, timeoutMs: 20 }).score(
      makeRun(twoCalls),
    );
    expect(r.label).toBe('error');
    expect(r.reason).toBe('judge failed: timed out after 20 ms');
    expect(seen?.aborted).toBe(true);
  });

  it('labels error rather than throwing on a malformed run', async () => {
    const run = makeRun(twoCalls);
    (run as { calls: unknown }).calls = null;
    const r = await llmJudge({
      prompt: 'tool_appropriateness',
      judge: scripted([goodAppropriateness]).judge,
    }).score(run);
    expect(r.label).toBe('error');
    expect(r.reason).toMatch(/^llm_judge failed: /);
  });

  it('labels error when no judge is configured under that name', async () => {
    const r = await llmJudge({ prompt: 'tool_appropriateness', judge: 'strict' }).score(makeRun(twoCalls), {
      judges: { default: async () => goodAppropriateness },
    });
    expect(r.label).toBe('error');
    expect(r.reason).toBe('no judge named "strict"');
  });

  it('resolves named judges from the context, `default` when none is named', async () => {
    const { judge, requests } = scripted([goodAppropriateness]);
    const r = await llmJudge({ prompt: 'tool_appropriateness' }).score(makeRun(twoCalls), {
      judges: { default: judge },
    });
    expect(r.label).toBe('pass');
    expect(requests).toHaveLength(1);
  });
});

describe('llmJudge reply types', () => {
  it('accepts an already-parsed object from a judge function, refuses other non-strings', async () => {
    const obj = await llmJudge({
      prompt: 'trajectory_grounding',
      judge: (() => ({ arg_semantic_pass: true, grounding_pass: true })) as never,
    }).score(makeRun(twoCalls));
    expect(obj.label).toBe('pass');
    expect(obj.detail.raw).toBe('{"arg_semantic_pass":true,"grounding_pass":true}');
    const num = await llmJudge({ prompt: 'trajectory_grounding', judge: (() => 42) as never }).score(
      makeRun(twoCalls),
    );
    expect(num.reason).toBe('judge failed: judge returned number, not a string');
  });
});

describe('llmJudge message shapes', () => {
  const shapes: Array<[string, unknown, unknown]> = [
    ['plain strings', 'Refund A1024?', 'Done.'],
    ['AI SDK prompt objects', { prompt: 'Refund A1024?' }, 'Done.'],
    [
      'AI SDK messages',
      { system: 'sys', messages: [{ role: 'user', content: [{ type: 'text', text: 'Refund A1024?' }] }] },
      [{ role: 'assistant', content: 'Done.' }],
    ],
    [
      'OpenAI responses parts',
      [{ role: 'user', content: [{ type: 'input_text', text: 'Refund A1024?' }] }],
      [{ role: 'assistant', content: [{ type: 'output_text', text: 'Done.' }] }],
    ],
    [
      'GenAI JSON text',
      JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'Refund A1024?' }] }]),
      JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: 'Done.' }] }]),
    ],
  ];
  it.each(shapes)('reads the user request and the answer from %s', async (_name, input, output) => {
    const { judge, requests } = scripted(['{"arg_semantic_pass":true,"grounding_pass":true}']);
    await llmJudge({ prompt: 'trajectory_grounding', judge }).score(makeRun(twoCalls, { input, output }));
    expect(requests[0]!.prompt).toContain('USER REQUEST: "Refund A1024?"');
    expect(requests[0]!.prompt).toContain('FINAL ANSWER: "Done."');
  });
});

describe('llmJudge redaction', () => {
  it('sends argument and result keys, never values', async () => {
    const { judge, requests } = scripted([goodAppropriateness]);
    await llmJudge({ prompt: 'tool_appropriateness', judge }).score(makeRun(twoCalls), {
      redact: { values: true },
    });
    const sent = requests[0]!.system + requests[0]!.prompt;
    expect(sent).not.toContain('TOP-SECRET-777');
    expect(sent).not.toContain('A1024"');
    expect(sent).not.toContain('99.5');
    expect(requests[0]!.prompt).toContain(
      '1. get_order_detail arguments with keys [order_id, secret_note] -> ok; result with keys [total]',
    );
    expect(requests[0]!.prompt).toContain(
      '2. check_refund_policy arguments with keys [order_id] -> ok; result with keys [eligible]',
    );
  });

  it('passes every text sent, retries included, through the redact.prompt hook', async () => {
    const { judge, requests } = scripted(['not json', goodAppropriateness]);
    const mask = (text: string) =>
      text.replaceAll('TOP-SECRET-777', '[masked]').replaceAll('evaluator', 'EVAL');
    const r = await llmJudge({ prompt: 'tool_appropriateness', judge }).score(makeRun(twoCalls), {
      redact: { values: false, prompt: mask },
    });
    expect(r.label).toBe('pass');
    expect(requests).toHaveLength(2);
    for (const sent of requests) {
      expect(sent.prompt).not.toContain('TOP-SECRET-777');
      expect(sent.prompt).toContain('[masked]');
      expect(sent.system).not.toContain('evaluator');
    }
  });

  it('does not call the judge when the redact.prompt hook throws', async () => {
    const { judge, requests } = scripted([goodAppropriateness]);
    const r = await llmJudge({ prompt: 'tool_appropriateness', judge }).score(makeRun(twoCalls), {
      redact: {
        values: true,
        prompt: () => {
          throw new Error('scrubber down');
        },
      },
    });
    expect(requests).toHaveLength(0);
    expect(r.label).toBe('error');
    expect(r.reason).toContain('scrubber down');
  });

  it('sends values when redaction is off', async () => {
    const { judge, requests } = scripted([goodAppropriateness]);
    await llmJudge({ prompt: 'tool_appropriateness', judge }).score(makeRun(twoCalls));
    expect(requests[0]!.prompt).toContain('TOP-SECRET-777');
  });
});

describe('llmJudge trajectory_grounding', () => {
  it('passes when both checks pass and lists the facts in the prompt', async () => {
    const reply = '{"arg_semantic_pass":true,"grounding_pass":true,"missing_facts":[],"reason":"grounded"}';
    const { judge, requests } = scripted([reply]);
    const r = await llmJudge({
      prompt: 'trajectory_grounding',
      judge,
      answerFacts: ['says whether the order qualifies'],
    }).score(makeRun(twoCalls));
    expect(r).toMatchObject({ passed: true, score: 1, label: 'pass', reason: 'grounded' });
    expect(r.detail).toMatchObject({ arg_semantic_pass: true, grounding_pass: true, missing_facts: [] });
    expect(requests[0]!.prompt).toContain('- says whether the order qualifies');
    expect(requests[0]!.prompt).toContain('FINAL ANSWER: "Yes, it qualifies."');
  });

  it('fails with half a score when grounding fails', async () => {
    const reply = '{"arg_semantic_pass":true,"grounding_pass":false,"missing_facts":["x"],"reason":"r"}';
    const r = await llmJudge({ prompt: 'trajectory_grounding', judge: scripted([reply]).judge }).score(
      makeRun(twoCalls),
    );
    expect([r.passed, r.score, r.label]).toEqual([false, 0.5, 'fail']);
    expect(r.detail.missing_facts).toEqual(['x']);
  });
});

describe('llmJudge custom prompt', () => {
  it('fills placeholders and reads {passed, score, reason}', async () => {
    const { judge, requests } = scripted(['{"passed":false,"score":0.25,"reason":"meh"}']);
    const r = await llmJudge({
      name: 'tone',
      prompt: { system: 'Be fair.', template: 'Agent {{agent}} answered: {{agent_response}} / {{unknown}}' },
      judge,
    }).score(makeRun(twoCalls));
    expect(r).toMatchObject({ scorer: 'tone', passed: false, score: 0.25, label: 'fail', reason: 'meh' });
    expect(requests[0]!.system).toBe('Be fair.');
    expect(
      requests[0]!.prompt.startsWith('Agent refund-agent answered: Yes, it qualifies. / {{unknown}}'),
    ).toBe(true);
  });
});

describe('llmJudge with an AI SDK language model', () => {
  const result = (text: string) => ({
    content: [{ type: 'text' as const, text }],
    finishReason: { unified: 'stop' as const, raw: 'stop' },
    usage: {
      inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 1, text: 1, reasoning: 0 },
    },
    warnings: [],
  });

  it('calls doGenerate at temperature 0 with the system and user prompt', async () => {
    const model = new MockLanguageModelV3({ doGenerate: result(goodAppropriateness) as never });
    const r = await llmJudge({ prompt: 'tool_appropriateness', judge: model }).score(makeRun(twoCalls), {
      redact: { values: true },
    });
    expect(r.label).toBe('pass');
    expect(model.doGenerateCalls).toHaveLength(1);
    const call = model.doGenerateCalls[0]!;
    expect(call.temperature).toBe(0);
    expect(call.prompt[0]).toMatchObject({ role: 'system' });
    const user = call.prompt[1] as { role: string; content: Array<{ type: string; text: string }> };
    expect(user.role).toBe('user');
    expect(user.content[0]!.text).toContain('arguments with keys [order_id, secret_note]');
    expect(user.content[0]!.text).not.toContain('TOP-SECRET-777');
  });

  it('retries once on garbage from the model, then errors on garbage twice', async () => {
    const recovering = new MockLanguageModelV3({
      doGenerate: [result('???'), result(goodAppropriateness)] as never,
    });
    const ok = await llmJudge({ prompt: 'tool_appropriateness', judge: recovering }).score(makeRun(twoCalls));
    expect(ok.label).toBe('pass');
    expect(recovering.doGenerateCalls).toHaveLength(2);

    const broken = new MockLanguageModelV3({ doGenerate: [result('???'), result('still no')] as never });
    const bad = await llmJudge({ prompt: 'tool_appropriateness', judge: broken }).score(makeRun(twoCalls));
    expect(bad.label).toBe('error');
    expect(bad.detail.raw).toBe('still no');
  });

  it('errors when the model rejects', async () => {
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        throw new Error('503');
      },
    });
    const r = await llmJudge({ prompt: 'tool_appropriateness', judge: model }).score(makeRun(twoCalls));
    expect(r.reason).toBe('judge failed: 503');
  });

  it('times out a model that never answers and aborts its request', async () => {
    const model = new MockLanguageModelV3({ doGenerate: () => new Promise(() => {}) });
    const r = await llmJudge({ prompt: 'tool_appropriateness', judge: model, timeoutMs: 20 }).score(
      makeRun(twoCalls),
    );
    expect(r).toMatchObject({ label: 'error', reason: 'judge failed: timed out after 20 ms' });
    expect(model.doGenerateCalls[0]!.abortSignal?.aborted).toBe(true);
  });

  it('is found by name among the context judges', async () => {
    const model = new MockLanguageModelV3({ doGenerate: result(goodAppropriateness) as never });
    const r = await llmJudge({ prompt: 'tool_appropriateness', judge: 'gpt' }).score(makeRun(twoCalls), {
      judges: { gpt: model },
    });
    expect(r.label).toBe('pass');
  });
});

describe('llmJudgeConfigSchema', () => {
  it('accepts the policy form and rejects unknown keys', () => {
    expect(
      llmJudgeConfigSchema.safeParse({
        kind: 'llm_judge',
        prompt: 'trajectory_grounding',
        answer_facts: ['a'],
        sampling: { ratio: 0.05 },
      }).success,
    ).toBe(true);
    const bad = llmJudgeConfigSchema.safeParse({ kind: 'llm_judge', prompt: 'nope', extra: 1 });
    expect(bad.success).toBe(false);
    const paths = bad.error!.issues.map((i) => i.path.join('.'));
    expect(paths).toContain('prompt');
    expect(bad.error!.issues.some((i) => i.code === 'unrecognized_keys')).toBe(true);
  });

  it('gives different digests to different configs and equal ones to equal configs', () => {
    const a = llmJudge({ prompt: 'trajectory_grounding', answerFacts: ['x'] });
    const b = llmJudge({ prompt: 'trajectory_grounding', answerFacts: ['x'] });
    const c = llmJudge({ prompt: 'trajectory_grounding', answerFacts: ['y'] });
    expect(a.digest).toBe(b.digest);
    expect(a.digest).not.toBe(c.digest);
    expect(a.digest).toMatch(/^[0-9a-f]{64}$/);
  });
});
