import { FieldReader, ProtoWriter } from './protobuf-wire.js';

/**
 * One span of an OTLP/protobuf `ExportTraceServiceRequest`, kept as the bytes it arrived as,
 * with the envelopes (resource and scope) it arrived in. Re-assembling spans of several
 * requests into one request (`encodeTraceRequest`) therefore changes no byte of any span,
 * resource or scope: only the grouping around them is rebuilt.
 */
export interface RawSpan {
  /** Lower-case hex, 32 characters. */
  traceId: string;
  /** Lower-case hex, 16 characters. */
  spanId: string;
  /** Lower-case hex; empty for a root. */
  parentSpanId: string;
  endTimeUnixNano: bigint;
  /** The `Span` message as received (plus, once judged, the verdict fields appended). */
  bytes: Uint8Array;
  /**
   * Bytes this span holds as received: its message and its share of the resource and scope
   * envelopes it arrived in (a request's spans add up to its envelopes and spans).
   */
  receivedBytes: number;
  resource: Envelope;
  scope: Envelope;
}

/**
 * The fields of a `ResourceSpans` (or `ScopeSpans`) other than its repeated children, as
 * received: the resource (scope), schema URL and any unknown fields.
 */
export interface Envelope {
  bytes: Uint8Array;
  /** Equal bytes ⇔ equal keys: how envelopes from different requests are regrouped. */
  key: string;
}

export interface SplitResult {
  spans: RawSpan[];
  /** Spans that cannot be routed (ids of the wrong length): rejected, with the reason. */
  rejected: { count: number; reason: string };
}

/**
 * Splits a request into spans without decoding attributes. Copies every kept byte range,
 * so the request buffer can be freed while spans wait for their trace to complete.
 * Throws on malformed framing (the caller answers 400 with the message).
 */
export function splitTraceRequest(buf: Uint8Array): SplitResult {
  const spans: RawSpan[] = [];
  const rejected = { count: 0, reason: '' };
  for (const rs = new FieldReader(buf); rs.next(); ) {
    if (rs.field !== 1) continue;
    if (rs.wire !== 2) throw new Error('resource_spans is not length-delimited');
    const resourceBuf = buf.subarray(rs.valueStart, rs.valueEnd);
    const resource = envelopeOf(resourceBuf);
    const firstOfResource = spans.length;
    for (const ss = new FieldReader(resourceBuf); ss.next(); ) {
      if (ss.field !== 2) continue;
      if (ss.wire !== 2) throw new Error('scope_spans is not length-delimited');
      const scopeBuf = resourceBuf.subarray(ss.valueStart, ss.valueEnd);
      const scope = envelopeOf(scopeBuf);
      const firstOfScope = spans.length;
      for (const sp = new FieldReader(scopeBuf); sp.next(); ) {
        if (sp.field !== 2) continue;
        if (sp.wire !== 2) throw new Error('span is not length-delimited');
        const spanBuf = scopeBuf.subarray(sp.valueStart, sp.valueEnd);
        const span = rawSpanOf(spanBuf, resource, scope);
        if (typeof span === 'string') {
          rejected.count++;
          rejected.reason ||= span;
        } else spans.push(span);
      }
      share(spans, firstOfScope, scope.bytes.length);
    }
    share(spans, firstOfResource, resource.bytes.length);
  }
  return { spans, rejected };
}

/** An envelope's bytes spread over the spans that share it, so a request's spans add up to it. */
function share(spans: RawSpan[], from: number, bytes: number): void {
  const n = spans.length - from;
  if (n === 0 || bytes === 0) return;
  const each = Math.floor(bytes / n);
  for (let i = from; i < spans.length; i++) spans[i]!.receivedBytes += each;
  spans[from]!.receivedBytes += bytes - each * n;
}

function rawSpanOf(buf: Uint8Array, resource: Envelope, scope: Envelope): RawSpan | string {
  let traceId: Uint8Array | undefined;
  let spanId: Uint8Array | undefined;
  let parent: Uint8Array | undefined;
  let end = 0n;
  for (const f = new FieldReader(buf); f.next(); ) {
    if (f.field === 1 && f.wire === 2) traceId = buf.subarray(f.valueStart, f.valueEnd);
    else if (f.field === 2 && f.wire === 2) spanId = buf.subarray(f.valueStart, f.valueEnd);
    else if (f.field === 4 && f.wire === 2) parent = buf.subarray(f.valueStart, f.valueEnd);
    else if (f.field === 8 && f.wire === 1) end = f.value as bigint;
  }
  if (traceId?.length !== 16 || isZero(traceId)) return 'span with a trace_id that is not 16 non-zero bytes';
  if (spanId?.length !== 8 || isZero(spanId)) return 'span with a span_id that is not 8 non-zero bytes';
  return {
    traceId: Buffer.from(traceId).toString('hex'),
    spanId: Buffer.from(spanId).toString('hex'),
    parentSpanId: parent && parent.length === 8 ? Buffer.from(parent).toString('hex') : '',
    endTimeUnixNano: end,
    bytes: buf.slice(),
    receivedBytes: buf.length,
    resource,
    scope,
  };
}

function isZero(bytes: Uint8Array): boolean {
  for (const b of bytes) if (b !== 0) return false;
  return true;
}

/** Every field of a message except its repeated children (field 2), bytes copied. */
function envelopeOf(buf: Uint8Array): Envelope {
  const w = new ProtoWriter();
  for (const f = new FieldReader(buf); f.next(); )
    if (f.field !== 2) w.raw(buf.subarray(f.start, f.valueEnd));
  const bytes = w.finish();
  return { bytes, key: Buffer.from(bytes).toString('latin1') };
}

/**
 * One `ExportTraceServiceRequest` holding `spans`, grouped by resource then scope envelope
 * in first-seen order; each span, resource and scope keeps its received bytes.
 */
export function encodeTraceRequest(spans: readonly RawSpan[]): Uint8Array {
  const resources = new Map<
    string,
    { envelope: Envelope; scopes: Map<string, { envelope: Envelope; spans: RawSpan[] }> }
  >();
  for (const span of spans) {
    let r = resources.get(span.resource.key);
    if (!r) {
      r = { envelope: span.resource, scopes: new Map() };
      resources.set(span.resource.key, r);
    }
    let s = r.scopes.get(span.scope.key);
    if (!s) {
      s = { envelope: span.scope, spans: [] };
      r.scopes.set(span.scope.key, s);
    }
    s.spans.push(span);
  }
  const w = new ProtoWriter();
  for (const r of resources.values()) {
    w.message(1, (rw) => {
      rw.raw(r.envelope.bytes);
      for (const s of r.scopes.values()) {
        rw.message(2, (sw) => {
          sw.raw(s.envelope.bytes);
          for (const span of s.spans) sw.bytes(2, span.bytes);
        });
      }
    });
  }
  return w.finish();
}
