import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { casesPolicy } from '../../src/cases/cases-policy.js';
import { CasesError, loadCases, parseCasesText } from '../../src/cases/load-cases.js';
import { evaluateTraces } from '../../src/evaluation/evaluate-traces.js';
import { parsePolicyText } from '../../src/policy/load-policy.js';
import { TraceBuilder } from '../helpers/trace-builder.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsx = join(root, 'node_modules/.bin/tsx');

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(tsx, [join(root, 'src/cli/main.ts'), ...args], { cwd: dir }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

// The refund case, in the case file's fields.
const CASES = `
cases:
  - id: refund-eligible
    input: "I want a refund for order A1024"
    context: { customer: C-7 }
    expected_tools: [get_order_detail, check_refund_policy]
    forbidden_tools: [submit_refund]
    max_calls: 3
    arg_constraints:
      get_order_detail: { order_id: { equals: A1024 } }
    expected_order: [[get_order_detail, check_refund_policy]]
    answer_facts: ["says whether the order qualifies"]
    risk: high
    intent: refund_check
    pass_threshold: 0.9
    tags: [refunds, smoke]
  - id: order-status
    input: "Where is my order B7?"
    expected_tools: [get_order_detail]
    arg_constraints:
      get_order_detail: { order_id: { equals: B7 } }
    risk: low
    intent: order_status
`;

const SAME_AS_POLICY = `
version: 1
rules:
  - name: refund-eligible
    scorers:
      - kind: trajectory
        expected_tools: [get_order_detail, check_refund_policy]
        forbidden_tools: [submit_refund]
        max_calls: 3
        arg_constraints:
          get_order_detail: { order_id: { equals: A1024 } }
        expected_order: [[get_order_detail, check_refund_policy]]
        risk: high
        intent: refund_check
        pass_threshold: 0.9
`;

let dir: string;

function run(
  traceNo: number,
  tools: Array<[string, string]>,
  where: 'agent' | 'parent' | 'none',
  caseId?: string,
  input?: string,
) {
  const t = new TraceBuilder({ traceId: traceNo.toString(16).padStart(32, '0') });
  const caseAttr = caseId ? { 'toolwatch.case.id': caseId } : {};
  const inputAttr = input
    ? { 'gen_ai.input.messages': JSON.stringify([{ role: 'user', content: input }]) }
    : {};
  const agent =
    where === 'parent'
      ? t.span('eval harness', caseAttr).agent('support-agent', inputAttr)
      : t.agent('support-agent', { ...(where === 'agent' ? caseAttr : {}), ...inputAttr });
  for (const [name, orderId] of tools) agent.tool(name, { args: { order_id: orderId } });
  return t.toOtlp();
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwatch-cases-'));
  await writeFile(join(dir, 'cases.yaml'), CASES);
  await writeFile(
    join(dir, 'cases.jsonl'),
    `${JSON.stringify({ id: 'a', input: 'hi', expected_tools: ['x'] })}\n\n${JSON.stringify({ id: 'b', input: 'yo', forbidden_tools: ['y'] })}\n`,
  );
  await writeFile(
    join(dir, 'bad.yaml'),
    `- id: one
  input: hello
  expected_tools: get_order_detail
  forbiden_tools: [submit_refund]
- input: no id
  expected_tools: [a]
  arg_constraints: { a: { q: { matches: "(a+)+$" } } }
- id: one
  input: dup
  expected_tools: [a]
  forbidden_tools: [a]
  answer_facts: []
`,
  );
  const good = (n: number, id: string | undefined, where: 'agent' | 'parent' | 'none', input?: string) =>
    JSON.stringify(
      run(
        n,
        [
          ['get_order_detail', 'A1024'],
          ['check_refund_policy', 'A1024'],
        ],
        where,
        id,
        input,
      ),
    );
  await writeFile(
    join(dir, 'runs.jsonl'),
    [
      good(1, 'refund-eligible', 'agent'),
      good(2, 'refund-eligible', 'parent'),
      JSON.stringify(run(3, [['get_order_detail', 'B7']], 'parent', 'order-status')),
      JSON.stringify(
        run(
          4,
          [
            ['get_order_detail', 'A1024'],
            ['submit_refund', 'A1024'],
          ],
          'agent',
          'refund-eligible',
        ),
      ),
      good(5, undefined, 'none', '  I want a REFUND for order A1024 '),
      good(6, undefined, 'none', 'something else entirely'),
    ].join('\n'),
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('eval-dataset cases', () => {
  it('loads YAML (cases: list) and JSON Lines', async () => {
    const yaml = await loadCases(join(dir, 'cases.yaml'));
    expect(yaml.map((c) => c.id)).toEqual(['refund-eligible', 'order-status']);
    expect(yaml[0]!.tags).toEqual(['refunds', 'smoke']);
    const jsonl = await loadCases(join(dir, 'cases.jsonl'));
    expect(jsonl.map((c) => c.id)).toEqual(['a', 'b']);
  });

  it('lists every problem by path, with the trajectory checks of a policy', async () => {
    const err = await loadCases(join(dir, 'bad.yaml')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CasesError);
    const text = (err as CasesError).message;
    expect(text).toMatch(/^invalid toolwatch case file .*bad\.yaml \(\d+ problems\)/);
    const paths = (err as CasesError).problems.map((p) => `${p.path}: ${p.message}`);
    expect(paths).toEqual(
      expect.arrayContaining([
        'cases[0].expected_tools: expected array of strings',
        'cases[0].forbiden_tools: unknown key (did you mean "forbidden_tools"?)',
        'cases[1].id: required (a non-empty string)',
        expect.stringMatching(/^cases\[1\]\.arg_constraints\.a\.q\.matches: /),
        'cases[2].id: duplicate case id "one" (also cases[0])',
        'cases[2].expected_tools[0]: a is both expected and forbidden',
        'cases[2].answer_facts: leave it out instead of an empty list',
      ]),
    );
  });

  it('a case means what the same trajectory scorer in a policy file means (digest and verdicts)', async () => {
    const cases = parseCasesText(CASES);
    const fromCases = casesPolicy(cases);
    const fromFile = parsePolicyText(SAME_AS_POLICY);
    expect(fromCases.rules[0]!.scorers[0]!.digest).toBe(fromFile.rules[0]!.scorers[0]!.digest);
    expect(fromCases.rules[0]!.match).toEqual({
      attributes: { 'toolwatch.case.id': 'refund-eligible' },
      rootOnly: true,
    });
    const traces = [
      run(
        1,
        [
          ['get_order_detail', 'A1024'],
          ['check_refund_policy', 'A1024'],
        ],
        'agent',
        'refund-eligible',
      ),
      run(
        4,
        [
          ['get_order_detail', 'A1024'],
          ['submit_refund', 'A1024'],
        ],
        'agent',
        'refund-eligible',
      ),
    ];
    const a = await evaluateTraces(traces, fromCases);
    const b = await evaluateTraces(traces, fromFile);
    expect(a.map((v) => v.results)).toEqual(b.map((v) => v.results));
    // Judged, not a skipped record.
    expect(a.map((v) => [v.passed, v.results.map((r) => r.label)])).toEqual([
      [true, ['pass']],
      [false, ['fail']],
    ]);
  });

  it('adds an llm_judge (trajectory_grounding, every run) only for answer_facts and only when a judge is configured', () => {
    const cases = parseCasesText(CASES);
    expect(casesPolicy(cases).rules[0]!.scorers.map((s) => s.kind)).toEqual(['trajectory']);
    const judged = casesPolicy(cases, { judge: true });
    expect(judged.rules[0]!.scorers.map((s) => s.kind)).toEqual(['trajectory', 'llm_judge']);
    expect(judged.rules[0]!.scorers[1]!.config).toMatchObject({
      prompt: 'trajectory_grounding',
      answer_facts: ['says whether the order qualifies'],
    });
    expect(judged.rules[1]!.scorers.map((s) => s.kind)).toEqual(['trajectory']);
  });

  it('toolwatch cases check: exit 0 with a count, exit 2 with every problem', async () => {
    const [ok, bad, help] = await Promise.all([
      cli(['cases', 'check', 'cases.yaml']),
      cli(['cases', 'check', 'bad.yaml']),
      cli(['cases', '--help']),
    ]);
    expect(ok).toMatchObject({
      code: 0,
      stdout: 'cases.yaml: 2 cases ok (1 with answer_facts, judged when a judge is configured)\n',
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('cases[0].forbiden_tools: unknown key');
    expect(bad.stderr).toContain('cases[2].id: duplicate case id "one" (also cases[0])');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: toolwatch cases check FILE/);
  });

  it('score --cases ties runs by toolwatch.case.id on any span, or by input with --match-input', async () => {
    const [byAttr, byInput] = await Promise.all([
      cli(['score', 'runs.jsonl', '--cases', 'cases.yaml']),
      cli(['score', 'runs.jsonl', '--cases', 'cases.yaml', '--match-input']),
    ]);
    expect(byAttr.code).toBe(0);
    const verdicts = byAttr.stdout
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            trace_id: string;
            rule: string;
            passed: boolean;
            results: Array<{ label: string }>;
          },
      );
    // Each one judged by its case's trajectory scorer, not a skipped record.
    expect(
      verdicts.map((v) => [Number.parseInt(v.trace_id, 16), v.rule, v.passed, v.results.map((r) => r.label)]),
    ).toEqual([
      [1, 'refund-eligible', true, ['pass']],
      [2, 'refund-eligible', true, ['pass']],
      [3, 'order-status', true, ['pass']],
      [4, 'refund-eligible', false, ['fail']],
    ]);
    expect(byAttr.stderr).toContain(
      '4 runs scored, 4 verdicts, 3 passed, 1 files, 0 unreadable records, 2 traces tied to no case',
    );
    const matched = byInput.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { trace_id: string; rule: string });
    expect(matched.map((v) => [Number.parseInt(v.trace_id, 16), v.rule])).toContainEqual([
      5,
      'refund-eligible',
    ]);
    expect(byInput.stderr).toContain(
      '5 runs scored, 5 verdicts, 4 passed, 1 files, 0 unreadable records, 1 traces tied to no case',
    );
  });
});
