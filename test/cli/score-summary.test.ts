/**
 * `toolwatch score` is never silent and never misleads CI: it says how many agent runs it
 * found and which no rule matched (or, with none, which conventions it reads), exits non-zero
 * on an input with nothing readable, applies "every scored run passes" to `--gate` on a policy
 * without gates, and answers a usage error with one line and where the help is.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { TraceBuilder } from '../helpers/trace-builder.js';

const WEATHER = fileURLToPath(new URL('../fixtures/mastra-v1/tool_error.otlp.json', import.meta.url));

/** The README's policy file. */
const README_POLICY = `version: 1
rules:
  - name: refunds
    match: { agent: "refund-*" }
    scorers:
      - kind: trajectory
        expected_tools: [get_order_detail, check_refund_policy]
        forbidden_tools: [submit_refund]
`;

/** No gates: `--gate` then applies `pass_rate: { min: 1 }`. */
const NO_GATES = README_POLICY;

const gated = (min: number) => `${NO_GATES}gates:\n  pass_rate: { min: ${min} }\n`;

let dir: string;
const at = (name: string) => join(dir, name);

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
  });
  return { code, stdout, stderr };
}

function refundTrace(n: number, tools: string[]): string {
  const t = new TraceBuilder({ traceId: n.toString(16).padStart(32, '0') });
  const a = t.agent('refund-agent');
  for (const name of tools) a.tool(name, { args: { order_id: 'A1024' } });
  return JSON.stringify(t.toOtlp());
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwatch-summary-'));
  const http = new TraceBuilder({ traceId: 'ab'.repeat(16) });
  http.span('GET /health', { 'http.request.method': 'GET' }, 1).span('SELECT 1', { 'db.system': 'pg' });
  const mixed = [
    refundTrace(1, ['get_order_detail', 'check_refund_policy']),
    refundTrace(2, ['get_order_detail', 'check_refund_policy', 'submit_refund']),
  ];
  await Promise.all([
    writeFile(at('toolwatch.yaml'), README_POLICY),
    writeFile(at('no-gates.yaml'), NO_GATES),
    writeFile(at('half.yaml'), gated(0.5)),
    writeFile(at('most.yaml'), gated(0.6)),
    writeFile(at('http.jsonl'), `${JSON.stringify(http.toOtlp())}\n`),
    writeFile(at('empty.json'), ''),
    writeFile(at('garbage.json'), 'not a trace\n'),
    writeFile(at('mixed.jsonl'), `${mixed.join('\n')}\n`),
    writeFile(at('passing.jsonl'), `${mixed[0]}\n`),
  ]);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('toolwatch score says what it found', () => {
  it("names the agent no rule matched: the README's policy on a recorded weather_agent trace", async () => {
    const r = await cli(['score', WEATHER, '--policy', at('toolwatch.yaml')]);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('0 runs scored, 0 verdicts');
    expect(r.stderr).toContain(
      'toolwatch score: 1 agent runs found, 1 matched no rule: "weather_agent" ×1 (rule "refunds" matches agent "refund-*")',
    );
    // Readable input that no rule matched is no error without --gate; with it, nothing was scored.
    expect(r.code).toBe(0);
    const gate = await cli(['score', WEATHER, '--policy', at('toolwatch.yaml'), '--gate']);
    expect(gate.code).toBe(1);
    expect(gate.stderr).toContain('"weather_agent" ×1');
  });

  it('names unmatched agents with --jobs too (the workers’ counts merged)', async () => {
    const weather = JSON.stringify(
      JSON.parse(await import('node:fs').then((fs) => fs.readFileSync(WEATHER, 'utf8'))),
    );
    await writeFile(
      at('both.jsonl'),
      `${weather}\n${refundTrace(7, ['get_order_detail', 'check_refund_policy'])}\n`,
    );
    const r = await cli(['score', at('both.jsonl'), '--policy', at('toolwatch.yaml'), '--jobs', '2']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('2 agent runs found, 1 matched no rule: "weather_agent" ×1');
  }, 60_000);

  it('with --jobs, counts the spans and traces every thread read', async () => {
    const lines = Array.from({ length: 60 }, (_, i) => {
      const t = new TraceBuilder({ traceId: (i + 1).toString(16).padStart(32, '0') });
      t.span('GET /health', { 'http.request.method': 'GET' }, 1).span('SELECT 1', { 'db.system': 'pg' });
      return JSON.stringify(t.toOtlp());
    });
    await writeFile(at('http-many.jsonl'), `${lines.join('\n')}\n`);
    const [one, two] = await Promise.all([
      cli(['score', at('http-many.jsonl'), '--policy', at('toolwatch.yaml')]),
      cli(['score', at('http-many.jsonl'), '--policy', at('toolwatch.yaml'), '--jobs', '2']),
    ]);
    for (const r of [one, two]) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain('toolwatch score: no agent runs found in 120 spans of 60 traces:');
    }
  }, 120_000);

  it('says every agent run found matched a rule', async () => {
    const r = await cli(['score', at('mixed.jsonl'), '--policy', at('toolwatch.yaml')]);
    expect(r.stderr).toContain('toolwatch score: 2 agent runs found, every one matched a rule\n');
  });

  it('with spans but no agent run, says so and which conventions it reads', async () => {
    const r = await cli(['score', at('http.jsonl'), '--policy', at('toolwatch.yaml')]);
    expect(r.code).toBe(0);
    const line = r.stderr.split('\n').find((l) => l.includes('no agent runs found'));
    expect(line).toMatch(/^toolwatch score: no agent runs found in 2 spans of 1 traces: toolwatch reads/);
    for (const convention of [
      'GenAI semantic conventions',
      'Mastra',
      'Vercel AI SDK',
      'OpenInference',
      'Traceloop',
    ])
      expect(line).toContain(convention);
  });

  it('with --cases, claims no missing agent runs for traces tied to no case (they were not looked at)', async () => {
    await writeFile(
      at('cases.yaml'),
      '- id: refund\n  input: Refund A1024\n  expected_tools: [get_order_detail]\n',
    );
    const r = await cli(['score', at('mixed.jsonl'), '--cases', at('cases.yaml')]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('2 traces tied to no case');
    expect(r.stderr).not.toContain('agent runs found');
  });

  it('exits 1 when nothing readable was found, with or without --gate', async () => {
    for (const file of ['empty.json', 'garbage.json']) {
      const plain = await cli(['score', at(file), '--policy', at('toolwatch.yaml')]);
      expect(plain.code, file).toBe(1);
      expect(plain.stderr, file).toContain('toolwatch score: nothing readable was found');
      const gate = await cli(['score', at(file), '--policy', at('toolwatch.yaml'), '--gate']);
      expect(gate.code, file).toBe(1);
    }
  });
});

describe('toolwatch score --gate never misleads', () => {
  it('on a policy without gates, requires every scored run to pass, and says that is the rule', async () => {
    const failing = await cli(['score', at('mixed.jsonl'), '--policy', at('no-gates.yaml'), '--gate']);
    expect(failing.code).toBe(1);
    expect(failing.stderr).toContain(
      'toolwatch score: the policy has no gates: --gate applies pass_rate: { min: 1 } (every scored run must pass)',
    );
    expect(failing.stderr).toContain('gate pass_rate: 0.5 (min 1) FAILED');
    const passing = await cli(['score', at('passing.jsonl'), '--policy', at('no-gates.yaml'), '--gate']);
    expect(passing.code).toBe(0);
    expect(passing.stderr).toContain('gate pass_rate: 1 (min 1) held');
  });

  it('checks a pass_rate gate over every judged run', async () => {
    const [half, most] = await Promise.all([
      cli(['score', at('mixed.jsonl'), '--policy', at('half.yaml'), '--gate']),
      cli(['score', at('mixed.jsonl'), '--policy', at('most.yaml'), '--gate']),
    ]);
    expect(half.code).toBe(0);
    expect(half.stderr).toContain('gate pass_rate: 0.5 (min 0.5) held');
    expect(half.stderr).not.toContain('the policy has no gates');
    expect(most.code).toBe(1);
    expect(most.stderr).toContain('gate pass_rate: 0.5 (min 0.6) FAILED');
  });

  it('checks pass_rate per rule too, with --jobs alike', async () => {
    const policy = `${NO_GATES}  - name: shipping
    match: { agent: "ship-*" }
    scorers:
      - kind: trajectory
        expected_tools: [lookup_shipping]
gates:
  pass_rate: { min: 0.5, rules: { refunds: 0.6, shipping: 0.1 } }
`;
    await writeFile(at('per-rule.yaml'), policy);
    const lines = [`${(await import('node:fs')).readFileSync(at('mixed.jsonl'), 'utf8')}`];
    for (let i = 0; i < 30; i++) lines.push(`${refundTrace(100 + i, ['get_order_detail'])}\n`);
    await writeFile(at('many-refunds.jsonl'), lines.join(''));
    const [one, two, many] = await Promise.all([
      cli(['score', at('mixed.jsonl'), '--policy', at('per-rule.yaml'), '--gate']),
      cli(['score', at('mixed.jsonl'), '--policy', at('per-rule.yaml'), '--gate', '--jobs', '2']),
      cli(['score', at('many-refunds.jsonl'), '--policy', at('per-rule.yaml'), '--gate', '--jobs', '2']),
    ]);
    for (const r of [one, two]) {
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('gate pass_rate: 0.5 (min 0.5) held');
      expect(r.stderr).toContain('gate pass_rate[refunds]: 0.5 (min 0.6) FAILED');
      expect(r.stderr).toContain(
        'gate pass_rate[shipping]: FAILED — no run of this rule was judged (min 0.1)',
      );
    }
    // 32 refund runs over two threads: 1 passed.
    expect(many.stderr).toContain(`gate pass_rate[refunds]: ${Number((1 / 32).toFixed(4))} (min 0.6) FAILED`);
  }, 120_000);

  it('answers a usage error with its one line and where the help is', async () => {
    const r = await cli(['score', at('mixed.jsonl'), '--policy', at('no-gates.yaml'), '--format', 'yaml']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'toolwatch score: unknown format yaml\nrun `toolwatch score --help` for the options\n',
    );
    const unknown = await cli(['scroe']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe(
      'toolwatch: unknown command "scroe"\nrun `toolwatch --help` for the commands\n',
    );
  });
});
