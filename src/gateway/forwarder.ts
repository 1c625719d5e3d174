import { FieldReader } from '../otlp/protobuf-wire.js';

export interface ForwarderOptions {
  /** OTLP/HTTP trace endpoints (full URLs, e.g. `http://127.0.0.1:4318/v1/traces`); each gets every batch. */
  endpoints: readonly string[];
  /** Extra request headers, e.g. an `authorization` for the next hop. Default none. */
  headers?: Record<string, string>;
  /** Attempts per batch and endpoint before it is dead-lettered. Default 6. */
  maxAttempts?: number;
  /** First retry delay; doubles per attempt with ±20 % jitter. Default 250 ms. */
  initialBackoffMs?: number;
  /** Cap of the retry delay (also of a peer's Retry-After). Default 5,000 ms. */
  maxBackoffMs?: number;
  /** Per-request timeout. Default 10,000 ms. */
  timeoutMs?: number;
  /** Requests in flight per endpoint. Default 4. */
  maxConcurrent?: number;
}

export interface ForwarderEvents {
  forwarded(endpoint: string, spans: number): void;
  retried(endpoint: string, reason: string): void;
  deadLettered(endpoint: string, spans: number, reason: string): void;
  /** Every endpoint is done with a batch (sent or dead-lettered): its spans (and `held` bytes) leave the gateway. */
  settled(spans: number, held: number): void;
}

interface Batch {
  body: Uint8Array;
  spans: number;
  /** What the caller counts as held for these spans, handed back when they settle. */
  held: number;
  remaining: number;
}

interface Job {
  batch: Batch;
  attempt: number;
}

/**
 * Sends OTLP/protobuf batches to every endpoint with retries and backoff. A batch that
 * still fails after `maxAttempts` (or gets a non-retryable answer, or is still queued when
 * `close` gives up) is counted as dead-lettered with the reason: never silently lost.
 *
 * Why not `@opentelemetry/exporter-trace-otlp-http`: it exports SDK `ReadableSpan`s and
 * re-encodes them, which cannot keep received bytes (unknown fields, int vs double,
 * resource and scope exactly as sent); the gateway forwards the bytes it received.
 */
export class Forwarder {
  private readonly _queues = new Map<string, Job[]>();
  private readonly _inFlight = new Map<string, number>();
  private readonly _controllers = new Set<AbortController>();
  /** Jobs waiting out their backoff, so `close` can dead-letter them. */
  private readonly _timers = new Map<NodeJS.Timeout, { endpoint: string; job: Job }>();
  private _pendingSpans = 0;
  private _idleWaiters: (() => void)[] = [];
  private _closed = false;
  /** `authorization` for endpoints given with `user:password@` (fetch refuses such URLs). */
  private readonly _auth = new Map<string, string>();
  private readonly _o: Required<Omit<ForwarderOptions, 'headers'>> & { headers: Record<string, string> };

  constructor(
    options: ForwarderOptions,
    private readonly _events: ForwarderEvents,
  ) {
    this._o = {
      endpoints: options.endpoints.map((e) => this._withoutCredentials(e)),
      headers: options.headers ?? {},
      maxAttempts: options.maxAttempts ?? 6,
      initialBackoffMs: options.initialBackoffMs ?? 250,
      maxBackoffMs: options.maxBackoffMs ?? 5000,
      timeoutMs: options.timeoutMs ?? 10_000,
      maxConcurrent: options.maxConcurrent ?? 4,
    };
    for (const endpoint of this._o.endpoints) {
      this._queues.set(endpoint, []);
      this._inFlight.set(endpoint, 0);
    }
  }

  /**
   * An endpoint as it is sent to and counted: credentials in the URL become a Basic
   * `authorization` header (fetch throws on them, so every batch was dead-lettered) and stay
   * out of the endpoint label (metrics are served without authentication).
   */
  private _withoutCredentials(endpoint: string): string {
    let url: URL;
    try {
      url = new URL(endpoint);
    } catch {
      return endpoint;
    }
    if (!url.username && !url.password) return endpoint;
    const user = decodeURIComponent(url.username);
    const password = decodeURIComponent(url.password);
    url.username = '';
    url.password = '';
    const label = url.toString();
    this._auth.set(label, `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`);
    return label;
  }

  /** Spans handed to `send` and not yet settled on every endpoint. */
  get pendingSpans(): number {
    return this._pendingSpans;
  }

  send(body: Uint8Array, spans: number, held = 0): void {
    if (this._o.endpoints.length === 0) {
      this._events.settled(spans, held);
      return;
    }
    const batch: Batch = { body, spans, held, remaining: this._o.endpoints.length };
    this._pendingSpans += spans;
    for (const endpoint of this._o.endpoints) {
      if (this._closed) this._fail(endpoint, batch, 'shutdown');
      else {
        this._queues.get(endpoint)!.push({ batch, attempt: 0 });
        this._pump(endpoint);
      }
    }
  }

  /** Resolves when nothing is queued, in flight or waiting to retry. */
  idle(): Promise<void> {
    if (this._pendingSpans === 0) return Promise.resolve();
    return new Promise((resolve) => this._idleWaiters.push(resolve));
  }

  /** Waits up to `deadlineMs` for everything to settle, then dead-letters what is left. */
  async close(deadlineMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.idle(), new Promise<void>((r) => (timer = setTimeout(r, timerMs(deadlineMs))))]);
    clearTimeout(timer);
    this._closed = true;
    for (const [t, waiting] of this._timers) {
      clearTimeout(t);
      this._fail(waiting.endpoint, waiting.job.batch, 'shutdown');
    }
    this._timers.clear();
    for (const [endpoint, queue] of this._queues) {
      for (const job of queue.splice(0)) this._fail(endpoint, job.batch, 'shutdown');
    }
    for (const c of this._controllers) c.abort();
    await this.idle();
  }

  private _pump(endpoint: string): void {
    const queue = this._queues.get(endpoint)!;
    while (!this._closed && queue.length > 0 && this._inFlight.get(endpoint)! < this._o.maxConcurrent) {
      const job = queue.shift()!;
      this._inFlight.set(endpoint, this._inFlight.get(endpoint)! + 1);
      void this._attempt(endpoint, job).finally(() => {
        this._inFlight.set(endpoint, this._inFlight.get(endpoint)! - 1);
        this._pump(endpoint);
      });
    }
  }

  private async _attempt(endpoint: string, job: Job): Promise<void> {
    job.attempt++;
    const controller = new AbortController();
    this._controllers.add(controller);
    const timer = setTimeout(() => controller.abort(), timerMs(this._o.timeoutMs));
    let retryReason: string;
    let retryAfterMs: number | undefined;
    try {
      const res = await fetch(endpoint, {
        method: 'POST',
        headers: {
          ...this._o.headers,
          ...(this._auth.has(endpoint) ? { authorization: this._auth.get(endpoint)! } : {}),
          'content-type': 'application/x-protobuf',
        },
        body: job.batch.body,
        signal: controller.signal,
        // Followed, a 301/302/303 turns the POST into a GET without its body: the batch would
        // count as forwarded and be lost. A redirect dead-letters (reason http_3xx) instead.
        redirect: 'manual',
      });
      const answer = await readAnswer(res);
      if (res.ok) {
        // The endpoint may refuse some spans of an accepted request (OTLP partial success):
        // those are dead-lettered, not counted as forwarded.
        const refused = Math.min(job.batch.spans, rejectedSpans(answer, res.headers.get('content-type')));
        if (refused < job.batch.spans) this._events.forwarded(endpoint, job.batch.spans - refused);
        if (refused > 0) this._events.deadLettered(endpoint, refused, 'partial_success');
        this._settle(job.batch);
        return;
      }
      if (![408, 429, 502, 503, 504].includes(res.status)) {
        this._fail(endpoint, job.batch, `http_${res.status}`);
        return;
      }
      retryReason = `http_${res.status}`;
      const header = res.headers.get('retry-after');
      if (header && /^\d+$/.test(header)) retryAfterMs = Number(header) * 1000;
    } catch {
      retryReason = this._closed ? 'shutdown' : controller.signal.aborted ? 'timeout' : 'network';
    } finally {
      clearTimeout(timer);
      this._controllers.delete(controller);
    }
    if (this._closed || job.attempt >= this._o.maxAttempts) {
      this._fail(endpoint, job.batch, this._closed ? 'shutdown' : `retries_exhausted_${retryReason}`);
      return;
    }
    this._events.retried(endpoint, retryReason);
    const backoff = Math.min(this._o.maxBackoffMs, this._o.initialBackoffMs * 2 ** (job.attempt - 1));
    const delay = Math.min(this._o.maxBackoffMs, retryAfterMs ?? backoff * (0.8 + Math.random() * 0.4));
    const t = setTimeout(() => {
      this._timers.delete(t);
      if (this._closed) this._fail(endpoint, job.batch, 'shutdown');
      else {
        this._queues.get(endpoint)!.unshift(job);
        this._pump(endpoint);
      }
    }, timerMs(delay));
    this._timers.set(t, { endpoint, job });
  }

  private _fail(endpoint: string, batch: Batch, reason: string): void {
    this._events.deadLettered(endpoint, batch.spans, reason);
    this._settle(batch);
  }

  private _settle(batch: Batch): void {
    if (--batch.remaining > 0) return;
    this._pendingSpans -= batch.spans;
    this._events.settled(batch.spans, batch.held);
    if (this._pendingSpans === 0) for (const resolve of this._idleWaiters.splice(0)) resolve();
  }
}

/**
 * A delay `setTimeout` keeps: above 2^31 - 1 ms (24.8 days) Node warns and fires after 1 ms,
 * so a drain timeout meant as "wait as long as it takes" dead-lettered everything at once.
 */
function timerMs(ms: number): number {
  return Math.min(Math.max(0, ms), 2 ** 31 - 1);
}

/** An export answer is a few bytes; an upstream sending more (or never ending) is not read on. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * Reads an answer's body up to `MAX_ANSWER_BYTES`, then cancels the rest: a broken upstream's
 * endless body would otherwise be held in memory until the request timeout.
 */
async function readAnswer(res: Response): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  if (!res.body) return new Uint8Array();
  const reader = res.body.getReader();
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > MAX_ANSWER_BYTES) {
        await reader.cancel();
        break;
      }
      parts.push(value);
    }
  } catch {
    // A body cut short: the status line is what counts.
  }
  return Buffer.concat(parts);
}

/**
 * `partial_success.rejected_spans` of an `ExportTraceServiceResponse`, in protobuf or (when
 * the endpoint answers JSON) OTLP/JSON; 0 when absent or unreadable.
 */
function rejectedSpans(answer: Uint8Array, contentType: string | null): number {
  if (answer.length === 0) return 0;
  try {
    if (contentType?.toLowerCase().includes('json')) {
      const body = JSON.parse(Buffer.from(answer).toString('utf8')) as Record<string, unknown>;
      const partial = (body.partialSuccess ?? body.partial_success) as Record<string, unknown> | undefined;
      const n = Number(partial?.rejectedSpans ?? partial?.rejected_spans ?? 0);
      return Number.isSafeInteger(n) && n > 0 ? n : 0;
    }
    for (const r = new FieldReader(answer); r.next(); ) {
      if (r.field !== 1 || !(r.value instanceof Uint8Array)) continue;
      for (const p = new FieldReader(r.value); p.next(); ) {
        if (p.field === 1 && p.wire === 0) {
          const n = Number(p.value);
          return Number.isSafeInteger(n) && n > 0 ? n : 0;
        }
      }
    }
  } catch {
    // Not an export answer: the status line is what counts.
  }
  return 0;
}
