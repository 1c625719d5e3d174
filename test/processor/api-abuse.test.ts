/**
 * Hooks never throw, and never need to: the processor's catch-alls (`onStart`, `onEnding`,
 * `onEnd`, the sweep, and the ones around eviction, late runs, judging and emission) report
 * through `diag` what they swallow, and a swallowed exception is a lost verdict. Seeded
 * programs of hostile but legal API use (`test/helpers/api-abuse.ts`) run against two real
 * tracer providers sharing one processor with tiny limits, garbage scorers and throwing
 * callbacks; for every program:
 *
 * 1. no exception reaches the application;
 * 2. no catch-all fires, and nothing in `diag` mentions a `TypeError` or `RangeError`;
 * 3. every agent span gets at most one verdict or `skipped` record per matching rule, and every
 *    verdict `onVerdict` got is on an exported span (in place, or an `evaluate` span linked to it);
 * 4. after `shutdown()` the processor holds nothing (buffer, tombstones, judges, the
 *    `traces_buffered` gauge) and leaves no timer that keeps the process alive;
 * 5. nothing pollutes `Object.prototype`.
 */
import {
  type Attributes,
  type DiagLogger,
  DiagLogLevel,
  diag,
  type TracerProvider,
} from '@opentelemetry/api';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classify } from '../../src/conventions/classify.js';
import { fromReadableSpan } from '../../src/conventions/from-readable-span.js';
import { readTrue } from '../../src/conventions/read-values.js';
import { SpanRole, spanRole } from '../../src/conventions/span-role.js';
import {
  ToolwatchSpanProcessor,
  type ToolwatchSpanProcessorOptions,
} from '../../src/processor/toolwatch-span-processor.js';
import { reliability } from '../../src/scorers/reliability.js';
import { toolCalls } from '../../src/scorers/tool-calls.js';
import { toolOrder } from '../../src/scorers/tool-order.js';
import { trajectory } from '../../src/scorers/trajectory.js';
import { ATTR_TOOLWATCH_FROM_HISTORY } from '../../src/semconv.js';
import type { Rule, Scorer, ScorerResult, SpanLike, Verdict } from '../../src/types.js';
import { runSteps, SHAPES, type Step, step } from '../helpers/api-abuse.js';
import { createMetrics, policyOf } from './harness.js';
import { liveAndOffline } from './live-and-offline.js';
import { startAgent } from './tracing.js';

const RULE = 'toolwatch.evaluation.rule';
const SKIPPED = 'toolwatch.evaluation.skipped';

/** A custom scorer of the public interface, misbehaving as `score` says. */
function custom(name: string, isAsync: boolean, score: () => unknown): Scorer {
  return {
    name,
    kind: 'custom',
    digest: `digest-${name}`,
    async: isAsync,
    ...(isAsync ? { sampling: { ratio: 1 } } : {}),
    config: {},
    score: score as Scorer['score'],
  };
}

const ok = (name: string): ScorerResult => ({
  scorer: name,
  kind: 'custom',
  passed: true,
  score: 1,
  label: 'pass',
  reason: null,
  digest: `digest-${name}`,
  detail: {},
});

const CUSTOM: ReadonlyArray<() => Scorer> = [
  () =>
    custom('throws', false, () => {
      throw new Error('custom scorer exploded');
    }),
  () => custom('returns_null', false, () => null),
  () => custom('weird_label', false, () => ({ ...ok('weird_label'), label: 'weird' })),
  () => custom('nan_score', false, () => ({ ...ok('nan_score'), score: Number.NaN })),
  () => custom('promise_from_sync', false, () => Promise.resolve(ok('promise_from_sync'))),
  () =>
    custom('throwing_getter', false, () => ({
      ...ok('throwing_getter'),
      get label(): string {
        throw new Error('label getter exploded');
      },
    })),
  () =>
    custom('odd_fields', false, () => ({
      ...ok('odd_fields'),
      scorer: { not: 'a string' },
      reason: 'r'.repeat(100_000),
    })),
  () => custom('hangs', true, () => new Promise(() => {})),
  () => custom('rejects', true, () => Promise.reject(new Error('judge exploded'))),
  () => custom('resolves_garbage', true, () => Promise.resolve(undefined)),
  () =>
    custom('throws_before_promise', true, () => {
      throw new Error('judge exploded before its promise');
    }),
];

const RULES: ReadonlyArray<(customs: Scorer[]) => Partial<Rule> & { scorers: Scorer[] }> = [
  () => ({
    name: 'root',
    match: { rootOnly: true },
    scorers: [
      trajectory({
        expectedTools: ['lookup'],
        forbiddenTools: ['delete', '__proto__'],
        maxCalls: 3,
        argConstraints: { lookup: { id: { equals: 1 } } },
      }),
    ],
  }),
  () => ({
    name: 'every',
    match: { agent: '*', rootOnly: false },
    scorers: [
      toolCalls({ expectedTools: ['lookup'], arguments: { lookup: { id: 1 } } }),
      reliability({ expectedToolCalls: ['lookup'] }),
      toolOrder({ expectedToolOrder: ['lookup', 'delete'] }),
      trajectory({ name: 'repeats', maxRepeats: 2 }),
    ],
  }),
  () => ({
    name: 'support',
    match: { agent: 'supp*', rootOnly: false, attributes: { 'gen_ai.agent.name': 'support' } },
    scorers: [trajectory({ forbiddenTools: ['constructor', 'toString'] })],
  }),
  (customs) => ({
    name: 'custom',
    match: { rootOnly: false },
    scorers: customs.length > 0 ? customs : [trajectory({ expectedTools: ['lookup'] })],
  }),
];

const RULE_NAMES = ['root', 'every', 'support', 'custom'];

const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined, freq: 2 });

const configuration = fc.record({
  /** Wrapping mode (`next`), as for SDKs without `onEnding`: a quarter of the programs. */
  wrapping: fc.constantFrom(false, false, false, true),
  maxTraces: optional(fc.integer({ min: 1, max: 4 })),
  maxSpansPerTrace: optional(fc.integer({ min: 1, max: 20 })),
  maxBufferedSpans: optional(fc.integer({ min: 1, max: 40 })),
  maxBufferedBytes: optional(fc.integer({ min: 200, max: 50_000 })),
  traceTtlMs: optional(fc.constantFrom(20, 40)),
  // Never the default (5 s): `forceFlush()` waits for late runs, and the programs flush often.
  lateSpanTimeoutMs: fc.integer({ min: 1, max: 30 }),
  judgeTimeoutMs: fc.constantFrom(5, 20),
  ratio: fc.constantFrom(1, 1, 0.5, 0),
  rules: fc.uniqueArray(fc.nat({ max: RULES.length - 1 }), { minLength: 1, maxLength: 3 }),
  customs: fc.uniqueArray(fc.nat({ max: CUSTOM.length - 1 }), { maxLength: 4 }),
  throwingCallbacks: fc.boolean(),
  /** End every span still open, in start order, before shutting down. */
  finish: fc.boolean(),
});
type Configuration = typeof configuration extends fc.Arbitrary<infer T> ? T : never;

/** What the processor's catch-alls log (problem-log.ts prefixes `toolwatch: `), and its summary of them at shutdown. */
const CATCH_ALL = new RegExp(
  [
    'toolwatch: onStart failed',
    'toolwatch: onEnding failed',
    'toolwatch: onEnd failed',
    'toolwatch: trace eviction failed',
    'toolwatch: giving an evicted trace its records failed',
    'toolwatch: late evaluation failed',
    'toolwatch: judging the ended runs of an unfinished trace failed',
    'toolwatch: evaluating the run of .* failed',
    'toolwatch: pending evaluation failed',
    'toolwatch: delivering judged results failed',
    'toolwatch: emitting the evaluation span failed',
    'toolwatch: (on_start|on_ending|on_end|sweep|evict|late|judge_ended|evaluate|pending|judge_done|emit) happened',
  ].join('|'),
  's',
);
const JS_ERROR = /TypeError|RangeError/;

/** Every `diag` call, as text (arguments included: errors with their name, message and stack). */
function recordDiag(): { lines: string[]; restore: () => void } {
  const lines: string[] = [];
  const text = (arg: unknown): string => {
    if (arg instanceof Error) return `${arg.name}: ${arg.message}\n${arg.stack ?? ''}`;
    try {
      return typeof arg === 'string' ? arg : String(arg);
    } catch {
      return '<unprintable>';
    }
  };
  const log =
    (level: string) =>
    (message: string, ...args: unknown[]) => {
      lines.push(`${level} ${[message, ...args].map(text).join(' ')}`);
    };
  const logger: DiagLogger = {
    error: log('error'),
    warn: log('warn'),
    info: log('info'),
    debug: log('debug'),
    verbose: log('verbose'),
  };
  diag.setLogger(logger, { logLevel: DiagLogLevel.ALL, suppressOverrideMessage: true });
  return { lines, restore: () => diag.disable() };
}

/** Keeps what it exported after shutdown (`InMemorySpanExporter` forgets it then), and refuses spans after. */
class KeepingExporter implements SpanExporter {
  readonly spans: ReadableSpan[] = [];
  private _stopped = false;

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    if (this._stopped) {
      done({ code: ExportResultCode.FAILED });
      return;
    }
    this.spans.push(...spans);
    done({ code: ExportResultCode.SUCCESS });
  }

  async shutdown(): Promise<void> {
    this._stopped = true;
  }
}

/** Refed timers: those that keep the process alive. */
const refedTimers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

interface Internals {
  _buffer: { size: number; held: number; bytes: number; hasTombstones: boolean };
  _judges: { _jobs: Set<unknown>; _work: Set<unknown> };
}

/** What the programs made happen, over all of them: the property must not hold vacuously. */
const seen = {
  programs: 0,
  steps: 0,
  spans: 0,
  verdicts: 0,
  /** `skipped` results by reason. */
  skipped: new Map<string, number>(),
  /** `error` results (custom scorers misbehaving). */
  errors: 0,
  evaluateSpans: 0,
  /** Programs in which spans were dropped (span limits, eviction, after shutdown). */
  dropping: 0,
  /** Agent spans to the hot path that reconstruction does not take for agents (see 3b). */
  disagreements: 0,
  /** Agent spans that replay history (flagged, or below a flagged span): no runs (see 3b). */
  history: 0,
};

/** Runs one program under one configuration; returns every violation found (none: the program held). */
async function check(config: Configuration, steps: readonly Step[]): Promise<string[]> {
  const violations: string[] = [];
  const diagnostics = recordDiag();
  const metrics = createMetrics();
  const timersBefore = refedTimers();
  const verdicts: Verdict[] = [];
  const customs = config.customs.map((i) => CUSTOM[i]!());
  const policy = policyOf(
    config.rules.map((i) => RULES[i]!(customs)),
    { sampling: { ratio: config.ratio }, judge: { maxPerMinute: 1000, maxConcurrent: 2, escalateOn: [] } },
  );
  const exporters = [new KeepingExporter(), new KeepingExporter()];
  const providers: BasicTracerProvider[] = [];
  const tracerProvider = {
    getTracer: (name: string, version?: string) => providers[0]!.getTracer(name, version),
  } as TracerProvider;
  const processor = new ToolwatchSpanProcessor({
    policy,
    meterProvider: metrics.meterProvider,
    tracerProvider,
    judgeTimeoutMs: config.judgeTimeoutMs,
    ...(config.maxTraces === undefined ? {} : { maxTraces: config.maxTraces }),
    ...(config.maxSpansPerTrace === undefined ? {} : { maxSpansPerTrace: config.maxSpansPerTrace }),
    ...(config.maxBufferedSpans === undefined ? {} : { maxBufferedSpans: config.maxBufferedSpans }),
    ...(config.maxBufferedBytes === undefined ? {} : { maxBufferedBytes: config.maxBufferedBytes }),
    ...(config.traceTtlMs === undefined ? {} : { traceTtlMs: config.traceTtlMs }),
    lateSpanTimeoutMs: config.lateSpanTimeoutMs,
    ...(config.wrapping ? { next: new SimpleSpanProcessor(exporters[0]!) } : {}),
    // Every run's record, out of the sample too: checked below against what was exported.
    sampledOutVerdicts: true,
    onVerdict: (verdict) => {
      verdicts.push(verdict);
      if (config.throwingCallbacks) throw new Error('onVerdict callback exploded');
    },
    onMisuse: () => {
      if (config.throwingCallbacks) throw new Error('onMisuse callback exploded');
    },
  });
  for (let i = 0; i < 2; i++) {
    // Wrapping mode, as an SDK without `onEnding` drives it: toolwatch forwards to the exporter.
    const wrapped: SpanProcessor = {
      onStart: (span, ctx) => processor.onStart(span, ctx),
      onEnd: (span) => processor.onEnd(span),
      forceFlush: () => processor.forceFlush(),
      shutdown: () => processor.shutdown(),
    };
    providers.push(
      new BasicTracerProvider({
        spanProcessors: config.wrapping ? [wrapped] : [processor, new SimpleSpanProcessor(exporters[i]!)],
      }),
    );
  }
  const internals = processor as unknown as Internals;
  const settle = async (promise: Promise<unknown>, what: string) => {
    try {
      await promise;
    } catch (error) {
      violations.push(`${what} rejected: ${String(error)}`);
    }
  };
  try {
    const { spans, shapes, endedBeforeShutdown, pending, thrown } = await runSteps(steps, {
      tracers: providers.map((p) => p.getTracer('app')),
      flush: (i) => providers[i]!.forceFlush(),
      shutdown: (i) => providers[i]!.shutdown(),
      sweep: () => (processor as unknown as { _sweep(): void })._sweep(),
    });
    if (thrown !== undefined)
      violations.push(
        `step ${thrown.step} (${JSON.stringify(steps[thrown.step])}) threw: ${String(thrown.error)}`,
      );
    const shutdownCalled = steps.some((s) => s.k === 'shutdown');
    if (config.finish) {
      for (const span of spans) {
        try {
          if (!span.isRecording()) continue;
          if (!shutdownCalled) endedBeforeShutdown.add(span);
          span.end();
        } catch (error) {
          violations.push(`ending an open span threw: ${String(error)}`);
        }
      }
    }
    for (const promise of pending) await settle(promise, 'a flush or shutdown');
    await settle(providers[0]!.shutdown(), 'shutdown');
    await settle(providers[1]!.shutdown(), 'shutdown');

    seen.programs++;
    seen.steps += steps.length;
    seen.spans += spans.length;
    for (const v of verdicts) {
      seen.verdicts++;
      for (const r of v.results) {
        if (r.label === 'skipped')
          seen.skipped.set(r.reason ?? '', (seen.skipped.get(r.reason ?? '') ?? 0) + 1);
        if (r.label === 'error') seen.errors++;
      }
    }
    if (diagnostics.lines.some((line) => line.includes('toolwatch: dropping spans'))) seen.dropping++;

    // 2. No catch-all fired, no JavaScript error in what was said.
    for (const line of diagnostics.lines) {
      if (CATCH_ALL.test(line)) violations.push(`a catch-all fired: ${line.slice(0, 2000)}`);
      else if (JS_ERROR.test(line))
        violations.push(`diag mentions a JavaScript error: ${line.slice(0, 2000)}`);
    }

    // 3. At most one record per agent span and rule; every verdict delivered is exported
    // (a run out of the sample as at most one attribute on its span, and no events).
    const records = new Map<string, number>();
    const sampledOut = new Set<string>();
    for (const v of verdicts) {
      if (v.results.every((r) => r.reason === 'sampled_out'))
        sampledOut.add(`${v.trace_id}/${v.span_id}/${v.rule}`);
      const key = `${v.trace_id}/${v.span_id}/${v.rule}`;
      records.set(key, (records.get(key) ?? 0) + 1);
    }
    for (const [key, count] of records) {
      if (count > 1) violations.push(`${count} records for ${key}`);
    }
    const exported = exporters.flatMap((e) => e.spans);
    const written = new Set<string>();
    for (const span of exported) {
      if (span.attributes[SKIPPED] !== undefined) {
        const toolwatch = Object.keys(span.attributes).filter((key) =>
          key.startsWith('toolwatch.evaluation'),
        );
        if (
          toolwatch.length !== 1 ||
          span.events.some((e) => e.attributes?.['gen_ai.evaluation.score.label'] !== undefined)
        )
          violations.push(`an out-of-sample span carries more than its mark: ${toolwatch.join(', ')}`);
      }
      const rule = span.attributes[RULE];
      if (typeof rule !== 'string') continue;
      const about = isEvaluateSpan(span) ? span.links[0]?.context.spanId : span.spanContext().spanId;
      written.add(`${span.spanContext().traceId}/${about}/${rule}`);
    }
    seen.evaluateSpans += exported.filter(isEvaluateSpan).length;
    for (const key of records.keys()) {
      if (!written.has(key) && !sampledOut.has(key))
        violations.push(`the record for ${key} was delivered but never exported`);
    }

    // 3b. Never nothing: under a rule for every agent run, each agent span that ended while the
    // processor ran gets a verdict or a record. An agent span here is one the hot path
    // (`spanRole`) and reconstruction (`classify`) both take for an agent, at its start and at
    // its end: a span mixing conventions (an OpenInference agent span renamed `ai.toolCall`)
    // can be an agent to the hot path and a tool to reconstruction, and then offline
    // evaluation gives it no record either. Such spans are counted in `seen.disagreements`.
    // Nor is a span that replays history (`toolwatch.from_history`, on it or a span above it,
    // as it ended) a run: history never counts (docs/semantics.md), live or offline, and it
    // gets no record either (counted in `seen.history`).
    const byId = new Map(spans.map((span) => [span.spanContext().spanId, span as unknown as ReadableSpan]));
    for (const rule of config.rules
      .map((i) => RULE_NAMES[i])
      .filter((r) => r === 'every' || r === 'custom')) {
      const recorded = new Set(verdicts.filter((v) => v.rule === rule).map((v) => v.span_id));
      spans.forEach((span, i) => {
        const readable = span as unknown as ReadableSpan;
        const shape = SHAPES[shapes[i]!]!;
        if (!endedBeforeShutdown.has(span) || !isAgent(shape.name, shape.attributes)) return;
        if (!isAgent(readable.name, readable.attributes)) {
          if (spanRole(readable.name, readable.attributes) === SpanRole.AGENT) seen.disagreements++;
          return;
        }
        if (replaysHistory(readable, byId)) {
          seen.history++;
          return;
        }
        const id = span.spanContext().spanId;
        if (!recorded.has(id))
          violations.push(
            `agent span ${id} (${readable.name.slice(0, 60)}) ended while the processor ran and got no ${rule} record`,
          );
      });
    }

    // 4. Nothing held after shutdown, no timer keeping the process alive.
    const buffer = internals._buffer;
    if (buffer.size !== 0 || buffer.held !== 0 || buffer.bytes !== 0 || buffer.hasTombstones)
      violations.push(
        `after shutdown the buffer holds ${buffer.size} traces, ${buffer.held} spans, ${buffer.bytes} bytes, tombstones: ${buffer.hasTombstones}`,
      );
    if (internals._judges._jobs.size !== 0 || internals._judges._work.size !== 0)
      violations.push(
        `after shutdown ${internals._judges._jobs.size} judges and ${internals._judges._work.size} pieces of work are pending`,
      );
    const gauge = (await metrics.collect()).get('toolwatch.processor.traces_buffered');
    const buffered = (gauge?.dataPoints ?? []).reduce((sum, point) => sum + (point.value as number), 0);
    if (buffered !== 0) violations.push(`traces_buffered reads ${buffered} after shutdown`);
    if (refedTimers() > timersBefore)
      violations.push(`${refedTimers() - timersBefore} timers keep the process alive`);

    // 5. No prototype pollution through `__proto__` keys or names.
    if ((Object.prototype as Record<string, unknown>).polluted !== undefined) {
      delete (Object.prototype as Record<string, unknown>).polluted;
      violations.push('Object.prototype was polluted');
    }
  } finally {
    diagnostics.restore();
    await metrics.shutdown();
  }
  return violations;
}

/** The span, or one above it among the program's spans, is flagged as replaying history. */
function replaysHistory(span: ReadableSpan, byId: ReadonlyMap<string, ReadableSpan>): boolean {
  const seenIds = new Set<string>();
  for (let at: ReadableSpan | undefined = span; at !== undefined; ) {
    if (readTrue(at.attributes[ATTR_TOOLWATCH_FROM_HISTORY])) return true;
    const parentId = at.parentSpanContext?.spanId;
    if (parentId === undefined || seenIds.has(parentId)) return false;
    seenIds.add(parentId);
    at = byId.get(parentId);
  }
  return false;
}

/** Both the hot path and reconstruction take the span for an agent. */
function isAgent(name: string, attributes: Attributes): boolean {
  const like: SpanLike = { ...AGENT_PROBE, name, attributes };
  return spanRole(name, attributes) === SpanRole.AGENT && classify(like) === 'agent';
}

const AGENT_PROBE: SpanLike = fromReadableSpan(
  new BasicTracerProvider().getTracer('probe').startSpan('probe') as unknown as ReadableSpan,
);

function isEvaluateSpan(span: ReadableSpan): boolean {
  return span.instrumentationScope.name === 'toolwatch';
}

/** One provider, toolwatch before an exporter that keeps what it got: for the reduced programs. */
function reduced(options: Omit<ToolwatchSpanProcessorOptions, 'tracerProvider' | 'onVerdict'>) {
  const exporter = new KeepingExporter();
  const verdicts: Verdict[] = [];
  let provider: BasicTracerProvider | undefined;
  const processor = new ToolwatchSpanProcessor({
    ...options,
    tracerProvider: { getTracer: (name: string) => provider!.getTracer(name) } as TracerProvider,
    onVerdict: (verdict) => verdicts.push(verdict),
  });
  provider = new BasicTracerProvider({ spanProcessors: [processor, new SimpleSpanProcessor(exporter)] });
  return { provider, processor, tracer: provider.getTracer('app'), exporter, verdicts };
}

describe('the processor under hostile API use', () => {
  it('never throws, never swallows an error, records each run at most once and holds nothing after shutdown', {
    timeout: 600_000,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(
        configuration,
        fc.array(step, { minLength: 1, maxLength: 120, size: 'max' }),
        async (config, steps) => {
          const violations = await check(config, steps);
          expect(violations).toEqual([]);
        },
      ),
      // A program taking 5 s hangs (the longest wait in them is a judge timeout of 20 ms).
      // 1500 programs (about 10 s): at 300 this seed met none of the bugs it found, at 1500 it
      // meets some of them again when their fix is reverted.
      { seed: 20261202, numRuns: 1500, endOnFailure: false, timeout: 5_000 },
    );
    // Not vacuous: the programs made the processor judge, skip, drop, evict, emit evaluate spans
    // and meet misbehaving scorers (loose bounds: this seed does about twice each, the counts
    // moving a little with timers).
    expect(seen.programs).toBe(1500);
    expect(seen.spans).toBeGreaterThan(15_000);
    expect(seen.verdicts).toBeGreaterThan(3000);
    expect(seen.skipped.get('incomplete_trace')).toBeGreaterThan(3000);
    expect(seen.skipped.get('sampled_out')).toBeGreaterThan(1500);
    expect(seen.errors).toBeGreaterThan(400);
    expect(seen.evaluateSpans).toBeGreaterThan(1500);
    expect(seen.dropping).toBeGreaterThan(600);
  });
});

describe('reduced from failing programs', () => {
  it('gives no record to an agent span flagged as replaying history, as offline evaluation gives none', async () => {
    // Found as: start agent "support"; set toolwatch.from_history=true on it; end it. Under a
    // rule for every agent run the oracle wanted a record; but a span replaying history is no
    // run of this trace (docs/semantics.md: history never counts), live or offline.
    const policy = policyOf([{ name: 'custom', match: { rootOnly: false }, scorers: [trajectory({})] }]);
    const { live, offline } = await liveAndOffline(policy, (tracer) => {
      const replayed = startAgent(tracer, 'support');
      replayed.setAttribute(ATTR_TOOLWATCH_FROM_HISTORY, true);
      replayed.end();
      const member = startAgent(tracer, 'support');
      member.end();
    });
    expect(offline.map((v) => v.agent)).toEqual(['support']);
    expect(live).toEqual(offline);
  });

  it('exports the verdict of a run whose wait for late spans ended in the tick the provider shuts down in', async () => {
    // Found as: start agent a; start agent b under a; end a (it waits for b); end b; shutdown().
    // b's end queued a's judging on a microtask and the trace was released meanwhile, so
    // shutdown() did not see the run; it was judged after the exporting processor had shut
    // down: onVerdict got the verdict, no exporter ever did.
    const p = reduced({
      policy: policyOf([{ name: 'root', scorers: [trajectory({ expectedTools: ['lookup'] })] }]),
    });
    const a = startAgent(p.tracer, 'support');
    const b = startAgent(p.tracer, 'support', a);
    a.end();
    b.end();
    await p.provider.shutdown();
    expect(p.verdicts.map((v) => [v.span_id, v.rule, v.passed])).toEqual([
      [a.spanContext().spanId, 'root', false],
    ]);
    const evaluate = p.exporter.spans.filter(isEvaluateSpan);
    expect(evaluate.map((s) => [s.links[0]?.context.spanId, s.attributes[RULE]])).toEqual([
      [a.spanContext().spanId, 'root'],
    ]);
  });
});
