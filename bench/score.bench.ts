/**
 * Streaming `toolwatch score` on JSON Lines files of 25,000 / 100,000 / 200,000 runs of 8
 * spans (one agent, three LLM calls, four tool executions; one run per line, as a file
 * exporter writes small batches), generated here. Each measurement runs in its own child
 * process, so peak RSS (`process.resourceUsage().maxRSS`) is that command's alone:
 *
 * - baseline: a plain streaming pass — read the file in chunks, split lines, `JSON.parse`
 *   each — the least any JSON Lines reader does;
 * - score: `toolwatch score FILE --policy P --out /dev/null` (the real CLI entry, JSON
 *   verdicts serialised and written), trajectory + tool_order scorers;
 * - decode only: the plain pass plus OTLP decoding of each record (no judging);
 * - built: the same `score`, from the JavaScript `npm run build` emits (compiled here into
 *   node_modules/.cache, so it resolves the same dependencies), run by plain node: what the
 *   installed `toolwatch` bin runs. tsx's transform keeps function names by wrapping every
 *   closure it creates, which the shipped code does not pay.
 *
 * CPU times are taken inside each child after its static imports, so they leave out node's
 * start-up and the CLI's module loading; the "whole process" column puts both back (built CLI
 * against the pass under plain node), and a note gives the start-up on an empty file.
 *
 * The tsx children run under the same loader, so the loader's cost is in all of them.
 */
import { execFile, spawnSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TraceBuilder } from '../test/helpers/trace-builder.js';
import type { BenchReport } from './run.js';

const SIZES = [25_000, 100_000, 200_000];
const root = fileURLToPath(new URL('../', import.meta.url));
const tsx = join(root, 'node_modules/.bin/tsx');
const PLACEHOLDER = 'f'.repeat(32);

const POLICY = `version: 1
rules:
  - name: refunds
    match: { agent: "refund-*" }
    scorers:
      - kind: trajectory
        expected_tools: [get_order_detail, check_refund_policy]
        forbidden_tools: [submit_refund]
        max_calls: 4
        arg_constraints: { get_order_detail: { order_id: { equals: A1024 } } }
        expected_order: [[get_order_detail, check_refund_policy]]
        risk: high
        intent: refund_check
      - kind: tool_order
        expected_tool_order: [get_order_detail, check_refund_policy]
`;

function template(orderId: string, last: string): string {
  const t = new TraceBuilder({ traceId: PLACEHOLDER });
  const a = t.agent('refund-agent');
  a.llm({ toolCalls: [{ name: 'get_order_detail', id: 'c1', args: { order_id: orderId } }] });
  a.tool('get_order_detail', {
    id: 'c1',
    args: { order_id: orderId },
    result: { total: 42.5, delivered: true },
  });
  a.llm({ toolCalls: [{ name: 'check_refund_policy', id: 'c2', args: { order_id: orderId } }] });
  a.tool('check_refund_policy', { id: 'c2', args: { order_id: orderId }, result: { eligible: true } });
  a.tool('lookup_customer', { id: 'c3', args: { order_id: orderId }, result: { tier: 'gold' } });
  a.llm({ toolCalls: [{ name: last, id: 'c4', args: { order_id: orderId } }] });
  a.tool(last, { id: 'c4', args: { order_id: orderId } });
  return JSON.stringify(t.toOtlp());
}

async function generate(path: string, runs: number): Promise<number> {
  const variants = [
    template('A1024', 'log_event'),
    template('B7', 'log_event'),
    template('A1024', 'submit_refund'),
  ];
  const out = createWriteStream(path);
  for (let i = 0; i < runs; i++) {
    const id = (i + 1).toString(16).padStart(32, '0');
    const line = `${variants[i % 5 === 0 ? 1 : i % 7 === 0 ? 2 : 0]!.replaceAll(PLACEHOLDER, id)}\n`;
    if (!out.write(line)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise((r) => out.end(r));
  return (await stat(path)).size;
}

/** CPU of the whole process so far: node's own start-up and module loading included. */
const PROCESS_CPU =
  'const processCpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };';

const BASELINE = `
${PROCESS_CPU}
import { createReadStream } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
const start = performance.now();
const cpu0 = process.cpuUsage();
const cpuMs = () => { const u = process.cpuUsage(cpu0); return (u.user + u.system) / 1000; };
const decoder = new StringDecoder('utf8');
let carry = '', records = 0;
for await (const chunk of createReadStream(process.argv[2])) {
  const text = carry + decoder.write(chunk);
  let from = 0, nl;
  while ((nl = text.indexOf('\\n', from)) !== -1) {
    const line = text.slice(from, nl);
    if (line.length > 0) { JSON.parse(line); records++; }
    from = nl + 1;
  }
  carry = text.slice(from);
}
console.log(JSON.stringify({ ms: performance.now() - start, records, maxRssKb: process.resourceUsage().maxRSS, cpuMs: cpuMs(), processCpuMs: processCpuMs() }));
`;

/** The same streaming pass plus OTLP decoding of each record (toolwatch's decoder, no judging). */
const DECODE = (decoderPath: string) => `
import { createReadStream } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { spansFromOtlpJson } from ${JSON.stringify(decoderPath)};
const start = performance.now();
const cpu0 = process.cpuUsage();
const cpuMs = () => { const u = process.cpuUsage(cpu0); return (u.user + u.system) / 1000; };
const decoder = new StringDecoder('utf8');
let carry = '', spans = 0;
for await (const chunk of createReadStream(process.argv[2])) {
  const text = carry + decoder.write(chunk);
  let from = 0, nl;
  while ((nl = text.indexOf('\\n', from)) !== -1) {
    const line = text.slice(from, nl);
    if (line.length > 0) spans += spansFromOtlpJson(JSON.parse(line)).length;
    from = nl + 1;
  }
  carry = text.slice(from);
}
console.log(JSON.stringify({ ms: performance.now() - start, spans, maxRssKb: process.resourceUsage().maxRSS, cpuMs: cpuMs() }));
`;

const SCORE = (mainPath: string) => `
${PROCESS_CPU}
import { main } from ${JSON.stringify(mainPath)};
const start = performance.now();
const cpu0 = process.cpuUsage();
const cpuMs = () => { const u = process.cpuUsage(cpu0); return (u.user + u.system) / 1000; };
let summary = '';
const code = await main(['score', process.argv[2], '--policy', process.argv[3], '--out', '/dev/null', ...process.argv.slice(4)], {
  stdout: () => {},
  stderr: (t) => { summary += t; },
});
console.log(JSON.stringify({ ms: performance.now() - start, code, summary: summary.trim(), maxRssKb: process.resourceUsage().maxRSS, cpuMs: cpuMs(), processCpuMs: processCpuMs() }));
`;

function child(
  script: string,
  args: string[],
  runner = tsx,
): Promise<{
  ms: number;
  cpuMs: number;
  processCpuMs?: number;
  maxRssKb: number;
  summary?: string;
  code?: number;
}> {
  return new Promise((resolve, reject) => {
    execFile(runner, [script, ...args], { cwd: root, maxBuffer: 1 << 24 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${err.message}\n${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').pop()!));
    });
  });
}

export async function run(): Promise<BenchReport> {
  const dir = await mkdtemp(join(tmpdir(), 'toolwatch-score-bench-'));
  const rows: BenchReport['rows'] = [];
  const notes: string[] = [];
  try {
    const baselineScript = join(dir, 'baseline.mjs');
    const scoreScript = join(dir, 'score.mts');
    const decodeScript = join(dir, 'decode.mts');
    await writeFile(decodeScript, DECODE(join(root, 'src/conventions/from-otlp-json.ts')));
    const policy = join(dir, 'policy.yaml');
    await writeFile(baselineScript, BASELINE);
    await writeFile(scoreScript, SCORE(join(root, 'src/cli/main.ts')));
    await writeFile(policy, POLICY);
    const built = join(root, 'node_modules/.cache/toolwatch-score-bench');
    await rm(built, { recursive: true, force: true });
    // Type errors elsewhere in a shared tree do not stop tsc emitting; a missing entry would.
    spawnSync(
      process.execPath,
      [
        join(root, 'node_modules/typescript/bin/tsc'),
        '-p',
        'tsconfig.build.json',
        '--outDir',
        join(built, 'dist'),
      ],
      { cwd: root, stdio: 'ignore' },
    );
    const builtScript = join(built, 'score.mjs');
    await writeFile(builtScript, SCORE(join(built, 'dist/cli/main.js')));
    // Start-up: the built CLI on an empty file against node starting and exiting (whole
    // processes, fastest of three): what every invocation pays before reading a record.
    const empty = join(dir, 'empty.jsonl');
    const bareScript = join(dir, 'bare.mjs');
    await writeFile(empty, '');
    await writeFile(
      bareScript,
      `${PROCESS_CPU}\nconsole.log(JSON.stringify({ processCpuMs: processCpuMs() }));`,
    );
    const fastest = async (script: string, args: string[]) => {
      let best = Number.POSITIVE_INFINITY;
      for (let i = 0; i < 3; i++)
        best = Math.min(best, (await child(script, args, process.execPath)).processCpuMs!);
      return best;
    };
    const startCli = await fastest(builtScript, [empty, policy]);
    const startNode = await fastest(bareScript, []);
    notes.push(
      `start-up (built CLI on an empty file, whole process): ${Math.round(startCli)} ms of CPU; node alone ${Math.round(startNode)} ms`,
    );
    let rss25: number | undefined;
    for (const runs of SIZES) {
      const file = join(dir, `runs-${runs}.jsonl`);
      const bytes = await generate(file, runs);
      // Warm the page cache, then alternate baseline and score twice; keep the faster of each.
      await child(baselineScript, [file]);
      const base = [await child(baselineScript, [file])];
      const score = [await child(scoreScript, [file, policy])];
      base.push(await child(baselineScript, [file]));
      score.push(await child(scoreScript, [file, policy]));
      const decoded = [await child(decodeScript, [file]), await child(decodeScript, [file])];
      const shipped = [
        await child(builtScript, [file, policy], process.execPath),
        await child(builtScript, [file, policy], process.execPath),
      ];
      // The same with --jobs 2: this thread and one worker (CPU time counts every thread).
      const jobs = [
        await child(builtScript, [file, policy, '--jobs', '2'], process.execPath),
        await child(builtScript, [file, policy, '--jobs', '2'], process.execPath),
      ];
      // The pass under plain node too, for the whole-process comparison with the built CLI
      // (under tsx its start-up would carry the loader's).
      const plain = [
        await child(baselineScript, [file], process.execPath),
        await child(baselineScript, [file], process.execPath),
      ];
      const c = shipped.reduce((x, y) => (x.ms <= y.ms ? x : y));
      const j = jobs.reduce((x, y) => (x.ms <= y.ms ? x : y));
      const p = plain.reduce((x, y) => (x.ms <= y.ms ? x : y));
      const d = decoded.reduce((x, y) => (x.ms <= y.ms ? x : y));
      const b = base.reduce((x, y) => (x.ms <= y.ms ? x : y));
      const s = score.reduce((x, y) => (x.ms <= y.ms ? x : y));
      const rssMb = Math.max(...score.map((x) => x.maxRssKb)) / 1024;
      if (runs === SIZES[0]) rss25 = rssMb;
      rows.push({
        runs,
        'file MB': Math.round(bytes / 1024 / 1024),
        'score runs/s': Math.round((runs / s.ms) * 1000),
        'JSON.parse pass runs/s': Math.round((runs / b.ms) * 1000),
        'score ÷ JSON.parse time': Number((s.ms / b.ms).toFixed(2)),
        'JSON.parse + OTLP decode only ÷ JSON.parse': Number((d.ms / b.ms).toFixed(2)),
        'built score (node dist/) ÷ JSON.parse': Number((c.ms / b.ms).toFixed(2)),
        'built score --jobs 2 ÷ JSON.parse': Number((j.ms / b.ms).toFixed(2)),
        'CPU time: score ÷ JSON.parse': Number((s.cpuMs / b.cpuMs).toFixed(2)),
        'CPU time: built --jobs 2 ÷ JSON.parse': Number((j.cpuMs / b.cpuMs).toFixed(2)),
        'CPU time: built ÷ JSON.parse': Number((c.cpuMs / b.cpuMs).toFixed(2)),
        // Both whole processes: node's start-up, and for the CLI loading its modules, included.
        'CPU time, whole process: built ÷ JSON.parse (node)': Number(
          (c.processCpuMs! / p.processCpuMs!).toFixed(2),
        ),
        'score peak RSS MB': Math.round(rssMb),
        'built --jobs 2 peak RSS MB': Math.round(Math.max(...jobs.map((x) => x.maxRssKb)) / 1024),
        'JSON.parse peak RSS MB': Math.round(Math.max(...base.map((x) => x.maxRssKb)) / 1024),
        'RSS ÷ RSS at 25k': Number((rssMb / rss25!).toFixed(2)),
      });
      notes.push(`${runs} runs: ${s.summary}`);
      if (j.summary !== s.summary) notes.push(`${runs} runs, --jobs 2, a different summary: ${j.summary}`);
      await rm(file, { force: true });
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
    await rm(join(root, 'node_modules/.cache/toolwatch-score-bench'), { recursive: true, force: true });
  }
  return {
    name: 'toolwatch score, streaming: runs/s, ratio to a plain streaming JSON.parse pass, peak RSS',
    rows,
    notes: [
      ...notes,
      'Each figure is the faster of two child processes per command (CPU time: of the faster); RSS is the larger of the two.',
      'CPU time (user + system, all threads: GC helpers included) is less disturbed by other load on a shared machine than wall time.',
    ],
  };
}
