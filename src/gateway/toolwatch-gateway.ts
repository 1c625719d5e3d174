import { spansFromOtlpJson } from '../conventions/from-otlp-json.js';
import { failedScorers } from '../emission/attributes.js';
import { cappedName } from '../emission/capped-name.js';
import { ToolwatchMetrics } from '../emission/metrics.js';
import type { UnmatchedRun } from '../evaluation/evaluate-traces.js';
import { JudgeLimiter } from '../evaluation/judge-limiter.js';
import { otlpJsonFromProtobuf } from '../otlp/otlp-protobuf.js';
import { encodeTraceRequest, type RawSpan, splitTraceRequest } from '../otlp/trace-request-splice.js';
import type { JudgeFunction, Policy, Problem, SpanLike, Verdict } from '../types.js';
import { Forwarder, type ForwarderEvents, type ForwarderOptions } from './forwarder.js';
import { type GatewayCounters, gatewayCounters } from './gateway-counters.js';
import type { GatewayLogger, GatewayLogRecord, VerdictLogging } from './gateway-log.js';
import { GuardService } from './guard-service.js';
import { judgeTraces } from './judge-traces.js';
import { PrometheusRegistry } from './prometheus-registry.js';
import { type BufferedTrace, type Completion, listedConflicts, TraceAssembler } from './trace-assembler.js';

export interface ToolwatchGatewayOptions {
  policy: Policy;
  /** OTLP/HTTP trace endpoints every judged span is forwarded to. Default none (spans are counted as dropped, reason `no_forward_endpoint`). */
  forward?: readonly string[];
  /** Headers sent with every forwarded request. Default none. */
  forwardHeaders?: Record<string, string>;
  /** Retry, timeout and concurrency of forwarding; see `ForwarderOptions` for defaults. */
  forwarding?: Omit<ForwarderOptions, 'endpoints' | 'headers'>;
  /** Quiet time after the last span of a trace before it is judged (docs/gateway.md). Default 2,000 ms. */
  decisionWaitMs?: number;
  /** Longest a trace is held from its first span. Default 30,000 ms. */
  maxWaitMs?: number;
  /** Spans held (buffered, being judged, or being forwarded) before requests are refused with 429 / RESOURCE_EXHAUSTED. Default 200,000. */
  maxHeldSpans?: number;
  /**
   * Bytes of the held spans as received (span messages with their share of the resource and
   * scope) before requests are refused with 429 / RESOURCE_EXHAUSTED: the span limit alone
   * lets large spans hold any amount of memory. The heap holds about 6 times this (decoded
   * spans for judging). Default 128 MiB.
   */
  maxHeldBytes?: number;
  /** Traces buffered before new requests are refused. Default 50,000. */
  maxTraces?: number;
  /** A trace with this many spans is judged at once; later spans pass through as late. Default 10,000. */
  maxSpansPerTrace?: number;
  /** The delay a refused sender is told to wait. Default 1,000 ms. */
  retryAfterMs?: number;
  /**
   * False: decode, assemble and forward without evaluating — a pass-through (and the
   * baseline the gateway bench compares judging against). Default true.
   */
  judging?: boolean;
  /** Judges for `llm_judge` scorers. Default none. */
  judges?: Record<string, JudgeFunction | unknown>;
  /** Judged trace ids remembered so their late spans pass through unjudged. Default 100,000. */
  decidedCacheSize?: number;
  /** Where metrics go. Default a fresh registry (`gateway.registry`). */
  registry?: PrometheusRegistry;
  /** Runs whose guarded calls `POST /v1/guard` keeps (see `GuardService`). Default 10,000. */
  guardRuns?: number;
  /** A guarded run not asked about for this long is forgotten. Default 900,000 ms. */
  guardRunTtlMs?: number;
  /** Clock. Default `Date.now`. */
  now?: () => number;
  /**
   * Where log records go: verdicts (see `logVerdicts`), agent names no rule matched (once
   * each), forwarding that fails or recovers. Default none: the core never writes to the
   * console; `toolwatch serve` writes them to stderr.
   */
  logger?: GatewayLogger;
  /** Which verdicts are logged: `failing` (not passed, or with span id conflicts), `all`, `none`. Default `failing`. */
  logVerdicts?: VerdictLogging;
}

/**
 * Distinct agent names the gateway labels its unmatched-runs metric with and logs once each;
 * further names count under `otel_metric_overflow="true"` (as the SDK caps series), so span
 * data cannot grow the registry or the log without bound.
 */
export const MAX_UNMATCHED_AGENT_NAMES = 1000;

export type IngestResult =
  | { kind: 'accepted'; spans: number; rejectedSpans: number; message: string }
  | { kind: 'exhausted'; retryAfterMs: number; message: string }
  | { kind: 'invalid'; message: string }
  | { kind: 'unavailable'; message: string };

/**
 * The gateway core, transport-free: takes OTLP/protobuf requests, holds spans until their
 * trace is complete, judges it with the one evaluation pipeline, writes verdicts onto the
 * agent spans' bytes and forwards everything. Every accepted span is forwarded, or counted
 * as dead-lettered or dropped with a reason; when full it refuses instead of dropping.
 */
export class ToolwatchGateway {
  readonly registry: PrometheusRegistry;
  readonly metrics: ToolwatchMetrics;
  /** `POST /v1/guard`: tool-call decisions for agents that are not in this process. */
  readonly guard: GuardService;
  /** Decoding problems of recent requests (bounded), for diagnostics. */
  readonly problems: Problem[] = [];
  private readonly _assembler: TraceAssembler;
  private readonly _limiter: JudgeLimiter;
  private readonly _forwarder: Forwarder;
  private readonly _now: () => number;
  private readonly _maxHeld: number;
  private readonly _maxTraces: number;
  private readonly _retryAfterMs: number;
  private _held = 0;
  private _heldBytes = 0;
  private readonly _maxHeldBytes: number;
  private _late: RawSpan[] = [];
  private _judging: Promise<void> = Promise.resolve();
  private _timer: NodeJS.Timeout | undefined;
  private _draining = false;
  /** Agent names seen in runs no rule matched (bounded: `MAX_UNMATCHED_AGENT_NAMES`). */
  private readonly _unmatchedNames = new Set<string>();
  private _unmatchedOverflowLogged = false;
  private readonly _count: GatewayCounters;

  constructor(private readonly _o: ToolwatchGatewayOptions) {
    this._now = _o.now ?? Date.now;
    this._maxHeld = _o.maxHeldSpans ?? 200_000;
    this._maxHeldBytes = _o.maxHeldBytes ?? 128 * 1024 * 1024;
    this._maxTraces = _o.maxTraces ?? 50_000;
    this._retryAfterMs = _o.retryAfterMs ?? 1000;
    this.registry = _o.registry ?? new PrometheusRegistry();
    this._count = gatewayCounters(this.registry);
    this._gaugeHolding();
    this._limiter = new JudgeLimiter(
      { maxPerMinute: _o.policy.judge.maxPerMinute, maxConcurrent: _o.policy.judge.maxConcurrent },
      this._now,
    );
    this.metrics = new ToolwatchMetrics({ meterProvider: this.registry.meterProvider(), policy: _o.policy });
    this.guard = new GuardService({
      policy: _o.policy,
      registry: this.registry,
      metrics: this.metrics,
      now: this._now,
      ...(_o.guardRuns !== undefined ? { maxRuns: _o.guardRuns } : {}),
      ...(_o.guardRunTtlMs !== undefined ? { runTtlMs: _o.guardRunTtlMs } : {}),
    });
    const decisionWait = _o.decisionWaitMs ?? 2000;
    this._assembler = new TraceAssembler({
      decisionWaitMs: decisionWait,
      maxWaitMs: _o.maxWaitMs ?? 30_000,
      maxSpansPerTrace: _o.maxSpansPerTrace ?? 10_000,
      decidedCacheSize: _o.decidedCacheSize ?? 100_000,
    });
    this._forwarder = new Forwarder(
      {
        ..._o.forwarding,
        endpoints: _o.forward ?? [],
        ...(_o.forwardHeaders ? { headers: _o.forwardHeaders } : {}),
      },
      this._forwarderEvents(),
    );
    this._gaugeForwarding();
    this._timer = setInterval(() => this.tick(), Math.max(10, Math.min(250, decisionWait / 4)));
    this._timer.unref();
  }

  /** What the gateway holds, and the process holding it. */
  private _gaugeHolding(): void {
    const r = this.registry;
    r.gauge(
      'toolwatch_gateway_spans_held',
      'Spans accepted and not yet forwarded or dead-lettered.',
      () => this._held,
    );
    r.gauge(
      'toolwatch_gateway_bytes_held',
      'Bytes of the held spans as received (with their share of resource and scope).',
      () => this._heldBytes,
    );
    r.gauge(
      'toolwatch_gateway_traces_buffered',
      'Traces waiting to be complete.',
      () => this._assembler.bufferedTraces,
    );
    r.gauge(
      'toolwatch_gateway_spans_buffered',
      'Spans waiting for their trace to be complete.',
      () => this._assembler.bufferedSpans,
    );
    r.gauge('process_resident_memory_bytes', 'Resident memory of the gateway process.', () =>
      process.memoryUsage.rss(),
    );
    r.gauge('nodejs_heap_used_bytes', 'V8 heap in use.', () => process.memoryUsage().heapUsed);
    r.gauge('toolwatch_gateway_policy_info', 'The policy in use (digest as a label).', () => 1, {
      policy_digest: this._o.policy.digest,
    });
  }

  /**
   * What forwarding reports, counted and logged here; settled batches leave the held totals
   * (the gateway stays their one writer).
   */
  private _forwarderEvents(): ForwarderEvents {
    return {
      forwarded: (endpoint, spans) => this._count.forwarded({ endpoint }, spans),
      retried: (endpoint, reason) => this._count.retries({ endpoint, reason }),
      deadLettered: (endpoint, spans, reason) => this._count.deadLettered({ endpoint, reason }, spans),
      unconfirmed: (endpoint, spans, reason) => this._count.unconfirmed({ endpoint, reason }, spans),
      health: (endpoint, failing, failures, reason) =>
        this._log(
          failing
            ? {
                level: 'warn',
                msg: 'forwarding failing; not ready until the endpoint delivers again',
                attributes: { endpoint, consecutive_failures: failures, last_failure: reason },
              }
            : { level: 'info', msg: 'forwarding delivers again', attributes: { endpoint } },
        ),
      settled: (spans, held) => {
        this._held -= spans;
        this._heldBytes -= held;
        if ((this._o.forward ?? []).length === 0)
          this._count.dropped({ reason: 'no_forward_endpoint' }, spans);
      },
    };
  }

  /** Each endpoint's health and unconfirmed series, and readiness. */
  private _gaugeForwarding(): void {
    const r = this.registry;
    // Created at 0, as ToolwatchMetrics seeds its counters: Prometheus' increase() cannot see a
    // series' first sample, so an alert on the first conflict or unconfirmed batch needs them.
    this._count.conflicts({}, 0);
    for (const endpoint of this._forwarder.endpoints) {
      for (const reason of ['timeout', 'shutdown']) this._count.unconfirmed({ endpoint, reason }, 0);
      r.gauge(
        'toolwatch_gateway_forward_up',
        'Whether an endpoint delivers (0 after --unready-after-failures failed attempts in a row, until one succeeds).',
        () => (this._forwarder.failing(endpoint) ? 0 : 1),
        { endpoint },
      );
      r.gauge(
        'toolwatch_gateway_forward_consecutive_failures',
        'Failed forward attempts in a row, by endpoint (0 after a success).',
        () => this._forwarder.failures(endpoint),
        { endpoint },
      );
    }
    r.gauge('toolwatch_gateway_ready', 'Whether /readyz answers 200 (1) or 503 (0).', () =>
      this.ready ? 1 : 0,
    );
  }

  /**
   * Accepting, below 90 % of `maxHeldSpans` and of `maxHeldBytes`, and every forward endpoint
   * delivering (see `unreadyAfterFailures`): a load balancer that reads readiness moves traffic
   * away before requests start being refused, or accepted only to be dead-lettered.
   */
  get ready(): boolean {
    return (
      !this._draining &&
      this._held < this._maxHeld * 0.9 &&
      this._heldBytes < this._maxHeldBytes * 0.9 &&
      this._forwarder.delivering
    );
  }

  get heldSpans(): number {
    return this._held;
  }

  /** Bytes of the held spans as received (see `maxHeldBytes`). */
  get heldBytes(): number {
    return this._heldBytes;
  }

  /** One OTLP/protobuf `ExportTraceServiceRequest`. Never throws. */
  ingest(bytes: Uint8Array, transport: 'http' | 'grpc'): IngestResult {
    try {
      return this._ingest(bytes, transport);
    } catch (err) {
      this._count.requests({ transport, outcome: 'invalid' });
      return {
        kind: 'invalid',
        message: `undecodable OTLP protobuf: ${err instanceof Error ? err.message : String(err)}`,
      };
    }
  }

  private _ingest(bytes: Uint8Array, transport: 'http' | 'grpc'): IngestResult {
    if (this._draining) {
      this._count.requests({ transport, outcome: 'unavailable' });
      return { kind: 'unavailable', message: 'the gateway is shutting down' };
    }
    const { spans: raw, rejected } = splitTraceRequest(bytes);
    if (rejected.count > 0) this._count.rejected({ reason: 'invalid_span' }, rejected.count);
    const fresh = new Set<string>();
    for (const span of raw) if (!this._assembler.has(span.traceId)) fresh.add(span.traceId);
    const newTraces = fresh.size;
    let size = 0;
    for (const span of raw) size += span.receivedBytes;
    if (raw.length > this._maxHeld || newTraces > this._maxTraces || size > this._maxHeldBytes) {
      // Retrying cannot help a request the gateway could not hold even when empty: refused
      // for good (400 / INVALID_ARGUMENT), so the sender does not retry it forever.
      this._count.requests({ transport, outcome: 'invalid' });
      this._count.rejected({ reason: 'request_too_large' }, raw.length);
      return {
        kind: 'invalid',
        message:
          raw.length > this._maxHeld
            ? `request has ${raw.length} spans, more than the gateway holds (${this._maxHeld}); send smaller batches`
            : newTraces > this._maxTraces
              ? `request has ${newTraces} traces, more than the gateway buffers (${this._maxTraces}); send smaller batches`
              : `request holds ${size} bytes of spans, more than the gateway holds (${this._maxHeldBytes}); send smaller batches`,
      };
    }
    if (
      this._held + raw.length > this._maxHeld ||
      this._heldBytes + size > this._maxHeldBytes ||
      (newTraces > 0 && this._assembler.bufferedTraces + newTraces > this._maxTraces)
    ) {
      this._count.requests({ transport, outcome: 'exhausted' });
      this._count.rejected({ reason: 'buffer_full' }, raw.length);
      return {
        kind: 'exhausted',
        retryAfterMs: this._retryAfterMs,
        message: `gateway full (${this._held} spans and ${this._heldBytes} bytes held, limits ${this._maxHeld} and ${this._maxHeldBytes}); retry later`,
      };
    }
    const decoded = this._decode(bytes);
    const now = this._now();
    this._held += raw.length;
    this._heldBytes += size;
    this._count.received({ transport }, raw.length);
    this._count.requests({ transport, outcome: 'accepted' });
    for (const span of raw) {
      const same = decoded.get(span.traceId + span.spanId);
      // A cursor, not `shift()`: 200,000 copies of one span in a request made shift O(n²).
      const like = same ? same.spans[same.next++] : undefined;
      if (!like) this._count.unjudged();
      const outcome = this._assembler.add(span, like, now);
      if (outcome === 'conflict') this._count.conflicts();
      else if (outcome === 'late') {
        this._count.late();
        this._late.push(span);
      } else if (outcome === 'duplicate') {
        this._held--;
        this._heldBytes -= span.receivedBytes;
        this._count.dropped({ reason: 'duplicate_span' });
      }
    }
    return {
      kind: 'accepted',
      spans: raw.length,
      rejectedSpans: rejected.count,
      message: rejected.count > 0 ? rejected.reason : '',
    };
  }

  /**
   * The request's decoded spans by trace and span id, in request order: spans that share an
   * id each get their own, in the order both lists keep (a map of one span per id paired both
   * raw spans of a reused id with the last one's content).
   */
  private _decode(bytes: Uint8Array): Map<string, { spans: SpanLike[]; next: number }> {
    const problems: Problem[] = [];
    const out = new Map<string, { spans: SpanLike[]; next: number }>();
    for (const span of spansFromOtlpJson(otlpJsonFromProtobuf(bytes), problems)) {
      const key = span.traceId + span.spanId;
      const same = out.get(key);
      if (same) same.spans.push(span);
      else out.set(key, { spans: [span], next: 0 });
    }
    this._keepProblems(problems);
    return out;
  }

  private _keepProblems(problems: readonly Problem[]): void {
    if (problems.length === 0) return;
    // Not `push(...problems)`: a request of 150,000 spans without names made as many
    // arguments, overflowed the stack and got the whole request refused.
    for (let i = Math.max(0, problems.length - 1000); i < problems.length; i++)
      this.problems.push(problems[i]!);
    if (this.problems.length > 1000) this.problems.splice(0, this.problems.length - 1000);
  }

  /** Judges what is due and forwards late spans; runs on a timer, callable by tests. */
  tick(): Promise<void> {
    const due = this._assembler.due(this._now());
    return this._judge(due);
  }

  private _judge(due: { trace: BufferedTrace; completion: Completion }[]): Promise<void> {
    const late = this._late;
    this._late = [];
    if (late.length > 0) this._send(late);
    if (due.length === 0) return this._judging;
    for (const { completion } of due) this._count.traces({ completion });
    const traces = due.map((d) => d.trace);
    // Judging is serialised: verdicts leave in the order traces completed.
    this._judging = this._judging.then(async () => {
      const problems: Problem[] = [];
      if (this._o.judging === false) {
        this._send(traces.flatMap((t) => t.raw));
        return;
      }
      try {
        const { spans, verdicts, unmatched } = await judgeTraces(traces, this._o.policy, {
          ...(this._o.judges ? { judges: this._o.judges } : {}),
          metrics: this.metrics,
          limiter: this._limiter,
          problems,
        });
        for (const v of verdicts)
          this._count.verdicts({ rule: v.rule, passed: v.passed === null ? 'skipped' : String(v.passed) });
        this._send(spans);
        this._logVerdicts(verdicts, traces);
        for (const run of unmatched) this._unmatched(run);
      } catch (err) {
        // A failure of the pipeline must not lose spans: forward them unjudged.
        problems.push({
          code: 'gateway_judge_failed',
          message: err instanceof Error ? err.message : String(err),
        });
        this._send(traces.flatMap((t) => t.raw));
      }
      this._keepProblems(problems);
    });
    return this._judging;
  }

  /** One record per verdict `logVerdicts` asks for. */
  private _logVerdicts(verdicts: readonly Verdict[], traces: readonly BufferedTrace[]): void {
    const which = this._o.logVerdicts ?? 'failing';
    if (!this._o.logger || which === 'none' || verdicts.length === 0) return;
    const conflicts = new Map<string, string[]>();
    for (const t of traces) if (t.conflicts.size > 0) conflicts.set(t.traceId, listedConflicts(t));
    for (const v of verdicts) {
      const conflicting = conflicts.get(v.trace_id);
      // A verdict no scorer judged (passed null) is not a failing one.
      if (which === 'failing' && v.passed !== false && !conflicting) continue;
      this._log({
        level: v.passed !== false && !conflicting ? 'info' : 'warn',
        msg: v.passed === null ? 'verdict not judged' : v.passed ? 'verdict passed' : 'verdict failed',
        attributes: {
          trace_id: v.trace_id,
          span_id: v.span_id,
          agent: v.agent,
          rule: v.rule,
          failed_scorers: failedScorers(v.results),
          ...(conflicting ? { span_id_conflicts: conflicting } : {}),
        },
      });
    }
  }

  /** Counts an outermost run no rule matched, by agent name; the first run of each name is logged. */
  private _unmatched(run: UnmatchedRun): void {
    const name = cappedName(run.agent);
    if (!this._unmatchedNames.has(name)) {
      if (this._unmatchedNames.size >= MAX_UNMATCHED_AGENT_NAMES) {
        this._count.unmatched({ otel_metric_overflow: 'true' });
        if (!this._unmatchedOverflowLogged) {
          this._unmatchedOverflowLogged = true;
          this._log({
            level: 'warn',
            msg: 'more agent names matched no rule than are logged; further names are counted without their name',
            attributes: { limit: MAX_UNMATCHED_AGENT_NAMES },
          });
        }
        return;
      }
      this._unmatchedNames.add(name);
      this._log({
        level: 'warn',
        msg: 'agent run matched no rule (logged once per agent name)',
        attributes: {
          agent: name,
          trace_id: run.trace_id,
          span_id: run.span_id,
          rules: this._o.policy.rules.length,
        },
      });
    }
    this._count.unmatched({ agent: name });
  }

  /** A logger that throws must not stop judging or forwarding. */
  private _log(record: GatewayLogRecord): void {
    try {
      this._o.logger?.(record);
    } catch {
      // The record is lost; the metrics still count what it said.
    }
  }

  private _send(spans: RawSpan[]): void {
    for (let i = 0; i < spans.length; i += 1024) {
      const chunk = spans.slice(i, i + 1024);
      let held = 0;
      for (const span of chunk) held += span.receivedBytes;
      this._forwarder.send(encodeTraceRequest(chunk), chunk.length, held);
    }
  }

  /**
   * Stops accepting, judges every buffered trace as it is, and waits for forwarding to
   * settle (up to `deadlineMs`, after which what is left is dead-lettered, reason `shutdown`).
   */
  async close(deadlineMs = 30_000): Promise<void> {
    if (this._timer) clearInterval(this._timer);
    this._timer = undefined;
    this._draining = true;
    await this._judge(this._assembler.drain());
    await this._forwarder.close(deadlineMs);
  }
}
