/**
 * The cost of toolwatch on an application's tracing pipeline, as ratios against the same
 * pipeline without it (BasicTracerProvider + BatchSpanProcessor + a no-op exporter), with
 * baseline and toolwatch rounds interleaved so that machine noise hits both alike.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Context, Span, Tracer } from '@opentelemetry/api';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import type { ReadableSpan, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  InMemorySpanExporter,
  NoopSpanProcessor,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { fromReadableSpan } from '../src/conventions/from-readable-span.js';
import { verdictAttributes } from '../src/emission/attributes.js';
import { addEvaluationEvents } from '../src/emission/events.js';
import { evaluateRunSync } from '../src/evaluation/evaluate-run.js';
import { isSampled } from '../src/evaluation/sampling.js';
import { definePolicy } from '../src/policy/define-policy.js';
import {
  ToolwatchSpanProcessor,
  type ToolwatchSpanProcessorOptions,
} from '../src/processor/toolwatch-span-processor.js';
import { readAhead } from '../src/reconstruction/read-facts.js';
import { reconstructTrace } from '../src/reconstruction/reconstruct-trace.js';
import { policyArgumentsRead } from '../src/scorers/arguments-read.js';
import { reliability } from '../src/scorers/reliability.js';
import { toolOrder } from '../src/scorers/tool-order.js';
import { trajectory } from '../src/scorers/trajectory.js';
import type { MisuseEvent, Policy } from '../src/types.js';
import type { BenchReport } from './run.js';

const SPANS_PER_RUN = 31;
const ROUNDS = 15;
const RUNS_PER_ROUND = 600;
/** Yield to the event loop like a server between requests, so the batch processor can export. */
const YIELD_EVERY_RUNS = 16;

class CountingExporter implements SpanExporter {
  count = 0;
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.count += spans.length;
    done({ code: 0 });
  }
  async shutdown(): Promise<void> {}
  async forceFlush(): Promise<void> {}
}

/**
 * What an exporter of a deployed application does before the network: each batch serialised
 * as an OTLP/protobuf request (as the OTLP/HTTP and gRPC exporters do); the bytes are dropped.
 */
class SerializingExporter extends CountingExporter {
  bytes = 0;
  override export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.bytes += ProtobufTraceSerializer.serializeRequest(spans)?.length ?? 0;
    super.export(spans, done);
  }
}

const TOOLS = [
  'get_order_detail',
  'check_refund_policy',
  'get_customer',
  'lookup_shipment',
  'get_order_detail',
  'notify',
];

function benchPolicy(ratio = 1): Policy {
  return definePolicy({
    sampling: { ratio },
    rules: [
      {
        name: 'refunds',
        match: { agent: 'refund-*' },
        scorers: [
          trajectory({
            expectedTools: ['get_order_detail', 'check_refund_policy'],
            forbiddenTools: ['submit_refund'],
            maxCalls: 10,
            argConstraints: { get_order_detail: { order_id: { equals: 'A1024' } } },
            expectedOrder: [['get_order_detail', 'check_refund_policy']],
          }),
          toolOrder({ expectedToolOrder: ['get_order_detail', 'check_refund_policy'] }),
          reliability({
            expectedToolCalls: ['get_order_detail', 'check_refund_policy'],
            allowAdditionalToolCalls: true,
          }),
        ],
      },
    ],
  });
}

function under(parent: Span): Context {
  return trace.setSpan(ROOT_CONTEXT, parent);
}

let callId = 0;

// The spans of one agent run, shared by the synchronous and the async shape.
const startAgent = (tracer: Tracer) =>
  tracer.startSpan('invoke_agent refund-agent', {
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'refund-agent' },
  });
const startLlm = (tracer: Tracer, agent: Span) =>
  tracer.startSpan(
    'chat mock-model',
    { attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'mock-model' } },
    under(agent),
  );
const startHttp = (tracer: Tracer, llm: Span) =>
  tracer.startSpan(
    'POST /v1/chat/completions',
    { kind: 2, attributes: { 'http.request.method': 'POST' } },
    under(llm),
  );
const startTool = (tracer: Tracer, agent: Span, tool: number) => {
  const name = TOOLS[tool]!;
  return tracer.startSpan(
    `execute_tool ${name}`,
    {
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': name,
        'gen_ai.tool.call.id': `call_${++callId}`,
        'gen_ai.tool.call.arguments': JSON.stringify({ order_id: 'A1024', include_history: true, n: tool }),
      },
    },
    under(agent),
  );
};
const startDb = (tracer: Tracer, toolSpan: Span) =>
  tracer.startSpan(
    'SELECT orders',
    { kind: 2, attributes: { 'db.system.name': 'postgresql' } },
    under(toolSpan),
  );
const TOOL_RESULT = '{"status":"delivered"}';

/** One agent run: 1 agent span, 4 LLM spans, 6 tool spans with JSON args, 20 HTTP/DB spans. */
function agentRun(tracer: Tracer, endRoot = true): void {
  const agent = startAgent(tracer);
  let tool = 0;
  for (let turn = 0; turn < 4; turn++) {
    const llm = startLlm(tracer, agent);
    for (let h = 0; h < 2; h++) startHttp(tracer, llm).end();
    llm.end();
    const toolsThisTurn = turn === 3 ? 0 : 2;
    for (let t = 0; t < toolsThisTurn; t++, tool++) {
      const span = startTool(tracer, agent, tool);
      for (let d = 0; d < 2; d++) startDb(tracer, span).end();
      span.setAttribute('gen_ai.tool.call.result', TOOL_RESULT);
      span.end();
    }
  }
  if (endRoot) agent.end();
}

/**
 * The conversation each LLM span of a run with messages carries (GenAI semconv JSON, as AI SDK 7
 * and Mastra 1.x write it): a ~1 KB user message, then each turn's two tool calls and their
 * results, with the same call ids as the tool spans. Built once: the strings are the same
 * every run, as a replayed workload's would be (V8 parses each anyway).
 */
const USER_MESSAGE = {
  role: 'user',
  parts: [{ type: 'text', content: 'Please refund order A1024, it arrived damaged. '.repeat(20) }],
};
const callIdOf = (turn: number, t: number) => `call_${turn}_${t}`;
const callsOf = (turn: number) =>
  [0, 1].map((t) => ({
    type: 'tool_call',
    id: callIdOf(turn, t),
    name: TOOLS[2 * turn + t]!,
    arguments: { order_id: 'A1024', include_history: true, n: 2 * turn + t },
  }));
function conversationAt(turn: number): string {
  const messages: unknown[] = [USER_MESSAGE];
  for (let t = 0; t < turn; t++) {
    messages.push({ role: 'assistant', parts: callsOf(t) });
    messages.push({
      role: 'tool',
      parts: [0, 1].map((k) => ({ type: 'tool_call_response', id: callIdOf(t, k), response: TOOL_RESULT })),
    });
  }
  return JSON.stringify(messages);
}
const INPUT_MESSAGES = [0, 1, 2, 3].map(conversationAt);
const OUTPUT_MESSAGES = [0, 1, 2, 3].map((turn) =>
  JSON.stringify([
    turn === 3
      ? { role: 'assistant', parts: [{ type: 'text', content: 'Your refund is on its way.' }] }
      : { role: 'assistant', parts: callsOf(turn) },
  ]),
);

/** The same run with messages: the agent's input, each LLM span's conversation and output, tool calls joined by id. */
function agentRunWithMessages(tracer: Tracer): void {
  const agent = tracer.startSpan('invoke_agent refund-agent', {
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'refund-agent',
      'gen_ai.input.messages': INPUT_MESSAGES[0]!,
    },
  });
  let tool = 0;
  for (let turn = 0; turn < 4; turn++) {
    const llm = tracer.startSpan(
      'chat mock-model',
      {
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': 'mock-model',
          'gen_ai.input.messages': INPUT_MESSAGES[turn]!,
          'gen_ai.output.messages': OUTPUT_MESSAGES[turn]!,
        },
      },
      under(agent),
    );
    for (let h = 0; h < 2; h++) startHttp(tracer, llm).end();
    llm.end();
    const toolsThisTurn = turn === 3 ? 0 : 2;
    for (let t = 0; t < toolsThisTurn; t++, tool++) {
      const span = startTool(tracer, agent, tool);
      span.setAttribute('gen_ai.tool.call.id', callIdOf(turn, t));
      for (let d = 0; d < 2; d++) startDb(tracer, span).end();
      span.setAttribute('gen_ai.tool.call.result', TOOL_RESULT);
      span.end();
    }
  }
  agent.end();
}

/** The same run as async code: every step awaits, so concurrent runs interleave span by span. */
async function agentRunAsync(tracer: Tracer): Promise<void> {
  const step = () => Promise.resolve();
  const agent = startAgent(tracer);
  await step();
  let tool = 0;
  for (let turn = 0; turn < 4; turn++) {
    const llm = startLlm(tracer, agent);
    for (let h = 0; h < 2; h++) {
      const http = startHttp(tracer, llm);
      await step();
      http.end();
    }
    llm.end();
    await step();
    const toolsThisTurn = turn === 3 ? 0 : 2;
    for (let t = 0; t < toolsThisTurn; t++, tool++) {
      const span = startTool(tracer, agent, tool);
      for (let d = 0; d < 2; d++) {
        const db = startDb(tracer, span);
        await step();
        db.end();
      }
      span.setAttribute('gen_ai.tool.call.result', TOOL_RESULT);
      span.end();
      await step();
    }
  }
  agent.end();
}

/** Runs of concurrent async agents at once. */
const CONCURRENT_RUNS = 64;

/** A request of ordinary spans only: an HTTP server root and 30 HTTP/DB children. */
function ordinaryRequest(tracer: Tracer): void {
  const root = tracer.startSpan('GET /orders/:id', { kind: 1, attributes: { 'http.request.method': 'GET' } });
  for (let i = 0; i < 10; i++) {
    const call = tracer.startSpan(
      'GET /inventory',
      { kind: 2, attributes: { 'http.request.method': 'GET' } },
      under(root),
    );
    tracer
      .startSpan('SELECT stock', { kind: 2, attributes: { 'db.system.name': 'postgresql' } }, under(call))
      .end();
    tracer.startSpan('redis GET', { kind: 2, attributes: { 'db.system.name': 'redis' } }, under(call)).end();
    call.end();
  }
  root.end();
}

interface Pipeline {
  tracer: Tracer;
  provider: BasicTracerProvider;
  exporter: CountingExporter;
  processor?: ToolwatchSpanProcessor;
}

let defaultPolicy: Policy | undefined;

/**
 * Options of the processor under test; `noopInstead` puts an empty processor in its place (the
 * floor), `peer` another vendor's processor (with a no-op exporter of its own).
 */
type BenchOptions = Partial<ToolwatchSpanProcessorOptions> & {
  noopInstead?: boolean;
  peer?: () => SpanProcessor;
  /** Both pipelines export through `SerializingExporter` (OTLP/protobuf, no network). */
  serializing?: boolean;
  /** Toolwatch records its metrics into a real `MeterProvider` with a reader (as deployed). */
  metrics?: boolean;
};

/** A meter provider with a reader, so instruments record for real; collected only at the end of time. */
function deployedMeterProvider(): MeterProvider {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  return new MeterProvider({
    readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })],
  });
}

function pipeline(withToolwatch: boolean, options: BenchOptions = {}): Pipeline {
  const exporter = options.serializing ? new SerializingExporter() : new CountingExporter();
  const spanProcessors: SpanProcessor[] = [new BatchSpanProcessor(exporter)];
  let processor: ToolwatchSpanProcessor | undefined;
  if (withToolwatch && options.noopInstead) {
    spanProcessors.unshift(new NoopSpanProcessor());
  } else if (withToolwatch && options.peer) {
    spanProcessors.unshift(options.peer());
  } else if (withToolwatch) {
    // Built once: loading a policy is not part of what a span costs.
    defaultPolicy ??= benchPolicy();
    processor = new ToolwatchSpanProcessor({
      policy: defaultPolicy,
      ...options,
      ...(options.metrics ? { meterProvider: deployedMeterProvider() } : {}),
    });
    spanProcessors.unshift(processor);
  }
  const provider = new BasicTracerProvider({ spanProcessors });
  return { tracer: provider.getTracer('bench'), provider, exporter, processor };
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Garbage-collection pauses of this process (start and duration, `performance.now()` ms), as
 * node reports them: each round sums those that started inside it. They arrive after the
 * fact, so a round collects its share once its pipeline has shut down.
 */
const gcPauses: Array<{ start: number; duration: number }> = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcPauses.push({ start: entry.startTime, duration: entry.duration });
}).observe({ entryTypes: ['gc'] });

/** GC pause time (ms) that started within [from, to); forgets the pauses before `to`. */
async function gcPauseBetween(from: number, to: number): Promise<number> {
  // The observer's callback runs on a later turn of the event loop.
  await tick();
  let total = 0;
  let kept = 0;
  for (const pause of gcPauses) {
    if (pause.start >= from && pause.start < to) total += pause.duration;
    else if (pause.start >= to) gcPauses[kept++] = pause;
  }
  gcPauses.length = kept;
  return total;
}

interface RoundResult {
  /** Spans per wall-clock second. */
  wall: number;
  /** Spans per second of this process's CPU time: less sensitive to other processes on a shared machine. */
  cpu: number;
  /** Garbage-collection pause time per run (µs). */
  gc: number;
}

/** A workload: one synchronous run, or (async) a batch of concurrent runs. */
type Work = ((tracer: Tracer) => void) | { concurrent: number; run: (tracer: Tracer) => Promise<void> };

async function round(
  withToolwatch: boolean,
  work: Work,
  runs: number,
  options: BenchOptions = {},
): Promise<RoundResult> {
  const p = pipeline(withToolwatch, options);
  const gcFrom = performance.now();
  const started = process.hrtime.bigint();
  const cpuStarted = process.cpuUsage();
  let executed = 0;
  if (typeof work === 'function') {
    for (; executed < runs; executed++) {
      work(p.tracer);
      if (executed % YIELD_EVERY_RUNS === YIELD_EVERY_RUNS - 1) await tick();
    }
  } else {
    while (executed < runs) {
      const batch: Array<Promise<void>> = [];
      for (let i = 0; i < work.concurrent; i++) batch.push(work.run(p.tracer));
      await Promise.all(batch);
      executed += work.concurrent;
      await tick();
    }
  }
  await p.provider.forceFlush();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = process.cpuUsage(cpuStarted);
  const gcTo = performance.now();
  await p.provider.shutdown();
  const spans = executed * SPANS_PER_RUN;
  const gc = ((await gcPauseBetween(gcFrom, gcTo)) * 1000) / executed;
  return { wall: spans / seconds, cpu: spans / ((cpu.user + cpu.system) / 1e6), gc };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

async function throughput(
  label: string,
  work: Work,
  target: number | undefined,
  options: BenchOptions = {},
  runsPerRound = RUNS_PER_ROUND,
) {
  // Warm-up, discarded: JIT and the first allocation of every shape.
  await round(false, work, runsPerRound / 2);
  await round(true, work, runsPerRound / 2, options);
  const base: RoundResult[] = [];
  const tw: RoundResult[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate which goes first so neither always runs on a warmer heap.
    const first = r % 2 === 0;
    const a = await round(!first, work, runsPerRound, options);
    const b = await round(first, work, runsPerRound, options);
    // first: a is the baseline (round(false)), b toolwatch; otherwise the reverse.
    base.push(first ? a : b);
    tw.push(first ? b : a);
  }
  const wall = (rs: RoundResult[]) => median(rs.map((r) => r.wall));
  const pairRatio = (pick: (r: RoundResult) => number) =>
    Number(median(tw.map((t, i) => pick(t) / pick(base[i]!))).toFixed(3));
  const cpuPerRun = (rs: RoundResult[]) => (SPANS_PER_RUN * 1e6) / median(rs.map((r) => r.cpu));
  return {
    workload: label,
    // What one run costs this process's CPU beyond the bare pipeline.
    'µs per run added': Number((cpuPerRun(tw) - cpuPerRun(base)).toFixed(1)),
    'baseline spans/s': Math.round(wall(base)),
    'toolwatch spans/s': Math.round(wall(tw)),
    // Each pair runs back to back, so it sees the same load from other processes.
    ratio: pairRatio((r) => r.cpu),
    'wall-clock ratio': pairRatio((r) => r.wall),
    'ratio of medians (wall)': Number((wall(tw) / wall(base)).toFixed(3)),
    target: target === undefined ? '' : `≥ ${target}`,
    // How much of the added cost is the collector's: what the runs keep alive, and for how long.
    'GC µs per run (baseline / toolwatch)': `${median(base.map((r) => r.gc)).toFixed(1)} / ${median(tw.map((r) => r.gc)).toFixed(1)}`,
  };
}

/** Times a span processor's hooks (what the SDK spends inside them). */
class TimedProcessor implements SpanProcessor {
  spent = 0;
  constructor(private readonly _inner: SpanProcessor) {}
  onStart(span: Parameters<SpanProcessor['onStart']>[0], context: Context): void {
    const t = performance.now();
    this._inner.onStart(span, context);
    this.spent += performance.now() - t;
  }
  onEnding(span: Parameters<NonNullable<SpanProcessor['onEnding']>>[0]): void {
    const t = performance.now();
    this._inner.onEnding?.(span);
    this.spent += performance.now() - t;
  }
  onEnd(span: ReadableSpan): void {
    const t = performance.now();
    this._inner.onEnd(span);
    this.spent += performance.now() - t;
  }
  forceFlush(): Promise<void> {
    return this._inner.forceFlush();
  }
  shutdown(): Promise<void> {
    return this._inner.shutdown();
  }
}

/**
 * Time in toolwatch's hooks per judged run, back to back (warm, as in the rows above) and with
 * each run between 9 runs of the same spans on another pipeline (cold: in an application a
 * judged run comes between other work, which evicts its code and data). Hook time minus an
 * empty processor's under the same timer; medians over rounds.
 */
async function coldJudging() {
  defaultPolicy ??= benchPolicy();
  const policy = defaultPolicy;
  const elsewhere = pipeline(false);
  const hookTime = async (inner: SpanProcessor, between: number) => {
    const timed = new TimedProcessor(inner);
    const exporter = new CountingExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [timed, new BatchSpanProcessor(exporter)] });
    const tracer = provider.getTracer('bench');
    const runs = 200;
    for (let i = 0; i < runs; i++) {
      agentRun(tracer);
      for (let j = 0; j < between; j++) agentRun(elsewhere.tracer);
      if (i % YIELD_EVERY_RUNS === YIELD_EVERY_RUNS - 1) await tick();
    }
    await provider.forceFlush();
    await provider.shutdown();
    return (timed.spent * 1000) / runs;
  };
  const measure = async (between: number) => {
    const added: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const empty = await hookTime(new NoopSpanProcessor(), between);
      added.push((await hookTime(new ToolwatchSpanProcessor({ policy }), between)) - empty);
    }
    return median(added.slice(2));
  };
  const warm = await measure(0);
  const cold = await measure(9);
  await elsewhere.provider.shutdown();
  return {
    workload: 'time in toolwatch hooks per judged run (µs): back to back / between 9 runs of other work',
    warm: Number(warm.toFixed(1)),
    cold: Number(cold.toFixed(1)),
    'cold / warm': Number((cold / warm).toFixed(2)),
  };
}

/**
 * Where a judged run's added CPU time is spent: inside toolwatch's hooks, or in the rest of
 * the pipeline (the SDK's own span work, the batch processor, the collector), which toolwatch
 * can slow without running: its code and data evict the SDK's from the CPU caches, and what it
 * holds survives collections. The same timer wraps an empty processor and toolwatch, in
 * alternating rounds of one process; the CPU time per run minus the hook time per run is the
 * pipeline's own.
 */
async function outsideHooks() {
  defaultPolicy ??= benchPolicy();
  const policy = defaultPolicy;
  const oneRound = async (inner: SpanProcessor) => {
    const timed = new TimedProcessor(inner);
    const provider = new BasicTracerProvider({
      spanProcessors: [timed, new BatchSpanProcessor(new CountingExporter())],
    });
    const tracer = provider.getTracer('bench');
    const cpuStarted = process.cpuUsage();
    for (let i = 0; i < RUNS_PER_ROUND; i++) {
      agentRun(tracer);
      if (i % YIELD_EVERY_RUNS === YIELD_EVERY_RUNS - 1) await tick();
    }
    await provider.forceFlush();
    const cpu = process.cpuUsage(cpuStarted);
    await provider.shutdown();
    const cpuPerRun = (cpu.user + cpu.system) / RUNS_PER_ROUND;
    const hooksPerRun = (timed.spent * 1000) / RUNS_PER_ROUND;
    return { cpuPerRun, hooksPerRun, outside: cpuPerRun - hooksPerRun };
  };
  await oneRound(new NoopSpanProcessor());
  await oneRound(new ToolwatchSpanProcessor({ policy }));
  const empty: Array<Awaited<ReturnType<typeof oneRound>>> = [];
  const tw: Array<Awaited<ReturnType<typeof oneRound>>> = [];
  for (let r = 0; r < ROUNDS; r++) {
    if (r % 2 === 0) {
      empty.push(await oneRound(new NoopSpanProcessor()));
      tw.push(await oneRound(new ToolwatchSpanProcessor({ policy })));
    } else {
      tw.push(await oneRound(new ToolwatchSpanProcessor({ policy })));
      empty.push(await oneRound(new NoopSpanProcessor()));
    }
  }
  const m = (rs: Array<Awaited<ReturnType<typeof oneRound>>>, k: 'cpuPerRun' | 'hooksPerRun' | 'outside') =>
    median(rs.map((r) => r[k]));
  const f = (n: number) => n.toFixed(1);
  return {
    workload:
      'judged run, µs of CPU: inside the hooks / in the rest of the pipeline (empty processor → toolwatch)',
    'CPU per run': `${f(m(empty, 'cpuPerRun'))} → ${f(m(tw, 'cpuPerRun'))}`,
    'in the hooks': `${f(m(empty, 'hooksPerRun'))} → ${f(m(tw, 'hooksPerRun'))}`,
    'rest of the pipeline': `${f(m(empty, 'outside'))} → ${f(m(tw, 'outside'))}`,
    'added outside the hooks': Number(median(tw.map((t, i) => t.outside - empty[i]!.outside)).toFixed(1)),
  };
}

/** Times a span processor's hooks apart for runs in and out of a sample (by trace id, as the policy decides). */
class SplitTimedProcessor implements SpanProcessor {
  /** [out of the sample, in it] */
  readonly spent = [0, 0];
  readonly runs = [0, 0];
  constructor(
    private readonly _inner: SpanProcessor,
    private readonly _ratio: number,
  ) {}
  private _bucket(span: ReadableSpan): number {
    return isSampled(span.spanContext().traceId, this._ratio) ? 1 : 0;
  }
  onStart(span: Parameters<SpanProcessor['onStart']>[0], context: Context): void {
    const k = this._bucket(span);
    const t = performance.now();
    this._inner.onStart(span, context);
    this.spent[k]! += performance.now() - t;
  }
  onEnding(span: Parameters<NonNullable<SpanProcessor['onEnding']>>[0]): void {
    const k = this._bucket(span);
    const t = performance.now();
    this._inner.onEnding?.(span);
    this.spent[k]! += performance.now() - t;
    if (span.parentSpanContext === undefined) this.runs[k]!++;
  }
  onEnd(span: ReadableSpan): void {
    const k = this._bucket(span);
    const t = performance.now();
    this._inner.onEnd(span);
    this.spent[k]! += performance.now() - t;
  }
  forceFlush(): Promise<void> {
    return this._inner.forceFlush();
  }
  shutdown(): Promise<void> {
    return this._inner.shutdown();
  }
}

/**
 * Where the sampled row's cost goes: time in toolwatch's hooks per run out of the sample and
 * per judged run, in one pipeline with `sampling.ratio` 0.1 (minus an empty processor's under
 * the same timer), against judged runs back to back (every run judged). A judged run that
 * comes between runs out of the sample runs its judging code cold.
 */
async function sampledSplit() {
  const hookTime = async (inner: SpanProcessor, ratio: number) => {
    const timed = new SplitTimedProcessor(inner, ratio);
    const provider = new BasicTracerProvider({
      spanProcessors: [timed, new BatchSpanProcessor(new CountingExporter())],
    });
    const tracer = provider.getTracer('bench');
    for (let i = 0; i < RUNS_PER_ROUND * 2; i++) {
      agentRun(tracer);
      if (i % YIELD_EVERY_RUNS === YIELD_EVERY_RUNS - 1) await tick();
    }
    await provider.forceFlush();
    await provider.shutdown();
    const per = (k: number) => (timed.runs[k]! === 0 ? 0 : (timed.spent[k]! * 1000) / timed.runs[k]!);
    return [per(0), per(1)] as const;
  };
  const tenth = benchPolicy(0.1);
  defaultPolicy ??= benchPolicy();
  const all = defaultPolicy;
  const out: number[] = [];
  const judged: number[] = [];
  const everyRun: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const [emptyOut, emptyIn] = await hookTime(new NoopSpanProcessor(), 0.1);
    const [twOut, twIn] = await hookTime(new ToolwatchSpanProcessor({ policy: tenth }), 0.1);
    const [, allIn] = await hookTime(new ToolwatchSpanProcessor({ policy: all }), 1);
    const [, emptyAll] = await hookTime(new NoopSpanProcessor(), 1);
    out.push(twOut - emptyOut);
    judged.push(twIn - emptyIn);
    everyRun.push(allIn - emptyAll);
  }
  const m = (values: number[]) => Number(median(values.slice(2)).toFixed(1));
  return {
    workload: 'sampling 0.1: time in toolwatch hooks per run (µs)',
    'run out of the sample': m(out),
    'judged run, between runs out of the sample': m(judged),
    'judged run, every run judged': m(everyRun),
    'weighted per run (0.9 × out + 0.1 × judged)': Number((0.9 * m(out) + 0.1 * m(judged)).toFixed(1)),
  };
}

/** OTLP/protobuf bytes one agent run exports, without and with toolwatch (its verdicts and records are exported too). */
async function exportedBytes(options: BenchOptions): Promise<Record<string, string>> {
  const perRun = async (withToolwatch: boolean) => {
    const p = pipeline(withToolwatch, { ...options, serializing: true });
    for (let i = 0; i < 1000; i++) {
      agentRun(p.tracer);
      // As in the throughput rounds: the batch processor exports as it goes, and drops nothing.
      if (i % YIELD_EVERY_RUNS === YIELD_EVERY_RUNS - 1) await tick();
    }
    await p.provider.forceFlush();
    if (p.exporter.count !== 1000 * SPANS_PER_RUN)
      throw new Error(`spans were dropped: ${p.exporter.count} exported`);
    const bytes = (p.exporter as SerializingExporter).bytes / 1000;
    await p.provider.shutdown();
    return bytes;
  };
  const base = await perRun(false);
  const tw = await perRun(true);
  return {
    'OTLP bytes per run (baseline → toolwatch)': `${Math.round(base)} → ${Math.round(tw)} (+${((tw / base - 1) * 100).toFixed(0)} %)`,
  };
}

async function memory(
  withToolwatch: boolean,
  totalSpans: number,
  options: Partial<ToolwatchSpanProcessorOptions>,
) {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  await tick();
  const startHeap = process.memoryUsage().heapUsed;
  let peak = startHeap;
  const p = pipeline(withToolwatch, options);
  const runs = Math.ceil(totalSpans / SPANS_PER_RUN);
  let maxHeld = 0;
  for (let i = 0; i < runs; i++) {
    // Every tenth root never ends.
    agentRun(p.tracer, i % 10 !== 9);
    if (i % YIELD_EVERY_RUNS === YIELD_EVERY_RUNS - 1) {
      await tick();
      if (i % 256 === 255) {
        peak = Math.max(peak, process.memoryUsage().heapUsed);
        maxHeld = Math.max(maxHeld, p.processor?.['_buffer'].size ?? 0);
      }
    }
  }
  await p.provider.forceFlush();
  peak = Math.max(peak, process.memoryUsage().heapUsed);
  const held = p.processor?.['_buffer'].size ?? 0;
  await p.provider.shutdown();
  return { growthMb: (peak - startHeap) / 2 ** 20, held, maxHeld, exported: p.exporter.count };
}

/**
 * What `checkToolCall` costs where a framework calls it: inside each tool span of the bench's
 * run (the AI SDK's `execute`), against the bench policy with its rule guarded, metrics recorded.
 * Each call is timed alone (hrtime), the timer's own cost (an empty timed section) subtracted.
 * The run's expected tools are two of its five: its three other calls are denied (unexpected),
 * and a denial writes its attributes and event on the tool span.
 */
async function guardCost(runs: number) {
  const allowed: number[] = [];
  const denied: number[] = [];
  const base = benchPolicy();
  const policy = definePolicy({
    rules: base.rules.map((rule) => ({ ...rule, guard: { mode: 'enforce' as const } })),
  });
  const metrics = new MeterProvider({
    readers: [
      new PeriodicExportingMetricReader({
        exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
        exportIntervalMillis: 3_600_000,
      }),
    ],
  });
  const processor = new ToolwatchSpanProcessor({ policy, meterProvider: metrics });
  const provider = new BasicTracerProvider({
    spanProcessors: [processor, new BatchSpanProcessor(new CountingExporter())],
  });
  const tracer = provider.getTracer('bench');
  const args = TOOLS.map((_, n) => ({ order_id: 'A1024', include_history: true, n }));
  const overhead: number[] = [];
  for (let i = 0; i < runs; i++) {
    const agent = startAgent(tracer);
    let tool = 0;
    for (let turn = 0; turn < 4; turn++) {
      const llm = startLlm(tracer, agent);
      for (let h = 0; h < 2; h++) startHttp(tracer, llm).end();
      llm.end();
      const toolsThisTurn = turn === 3 ? 0 : 2;
      for (let t = 0; t < toolsThisTurn; t++, tool++) {
        const span = startTool(tracer, agent, tool);
        const context = under(span);
        const t0 = process.hrtime.bigint();
        const decision = processor.checkToolCall({ tool: TOOLS[tool]!, arguments: args[tool] }, context);
        const t1 = process.hrtime.bigint();
        const t2 = process.hrtime.bigint();
        overhead.push(Number(process.hrtime.bigint() - t2) / 1000);
        (decision.allowed ? allowed : denied).push(Number(t1 - t0) / 1000);
        for (let d = 0; d < 2; d++) startDb(tracer, span).end();
        span.setAttribute('gen_ai.tool.call.result', TOOL_RESULT);
        span.end();
      }
    }
    agent.end();
    if (i % YIELD_EVERY_RUNS === YIELD_EVERY_RUNS - 1) await tick();
  }
  await provider.shutdown();
  await metrics.shutdown();
  // The first runs warm the code up; the rest are what an application sees.
  const warm = (values: number[]) => values.slice(Math.floor(values.length / 10));
  const timer = median(warm(overhead));
  const net = (values: number[]) => warm(values).map((v) => Math.max(0, v - timer));
  return { allowed: net(allowed), denied: net(denied), timer };
}

async function misuseLatency(samples: number) {
  const startLatencies: number[] = [];
  const endLatencies: number[] = [];
  let pending: { t0: bigint; into: number[] } | undefined;
  const onMisuse = (event: MisuseEvent) => {
    const t1 = process.hrtime.bigint();
    if (pending && (event.kind === 'forbidden' || event.kind === 'repeated_call')) {
      pending.into.push(Number(t1 - pending.t0) / 1000);
      pending = undefined;
    }
  };
  const policy = definePolicy({
    rules: [
      {
        name: 'refunds',
        scorers: [
          trajectory({
            expectedTools: ['get_order_detail'],
            forbiddenTools: ['submit_refund'],
            maxRepeats: 1,
          }),
        ],
      },
    ],
  });
  const exporter = new CountingExporter();
  const processor = new ToolwatchSpanProcessor({ policy, onMisuse });
  const provider = new BasicTracerProvider({ spanProcessors: [processor, new BatchSpanProcessor(exporter)] });
  const tracer = provider.getTracer('bench');
  const toolAttributes = (name: string) => ({
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': name,
    'gen_ai.tool.call.arguments': '{"order_id":"A1024"}',
  });
  for (let i = 0; i < samples; i++) {
    const agent = tracer.startSpan('invoke_agent refund-agent', {
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'refund-agent' },
    });
    tracer
      .startSpan(
        'execute_tool get_order_detail',
        { attributes: toolAttributes('get_order_detail') },
        under(agent),
      )
      .end();
    // Forbidden: known when the span starts.
    pending = { t0: process.hrtime.bigint(), into: startLatencies };
    tracer
      .startSpan('execute_tool submit_refund', { attributes: toolAttributes('submit_refund') }, under(agent))
      .end();
    // Repeated: the same call a second time, known when it ends.
    const repeat = tracer.startSpan(
      'execute_tool get_order_detail',
      { attributes: toolAttributes('get_order_detail') },
      under(agent),
    );
    pending = { t0: process.hrtime.bigint(), into: endLatencies };
    repeat.end();
    pending = undefined;
    agent.end();
    if (i % YIELD_EVERY_RUNS === YIELD_EVERY_RUNS - 1) await tick();
  }
  await provider.shutdown();
  return { startLatencies, endLatencies };
}

/** Where an agent run's evaluation time goes, each step timed alone on the same run. */
function breakdown() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  agentRun(provider.getTracer('bench'));
  // What the processor keeps: agent, LLM and tool spans (leaf HTTP/DB spans are not kept).
  const kept = exporter
    .getFinishedSpans()
    .filter((s) => !s.name.startsWith('SELECT') && !s.name.startsWith('POST'));
  const likes = kept.map(fromReadableSpan);
  const policy = benchPolicy();
  const rule = policy.rules[0]!;
  const runOf = () => reconstructTrace(likes).runs[0]!;
  // As the processor reads a judged run: facts read ahead, tool values parsed only where the policy's scorers read them.
  const argumentsRead = policyArgumentsRead(policy);
  const readRunInFull = () =>
    reconstructTrace(
      likes,
      likes.map((l) => readAhead(l)),
    ).runs[0]!;
  const readRun = () =>
    reconstructTrace(
      likes,
      likes.map((l) => readAhead(l, argumentsRead !== undefined)),
      argumentsRead,
    ).runs[0]!;
  const agentRunModel = runOf();
  const evaluation = evaluateRunSync(agentRunModel, rule, policy);
  const sink = { addEvent: (_name: string) => undefined, setAttributes: (_attributes: unknown) => undefined };
  const time = (fn: () => unknown, n = 20_000) => {
    for (let i = 0; i < 5000; i++) fn();
    const started = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn();
    return Number((Number(process.hrtime.bigint() - started) / n / 1000).toFixed(1));
  };
  return {
    convert: time(() => kept.map(fromReadableSpan)),
    reconstruct: time(runOf),
    readInFull: time(readRunInFull),
    readAndReconstruct: time(readRun),
    evaluate: time(() => evaluateRunSync(agentRunModel, rule, policy)),
    emit: time(() => {
      sink.setAttributes(verdictAttributes(evaluation.verdict));
      addEvaluationEvents(sink, evaluation.verdict.results, policy.redact);
    }),
  };
}

/** The peers' processors (bench/peers, installed on demand), each with a no-op exporter of its own. */
async function loadPeers(): Promise<Array<{ label: string; make: () => SpanProcessor }> | string> {
  const dir = join(dirname(fileURLToPath(import.meta.url)), 'peers');
  try {
    if (!existsSync(join(dir, 'node_modules'))) {
      execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], {
        cwd: dir,
        stdio: 'ignore',
      });
    }
    const require = createRequire(join(dir, 'package.json'));
    const load = async (name: string) => import(pathToFileURL(require.resolve(name)).href);
    const langfuse = await load('@langfuse/otel');
    const openInference = await load('@arizeai/openinference-vercel');
    const traceloop = await load('@traceloop/node-server-sdk');
    const versions = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).dependencies as Record<
      string,
      string
    >;
    const exporter = () => new CountingExporter();
    return [
      {
        label: `Langfuse LangfuseSpanProcessor (@langfuse/otel ${versions['@langfuse/otel']}, batched)`,
        make: () => new langfuse.LangfuseSpanProcessor({ exporter: exporter(), exportMode: 'batched' }),
      },
      {
        label: `OpenInference OpenInferenceBatchSpanProcessor (@arizeai/openinference-vercel ${versions['@arizeai/openinference-vercel']})`,
        make: () => new openInference.OpenInferenceBatchSpanProcessor({ exporter: exporter() }),
      },
      {
        label: `Traceloop createSpanProcessor (@traceloop/node-server-sdk ${versions['@traceloop/node-server-sdk']})`,
        make: () => traceloop.createSpanProcessor({ exporter: exporter() }),
      },
      {
        label: 'a plain SimpleSpanProcessor (no-op exporter)',
        make: () => new SimpleSpanProcessor(exporter()),
      },
    ];
  } catch (error) {
    return `peers not measured: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/**
 * `TOOLWATCH_BENCH_ROWS=judged,sampled npm run bench -- processor` measures only those rows
 * (judged, cold, sampled, split, outside, messages, async, nomatch, ordinary, floor, metrics, exported, peers, breakdown, memory, misuse, guard): a
 * quicker loop while working on one path. All rows by default.
 */
const ROW_FILTER = process.env.TOOLWATCH_BENCH_ROWS?.split(',').map((r) => r.trim());
const wanted = (row: string) => ROW_FILTER === undefined || ROW_FILTER.includes(row);

export async function run(): Promise<BenchReport> {
  const agent = wanted('judged')
    ? await throughput('agent runs judged (31 spans, 3 scorers)', (t) => agentRun(t), 0.75)
    : undefined;
  const cold = wanted('cold') ? await coldJudging() : undefined;
  const tenth = benchPolicy(0.1);
  const sampled = wanted('sampled')
    ? await throughput('agent runs, policy sampling 0.1', (t) => agentRun(t), 0.9, { policy: tenth })
    : undefined;
  const split = wanted('split') ? await sampledSplit() : undefined;
  const outside = wanted('outside') ? await outsideHooks() : undefined;
  // Not the targets' workload: the same runs with the messages real frameworks record.
  const withMessages = wanted('messages')
    ? await throughput('agent runs with messages, judged', agentRunWithMessages, undefined)
    : undefined;
  const withMessagesSampled = wanted('messages')
    ? await throughput('agent runs with messages, sampling 0.1', agentRunWithMessages, undefined, {
        policy: tenth,
      })
    : undefined;
  const concurrent = wanted('async')
    ? await throughput(
        `agent runs judged, ${CONCURRENT_RUNS} concurrent async runs`,
        { concurrent: CONCURRENT_RUNS, run: agentRunAsync },
        0.75,
      )
    : undefined;
  // A rule for another agent: what following agent traces costs by itself.
  const noMatch = definePolicy({
    rules: [{ name: 'other', match: { agent: 'billing-*' }, scorers: [toolOrder({ expectedTool: 'x' })] }],
  });
  const tracking = wanted('nomatch')
    ? await throughput('agent runs, no rule matches them', (t) => agentRun(t), undefined, { policy: noMatch })
    : undefined;
  const ordinary = wanted('ordinary')
    ? await throughput('ordinary spans only', ordinaryRequest, 0.97)
    : undefined;
  const floor = wanted('floor')
    ? await throughput('ordinary spans, NoopSpanProcessor in its place', ordinaryRequest, undefined, {
        noopInstead: true,
      })
    : undefined;
  // The targets' rows record no metrics (no meterProvider); deployed, toolwatch records them.
  const withMetrics = wanted('metrics')
    ? await throughput(
        'agent runs judged, metrics recorded (MeterProvider + reader)',
        (t) => agentRun(t),
        undefined,
        {
          metrics: true,
        },
      )
    : undefined;
  const sampledWithMetrics = wanted('metrics')
    ? await throughput('agent runs, sampling 0.1, metrics recorded', (t) => agentRun(t), undefined, {
        metrics: true,
        policy: tenth,
      })
    : undefined;
  // Not the targets' baseline: what the same work costs an application that exports its spans.
  const exportedJudged = wanted('exported')
    ? {
        ...(await throughput('exporting OTLP/protobuf: agent runs judged', (t) => agentRun(t), undefined, {
          serializing: true,
        })),
        ...(await exportedBytes({})),
      }
    : undefined;
  const exportedSampled = wanted('exported')
    ? {
        ...(await throughput(
          'exporting OTLP/protobuf: agent runs, sampling 0.1',
          (t) => agentRun(t),
          undefined,
          {
            serializing: true,
            policy: tenth,
          },
        )),
        ...(await exportedBytes({ policy: tenth })),
      }
    : undefined;
  const peers = wanted('peers') ? await loadPeers() : 'peers not measured (TOOLWATCH_BENCH_ROWS)';
  const peerRows: BenchReport['rows'] = [];
  if (typeof peers !== 'string') {
    for (const peer of peers) {
      peerRows.push(
        await throughput(`peer: ${peer.label}, agent runs`, (t) => agentRun(t), undefined, {
          peer: peer.make,
        }),
      );
    }
  }
  const parts = wanted('breakdown') ? breakdown() : undefined;

  const bound = { maxTraces: 1000, maxSpansPerTrace: 256, traceTtlMs: 2000 };
  const memBase = wanted('memory') ? await memory(false, 1_000_000, {}) : undefined;
  const memTw = wanted('memory') ? await memory(true, 1_000_000, bound) : undefined;

  const misuse = wanted('misuse') ? await misuseLatency(2000) : undefined;
  const guard = wanted('guard') ? await guardCost(3000) : undefined;
  const rows: BenchReport['rows'] = [];
  for (const row of [
    agent,
    sampled,
    concurrent,
    tracking,
    ordinary,
    floor,
    withMetrics,
    sampledWithMetrics,
    withMessages,
    withMessagesSampled,
    exportedJudged,
    exportedSampled,
  ])
    if (row) rows.push(row);
  rows.push(...peerRows);
  if (cold) rows.push(cold);
  if (split) rows.push(split);
  if (outside) rows.push(outside);
  if (parts) {
    rows.push({
      workload: 'per agent run, in isolation (µs)',
      'span conversion': parts.convert,
      reconstructTrace: parts.reconstruct,
      'facts read ahead + reconstructTrace, every tool value parsed': parts.readInFull,
      'the same, tool values parsed only where the scorers read them (as the processor)':
        parts.readAndReconstruct,
      'evaluateRunSync (3 scorers)': parts.evaluate,
      'emission (attrs + 3 events)': parts.emit,
    });
  }
  if (memBase && memTw) {
    rows.push({
      workload: '1,000,000 spans, 10% of roots never end',
      'baseline peak heap growth MB': Number(memBase.growthMb.toFixed(1)),
      'toolwatch peak heap growth MB': Number(memTw.growthMb.toFixed(1)),
      'traces held (max seen / at end)': `${memTw.maxHeld} / ${memTw.held}`,
      bound: `maxTraces ${bound.maxTraces}, maxSpansPerTrace ${bound.maxSpansPerTrace}, traceTtlMs ${bound.traceTtlMs}`,
      'spans exported (baseline / toolwatch)': `${memBase.exported} / ${memTw.exported}`,
    });
  }
  if (misuse) {
    rows.push(
      {
        workload: 'misuse latency, forbidden tool (span start → onMisuse)',
        'median µs': Number(median(misuse.startLatencies).toFixed(1)),
        'p99 µs': Number(percentile(misuse.startLatencies, 0.99).toFixed(1)),
        samples: misuse.startLatencies.length,
      },
      {
        workload: 'misuse latency, repeated call (span end → onMisuse)',
        'median µs': Number(median(misuse.endLatencies).toFixed(1)),
        'p99 µs': Number(percentile(misuse.endLatencies, 0.99).toFixed(1)),
        samples: misuse.endLatencies.length,
      },
    );
  }
  if (guard) {
    for (const [label, values] of [
      ['allowed', guard.allowed],
      ['denied (unexpected tool; decision written on the span)', guard.denied],
    ] as const) {
      rows.push({
        workload: `checkToolCall inside the tool span of the bench's run, ${label}`,
        'median µs': Number(median(values).toFixed(2)),
        'p99 µs': Number(percentile(values, 0.99).toFixed(2)),
        samples: values.length,
        'timer µs (subtracted)': Number(guard.timer.toFixed(2)),
      });
    }
  }
  return {
    name: 'processor',
    rows,
    notes: [
      `Throughput: ${ROUNDS} pairs of rounds (baseline and toolwatch back to back, order alternating) of ${RUNS_PER_ROUND} runs (${RUNS_PER_ROUND * SPANS_PER_RUN} spans), each a fresh BasicTracerProvider + BatchSpanProcessor + counting no-op exporter; the loop yields every ${YIELD_EVERY_RUNS} runs. "ratio" is the median over pairs of toolwatch/baseline spans per CPU-second of this process (robust to other processes on a shared machine); the wall-clock ratios are shown beside it.`,
      'Scorers: trajectory (with live limits), tool_order, reliability. Every sampled agent run is rebuilt and judged in onEnding; out-of-sample runs get their skipped record and live checks only.',
      `The async row starts ${CONCURRENT_RUNS} runs at once; every span step awaits, so the runs interleave span by span (cold objects at judging time, as in a server).`,
      "The hooks row times toolwatch's hooks (minus an empty processor's under the same timer): per judged run back to back, and with each judged run between 9 runs of the same spans on another pipeline, whose work evicts toolwatch's code and data, as an application's other work does. With sampling, every judged run is such a run.",
      "The sampling-0.1 split row times the hooks the same way, apart for the runs out of the sample and the judged ones of one pipeline, beside a pipeline where every run is judged: how the sampled row's added cost divides, and what a judged run costs when runs out of the sample come between.",
      '"no rule matches them" is a policy whose one rule names another agent: what following agent traces costs by itself. "NoopSpanProcessor in its place" is the floor: what any second span processor costs the SDK.',
      "\"with messages\" rows are the same runs carrying what frameworks record (GenAI semconv JSON): the agent's input, each LLM span's whole conversation so far (a ~1 KB user message, then every turn's tool calls and results) and its output, tool calls joined to their requests by id. Not the targets' workload: what judging costs when the spans carry payloads.",
      '"µs per run added" is the CPU time one 31-span run costs beyond the bare pipeline (medians of the rounds).',
      '"metrics recorded" rows give toolwatch a real MeterProvider with a reader, as a deployment that alerts on its metrics has (the targets\' rows record none); counters are summed in process and read at collection, the score histogram is recorded per result through the SDK.',
      '"exporting OTLP/protobuf" rows are not the targets\' baseline: both pipelines serialise every batch as an OTLP/protobuf request, as the OTLP exporters do before sending (the bytes are dropped, no network). They show what toolwatch adds to an application that exports its spans; the verdict attributes and events it writes are serialised too.',
      typeof peers === 'string'
        ? peers
        : 'Peers: each vendor processor (bench/peers, installed on demand with npm ci there) is added beside the same BatchSpanProcessor, with a no-op exporter of its own and no network, on the same agent runs. They export spans; they do not judge runs.',
      'The isolated per-run steps are hot-loop figures; in the pipeline the same work costs about twice as much (fresh strings to hash and parse, cold span objects, the garbage collection of what a run allocates).',
      'Run through tsx, whose esbuild transform keeps function names: every named function created inside another costs a name definition, so closures built per span or per run cost more here than in compiled output. src/ avoids them on the per-span and per-run paths.',
      'Memory: heapUsed sampled every 256 runs; growth is peak minus the heap at start (after gc when run with --expose-gc). The stuck traces are evicted by TTL or by maxTraces.',
    ],
  };
}
