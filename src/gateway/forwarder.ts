import {
  type ClientRequest,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
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
  /**
   * Per-request timeout. A request that times out after its whole body was handed to an
   * established connection is not re-sent (the upstream may have it): its spans are counted
   * `unconfirmed`, never delivered twice. Default 10,000 ms.
   */
  timeoutMs?: number;
  /** Requests in flight per endpoint. Default 4. */
  maxConcurrent?: number;
  /**
   * Consecutive failed attempts (an answer other than 2xx, 400 and 413 — those refuse one
   * batch, not the endpoint —, a network error, a timeout) after which
   * an endpoint counts as failing: the gateway is not ready, and while nothing is in flight an
   * empty export is sent every `maxBackoffMs` to learn when it delivers again; the first 2xx
   * ends it. 0: never failing. Default 5.
   */
  unreadyAfterFailures?: number;
}

export interface ForwarderEvents {
  forwarded(endpoint: string, spans: number): void;
  retried(endpoint: string, reason: string): void;
  deadLettered(endpoint: string, spans: number, reason: string): void;
  /**
   * Spans sent whole whose answer never came (`timeout`, or `shutdown` while waiting): the
   * upstream may have them; they are not re-sent. Default: counted nowhere.
   */
  unconfirmed?(endpoint: string, spans: number, reason: string): void;
  /** An endpoint started failing (`unreadyAfterFailures` reached) or delivered again. */
  health?(endpoint: string, failing: boolean, failures: number, reason: string): void;
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

/** How one POST ended. */
type Posted =
  | {
      kind: 'answer';
      status: number;
      retryAfter: string | undefined;
      contentType: string | undefined;
      body: Uint8Array;
    }
  /** No answer. `sent`: the whole body was handed to an established connection first. */
  | { kind: 'error'; sent: boolean; timedOut: boolean };

/** An empty `ExportTraceServiceRequest`: what a failing endpoint is probed with. */
/** Answers about one batch rather than the endpoint: they do not count toward failing. */
const BATCH_REFUSALS = new Set([400, 413]);

const EMPTY_EXPORT = new Uint8Array();

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
  /** Ends each request in flight, so `close` can end them. */
  private readonly _aborts = new Set<() => void>();
  /** Consecutive failed attempts per endpoint (see `unreadyAfterFailures`). */
  private readonly _failures = new Map<string, number>();
  private _probeTimer: NodeJS.Timeout | undefined;
  private readonly _agents = {
    http: new HttpAgent({ keepAlive: true }),
    https: new HttpsAgent({ keepAlive: true }),
  };
  /** Jobs waiting out their backoff, so `close` can dead-letter them. */
  private readonly _timers = new Map<NodeJS.Timeout, { endpoint: string; job: Job }>();
  private _pendingSpans = 0;
  private _idleWaiters: (() => void)[] = [];
  private _closed = false;
  /** `authorization` for endpoints given with `user:password@`, kept out of the endpoint label. */
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
      unreadyAfterFailures: options.unreadyAfterFailures ?? 5,
    };
    for (const endpoint of this._o.endpoints) {
      this._queues.set(endpoint, []);
      this._inFlight.set(endpoint, 0);
      this._failures.set(endpoint, 0);
    }
  }

  /** Consecutive failed attempts of an endpoint. */
  failures(endpoint: string): number {
    return this._failures.get(endpoint) ?? 0;
  }

  /** Whether an endpoint has failed `unreadyAfterFailures` attempts in a row. */
  failing(endpoint: string): boolean {
    const limit = this._o.unreadyAfterFailures;
    return limit > 0 && this.failures(endpoint) >= limit;
  }

  /** The endpoints as sent to and counted (credentials moved to a header). */
  get endpoints(): readonly string[] {
    return this._o.endpoints;
  }

  /** No endpoint failing. */
  get delivering(): boolean {
    return this._o.endpoints.every((e) => !this.failing(e));
  }

  /**
   * An endpoint as it is sent to and counted: credentials in the URL become a Basic
   * `authorization` header and stay out of the endpoint label (metrics are served without
   * authentication).
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

  /**
   * Waits up to `deadlineMs` for everything to settle, then dead-letters what is left (and
   * counts `unconfirmed` what was sent whole and is still waiting for its answer).
   */
  async close(deadlineMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.idle(), new Promise<void>((r) => (timer = setTimeout(r, timerMs(deadlineMs))))]);
    clearTimeout(timer);
    this._closed = true;
    clearInterval(this._probeTimer);
    for (const [t, waiting] of this._timers) {
      clearTimeout(t);
      this._fail(waiting.endpoint, waiting.job.batch, 'shutdown');
    }
    this._timers.clear();
    for (const [endpoint, queue] of this._queues) {
      for (const job of queue.splice(0)) this._fail(endpoint, job.batch, 'shutdown');
    }
    for (const abort of this._aborts) abort();
    await this.idle();
    this._agents.http.destroy();
    this._agents.https.destroy();
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
    const posted = await this._post(endpoint, job.batch.body);
    let retryReason: string;
    let retryAfterMs: number | undefined;
    if (posted.kind === 'answer') {
      // 400 and 413 refuse this batch (a body over the endpoint's limit, content it cannot
      // parse), not every batch: counted as failures, a sender whose batches are refused would
      // take the gateway out of rotation while everyone else's spans are delivered.
      if (!BATCH_REFUSALS.has(posted.status))
        this._health(endpoint, posted.status >= 200 && posted.status < 300, `http_${posted.status}`);
      if (posted.status >= 200 && posted.status < 300) {
        // The endpoint may refuse some spans of an accepted request (OTLP partial success):
        // those are dead-lettered, not counted as forwarded.
        const refused = Math.min(job.batch.spans, rejectedSpans(posted.body, posted.contentType));
        if (refused < job.batch.spans) this._events.forwarded(endpoint, job.batch.spans - refused);
        if (refused > 0) this._events.deadLettered(endpoint, refused, 'partial_success');
        this._settle(job.batch);
        return;
      }
      // A redirect is not followed (a 301/302/303 turns the POST into a GET without its body:
      // the batch would count as forwarded and be lost): like another 4xx, dead-lettered.
      if (![408, 429, 502, 503, 504].includes(posted.status)) {
        this._fail(endpoint, job.batch, `http_${posted.status}`);
        return;
      }
      retryReason = `http_${posted.status}`;
      if (posted.retryAfter && /^\d+$/.test(posted.retryAfter))
        retryAfterMs = Number(posted.retryAfter) * 1000;
    } else {
      const reason = this._closed ? 'shutdown' : posted.timedOut ? 'timeout' : 'network';
      if (!this._closed) this._health(endpoint, false, reason);
      // Sent whole and unanswered: the upstream may have the batch. Re-sending it would deliver
      // it twice and count it dead-lettered though it arrived; it is counted for what it is.
      if (posted.sent && (posted.timedOut || this._closed)) {
        this._events.unconfirmed?.(endpoint, job.batch.spans, reason);
        this._settle(job.batch);
        return;
      }
      retryReason = reason;
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

  /**
   * One POST with `node:http` rather than `fetch`: whether the body was handed whole to an
   * established connection before a timeout decides whether re-sending can duplicate it, and
   * `fetch` does not tell. Never rejects.
   */
  private _post(endpoint: string, body: Uint8Array): Promise<Posted> {
    return new Promise((resolve) => {
      let request: ClientRequest;
      try {
        const url = new URL(endpoint);
        const secure = url.protocol === 'https:';
        request = (secure ? httpsRequest : httpRequest)(url, {
          method: 'POST',
          agent: secure ? this._agents.https : this._agents.http,
          headers: {
            ...this._o.headers,
            ...(this._auth.has(endpoint) ? { authorization: this._auth.get(endpoint)! } : {}),
            'content-type': 'application/x-protobuf',
            'content-length': String(body.length),
          },
        });
      } catch {
        // A URL or header the HTTP client refuses: nothing was sent.
        resolve({ kind: 'error', sent: false, timedOut: false });
        return;
      }
      let finished = false;
      let timedOut = false;
      let sent = false;
      let settled = false;
      const end = (posted: Posted) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this._aborts.delete(abort);
        resolve(posted);
      };
      // Whether the upstream may have the batch is read before the request is destroyed:
      // destroying flushes Node's buffer and fires 'finish' for a body never written. 'finish'
      // comes once the whole body was handed to the kernel on an established connection (or,
      // for TLS, after the handshake): before that, the upstream cannot have the batch.
      const abort = () => {
        sent = finished;
        request.destroy();
      };
      const timer = setTimeout(() => {
        timedOut = true;
        abort();
      }, timerMs(this._o.timeoutMs));
      this._aborts.add(abort);
      request.on('finish', () => {
        finished = true;
      });
      let answered = false;
      const failed = () => {
        if (!answered) end({ kind: 'error', sent, timedOut });
      };
      request.on('error', failed);
      request.on('close', failed);
      request.on('response', (res: IncomingMessage) => {
        answered = true;
        void readAnswer(res).then((answer) =>
          end({
            kind: 'answer',
            status: res.statusCode ?? 0,
            retryAfter: headerOf(res, 'retry-after'),
            contentType: headerOf(res, 'content-type'),
            body: answer,
          }),
        );
      });
      request.end(body);
    });
  }

  /**
   * Counts an attempt for the endpoint's health; reaching `unreadyAfterFailures` or the first
   * success after it is reported, and probing runs while any endpoint is failing.
   */
  private _health(endpoint: string, ok: boolean, reason: string): void {
    const wasFailing = this.failing(endpoint);
    this._failures.set(endpoint, ok ? 0 : this.failures(endpoint) + 1);
    const failing = this.failing(endpoint);
    if (failing !== wasFailing) this._events.health?.(endpoint, failing, this.failures(endpoint), reason);
    if (failing && this._probeTimer === undefined && !this._closed) {
      this._probeTimer = setInterval(() => this._probe(), timerMs(Math.max(1, this._o.maxBackoffMs)));
      this._probeTimer.unref();
    } else if (this._probeTimer !== undefined && this.delivering) {
      clearInterval(this._probeTimer);
      this._probeTimer = undefined;
    }
  }

  /** An empty export to each failing endpoint with nothing in flight or waiting to retry. */
  private _probe(): void {
    for (const endpoint of this._o.endpoints) {
      if (this._closed || !this.failing(endpoint) || this._inFlight.get(endpoint)! > 0) continue;
      if (this._queues.get(endpoint)!.length > 0) continue;
      let waiting = false;
      for (const t of this._timers.values()) waiting ||= t.endpoint === endpoint;
      if (waiting) continue;
      this._inFlight.set(endpoint, 1);
      void this._post(endpoint, EMPTY_EXPORT).then((posted) => {
        this._inFlight.set(endpoint, this._inFlight.get(endpoint)! - 1);
        if (this._closed) return;
        const ok = posted.kind === 'answer' && posted.status >= 200 && posted.status < 300;
        this._health(
          endpoint,
          ok,
          posted.kind === 'answer' ? `http_${posted.status}` : posted.timedOut ? 'timeout' : 'network',
        );
        this._pump(endpoint);
      });
    }
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
 * Reads an answer's body up to `MAX_ANSWER_BYTES`, then stops reading: a broken upstream's
 * endless body would otherwise be held in memory until the request timeout. Never rejects.
 */
function readAnswer(res: IncomingMessage): Promise<Uint8Array> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let size = 0;
    const done = () => resolve(Buffer.concat(parts));
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_ANSWER_BYTES) {
        res.destroy();
        done();
        return;
      }
      parts.push(chunk);
    });
    res.on('end', done);
    // A body cut short: the status line is what counts.
    res.on('error', done);
    res.on('close', done);
  });
}

function headerOf(res: IncomingMessage, name: string): string | undefined {
  const value = res.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * `partial_success.rejected_spans` of an `ExportTraceServiceResponse`, in protobuf or (when
 * the endpoint answers JSON) OTLP/JSON; 0 when absent or unreadable.
 */
function rejectedSpans(answer: Uint8Array, contentType: string | undefined): number {
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
