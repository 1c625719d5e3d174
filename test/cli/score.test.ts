import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { context, trace as otelTrace } from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateTraces } from '../../src/evaluation/evaluate-traces.js';
import { loadPolicy } from '../../src/policy/load-policy.js';
import { TraceBuilder } from '../helpers/trace-builder.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const policies = fileURLToPath(new URL('../fixtures/policies/', import.meta.url));
const tsx = join(root, 'node_modules/.bin/tsx');

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(tsx, [join(root, 'src/cli/main.ts'), ...args], { cwd: root }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

function trace(traceId: string, tools: string[]) {
  const t = new TraceBuilder({ traceId });
  const a = t.agent('refund-agent');
  tools.forEach((name, i) => {
    a.tool(name, { id: `c${i}`, args: { order_id: 'A1024' } });
  });
  return t.toOtlp();
}

const GOOD = trace('11111111111111111111111111111111', ['get_order_detail', 'check_refund_policy']);
const BAD = trace('22222222222222222222222222222222', [
  'check_refund_policy',
  'get_order_detail',
  'submit_refund',
]);

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwatch-cli-'));
  await writeFile(join(dir, 'good.json'), JSON.stringify(GOOD, null, 2));
  // The Collector file exporter's form: one request per line, here with a broken line between.
  await writeFile(join(dir, 'bad.jsonl'), `${JSON.stringify(BAD)}\n{"resourceSpans": [\n\n`);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('toolwatch score', () => {
  it('prints one verdict per line, the same as evaluateTraces', async () => {
    const policyPath = join(policies, 'cli-refunds.yaml');
    const r = await cli([
      'score',
      join(dir, 'bad.jsonl'),
      join(dir, 'good.json'),
      '--policy',
      policyPath,
      '--format',
      'json',
    ]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    const verdicts = lines.map((l) => JSON.parse(l));
    // Streamed: verdicts come in input order (bad.jsonl was given first).
    expect(verdicts.map((v) => [v.trace_id, v.passed])).toEqual([
      ['22222222222222222222222222222222', false],
      ['11111111111111111111111111111111', true],
    ]);
    // Judged, not skipped; evaluateTraces below would skip alike.
    expect(verdicts.map((v) => v.results.map((r: { label: string }) => r.label))).toEqual([
      ['fail', 'fail'],
      ['pass', 'pass'],
    ]);
    const expected = await evaluateTraces([GOOD, BAD], await loadPolicy(policyPath));
    expect([verdicts[1], verdicts[0]]).toEqual(JSON.parse(JSON.stringify(expected)));
    // The broken JSON line is reported with its file and line, once, and skipped.
    expect(r.stderr).toMatch(/bad\.jsonl:2: not JSON: /);
    expect(r.stderr).toContain('2 runs scored, 2 verdicts, 1 passed, 2 files, 1 unreadable records');
  });

  it('writes to --out', async () => {
    const out = join(dir, 'verdicts.jsonl');
    const r = await cli([
      'score',
      join(dir, 'good.json'),
      '-p',
      join(policies, 'cli-refunds.yaml'),
      '--out',
      out,
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(JSON.parse((await readFile(out, 'utf8')).trim()).rule).toBe('refunds');
  });

  it('exits 2 with every policy problem on stderr', async () => {
    const r = await cli(['score', join(dir, 'good.json'), '--policy', join(policies, 'invalid.yaml')]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('rules[0].scorers[0].expected_tool_order: expected array of strings');
    expect(r.stderr).toContain('rules[0].scorers[1].unknown_option: unknown key');
  });

  it('exits 2 on bad usage', async () => {
    const policy = join(policies, 'cli-refunds.yaml');
    const [noPolicy, unknownFlag, noFiles, missing, badFormat, unknownCommand] = await Promise.all([
      cli(['score', join(dir, 'good.json')]),
      cli(['score', join(dir, 'good.json'), '--policy', policy, '--frobnicate']),
      cli(['score', '--policy', policy]),
      cli(['score', join(dir, 'nope.json'), '--policy', policy]),
      cli(['score', join(dir, 'good.json'), '--policy', policy, '--format', 'yaml']),
      cli(['frob']),
    ]);
    expect(noPolicy.code).toBe(2);
    expect(noPolicy.stderr).toContain('--policy (or --cases) is required');
    expect(unknownFlag.code).toBe(2);
    expect(unknownFlag.stderr).toContain('--frobnicate');
    expect(noFiles.code).toBe(2);
    expect(noFiles.stderr).toContain('no trace files given');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('cannot read');
    expect(badFormat.code).toBe(2);
    expect(badFormat.stderr).toContain('unknown format yaml');
    expect(unknownCommand.code).toBe(2);
    expect(unknownCommand.stderr).toContain('unknown command "frob"');
  });

  it('prints the grouped report with --format table', async () => {
    const r = await cli([
      'score',
      join(dir, 'good.json'),
      join(dir, 'bad.jsonl'),
      '--policy',
      join(policies, 'cli-refunds.yaml'),
      '--format',
      'table',
    ]);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe('toolwatch report: 2 runs, 1 passed (50.0%)');
    expect(r.stdout).toMatch(/^refunds\s+2\s+1\s+50\.0%$/m);
    expect(r.stdout).toMatch(/^refunds\/reliability\s+reliability\s+2\s+1\s+50\.0%/m);
    expect(r.stdout).toMatch(/^failing runs: 1$/m);
    expect(r.stdout).toMatch(
      /^22222222222222222222222222222222\s+refund-agent\s+refunds\s+\S*bad\.jsonl\s+reliability: /m,
    );
  });

  it('checks gates with --gate: exit 0 when they hold, 1 when one fails', async () => {
    const policy = join(policies, 'cli-gates.yaml');
    const baseline = join(dir, 'baseline.jsonl');
    const [saved, held, failed] = await Promise.all([
      cli(['baseline', 'save', join(dir, 'good.json'), '--policy', policy, '--out', baseline]),
      cli(['score', join(dir, 'good.json'), '--policy', policy, '--gate']),
      cli(['score', join(dir, 'good.json'), join(dir, 'bad.jsonl'), '--policy', policy, '--gate']),
    ]);
    expect(saved.code).toBe(0);
    expect(held.code).toBe(0);
    expect(held.stderr).toContain('gate forbidden_tool_calls: 0 (max 0) held');
    expect(held.stderr).toContain('gate regression_vs_baseline: skipped — no baseline (max_drop 0.1)');
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('gate forbidden_tool_calls: 1 (max 0) FAILED');
    expect(JSON.parse((await readFile(baseline, 'utf8')).trim()).passed).toBe(true);

    const vsBaseline = await cli([
      'score',
      join(dir, 'good.json'),
      join(dir, 'bad.jsonl'),
      '--policy',
      policy,
      '--gate',
      '--baseline',
      baseline,
    ]);
    expect(vsBaseline.code).toBe(1);
    expect(vsBaseline.stderr).toContain('gate regression_vs_baseline: 0.5 baseline 1 (max_drop 0.1) FAILED');
  });

  it('counts runs out of the sample as judged by nothing: not scored, not passed, never a held gate', async () => {
    const gates = await readFile(join(policies, 'cli-gates.yaml'), 'utf8');
    const sampled = join(dir, 'sampled-out.yaml');
    await writeFile(sampled, gates.replace('version: 1\n', 'version: 1\nsampling: { ratio: 0 }\n'));
    const files = [join(dir, 'good.json'), join(dir, 'bad.jsonl')];
    const [plain, gated, saved] = await Promise.all([
      cli(['score', ...files, '--policy', sampled]),
      cli(['score', ...files, '--policy', sampled, '--gate', '--allow-unreadable']),
      cli(['baseline', 'save', ...files, '--policy', sampled, '--out', join(dir, 'sampled-baseline.jsonl')]),
    ]);
    // Both runs got their record (one of them calls a forbidden tool), and neither was judged.
    expect(plain.stdout.trim().split('\n')).toHaveLength(2);
    expect(plain.code).toBe(0);
    expect(plain.stderr).toContain(
      'toolwatch score: 0 runs scored, 2 verdicts, 0 passed, 2 files, 1 unreadable records, 2 verdicts judged by no scorer (sampled_out ×2)',
    );
    expect(gated.code).toBe(1);
    expect(gated.stderr).toContain('gate FAILED — nothing was scored');
    expect(saved.code).toBe(1);
    expect(saved.stderr).toContain('nothing was scored, so the baseline holds no verdicts');
  });

  it('runs llm_judge scorers with judges from --judges MODULE', async () => {
    const policy = join(policies, 'cli-judged.yaml');
    const [judged, unjudged, broken] = await Promise.all([
      cli(['score', join(dir, 'good.json'), '--policy', policy, '--judges', join(policies, 'judges.mjs')]),
      cli(['score', join(dir, 'good.json'), '--policy', policy]),
      cli(['score', join(dir, 'good.json'), '--policy', policy, '--judges', join(dir, 'missing.mjs')]),
    ]);
    expect(judged.code).toBe(0);
    expect(JSON.parse(judged.stdout).results[0]).toMatchObject({
      scorer: 'llm_judge',
      label: 'pass',
      score: 1,
    });
    expect(JSON.parse(unjudged.stdout).results[0]).toMatchObject({
      label: 'error',
      reason: 'no judge named "default"',
    });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain('cannot load judges');
  });

  it('reads OTLP/protobuf files (.pb) like their JSON form', async () => {
    const spans = await exportedSpans();
    await writeFile(join(dir, 'trace.pb'), ProtobufTraceSerializer.serializeRequest(spans)!);
    await writeFile(join(dir, 'trace.json'), JsonTraceSerializer.serializeRequest(spans)!);
    await writeFile(join(dir, 'broken.binpb'), new Uint8Array([0x0a, 0x7f, 0x01]));
    const policy = join(policies, 'cli-refunds.yaml');
    const [pb, json] = await Promise.all([
      cli(['score', join(dir, 'trace.pb'), join(dir, 'broken.binpb'), '--policy', policy]),
      cli(['score', join(dir, 'trace.json'), '--policy', policy]),
    ]);
    expect(pb.code).toBe(0);
    expect(pb.stdout).not.toBe('');
    expect(pb.stdout).toBe(json.stdout);
    expect(JSON.parse(pb.stdout.trim()).agent).toBe('refund-agent');
    expect(pb.stderr).toContain('broken.binpb: unreadable OTLP/protobuf (truncated');
  });
});

async function exportedSpans() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('cli-test');
  const agent = tracer.startSpan('invoke_agent refund-agent', {
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'refund-agent' },
  });
  const parent = otelTrace.setSpan(context.active(), agent);
  for (const name of ['get_order_detail', 'check_refund_policy']) {
    tracer
      .startSpan(
        `execute_tool ${name}`,
        { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': name } },
        parent,
      )
      .end();
  }
  agent.end();
  // Read before shutdown: shutting the exporter down clears it.
  const spans = exporter.getFinishedSpans();
  await provider.shutdown();
  return spans;
}
