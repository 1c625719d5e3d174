import type { Problem, SpanEventLike, SpanLike, StatusCode } from '../types.js';
import { isRecord, parseJson } from './read-values.js';

/**
 * Decodes OTLP/JSON (an `ExportTraceServiceRequest` object or its JSON text) into spans.
 *
 * Accepts what real senders write: hex ids (the OTLP/JSON rule) and base64 ids (the
 * generic protobuf-JSON mapping), camelCase and snake_case keys, `kind`/`status.code` as
 * numbers or enum names, 64-bit integers as strings or numbers, and every AnyValue. Also
 * accepts an array of requests and JSON Lines text (one request per line, as the
 * Collector's file exporter writes). Spans or attributes that cannot be read are recorded
 * in `problems` and skipped; nothing throws.
 */
export function spansFromOtlpJson(payload: unknown, problems: Problem[] = []): SpanLike[] {
  const out: SpanLike[] = [];
  try {
    if (isRecord(payload)) decodeRequest(payload, out, problems);
    else for (const request of requests(payload, problems)) decodeRequest(request, out, problems);
  } catch (err) {
    problems.push({ code: 'otlp_decode_failed', message: errorText(err) });
  }
  return out;
}

function requests(payload: unknown, problems: Problem[]): unknown[] {
  if (typeof payload === 'string') {
    const parsed = parseJson(payload);
    if (parsed.ok) return requests(parsed.value, problems);
    const lines = payload.split('\n').filter((l) => l.trim().length > 0);
    if (lines.length < 2) {
      problems.push({ code: 'otlp_invalid_json', message: `payload is not JSON: ${parsed.error}` });
      return [];
    }
    const out: unknown[] = [];
    for (let i = 0; i < lines.length; i++) {
      const line = parseJson(lines[i]!);
      if (line.ok) out.push(line.value);
      else problems.push({ code: 'otlp_invalid_json', message: `line ${i + 1} is not JSON: ${line.error}` });
    }
    return out;
  }
  if (Array.isArray(payload)) return payload;
  if (isRecord(payload)) return [payload];
  problems.push({
    code: 'otlp_invalid_payload',
    message: `expected an ExportTraceServiceRequest, got ${typeOf(payload)}`,
  });
  return [];
}

function decodeRequest(request: unknown, out: SpanLike[], problems: Problem[]): void {
  if (!isRecord(request)) {
    problems.push({ code: 'otlp_invalid_payload', message: `expected an object, got ${typeOf(request)}` });
    return;
  }
  const resourceSpans = field(request, 'resourceSpans', 'resource_spans');
  if (resourceSpans === undefined) return;
  if (!Array.isArray(resourceSpans)) {
    problems.push({ code: 'otlp_invalid_payload', message: 'resourceSpans is not an array' });
    return;
  }
  for (const rs of resourceSpans) {
    if (!isRecord(rs)) {
      problems.push({
        code: 'otlp_invalid_payload',
        message: `resourceSpans entry is ${typeOf(rs)}, not an object`,
      });
      continue;
    }
    const resourceObj = rs['resource'];
    const resource = isRecord(resourceObj)
      ? decodeAttributes(resourceObj['attributes'], problems)
      : undefined;
    const scopeSpans =
      field(rs, 'scopeSpans', 'scope_spans') ??
      field(rs, 'instrumentationLibrarySpans', 'instrumentation_library_spans');
    if (!Array.isArray(scopeSpans)) {
      if (scopeSpans !== undefined && scopeSpans !== null)
        problems.push({
          code: 'otlp_invalid_payload',
          message: `scopeSpans is ${typeOf(scopeSpans)}, not an array`,
        });
      continue;
    }
    for (const ss of scopeSpans) {
      if (!isRecord(ss)) {
        problems.push({
          code: 'otlp_invalid_payload',
          message: `scopeSpans entry is ${typeOf(ss)}, not an object`,
        });
        continue;
      }
      const scopeObj = ss['scope'] ?? field(ss, 'instrumentationLibrary', 'instrumentation_library');
      let scope: SpanLike['scope'];
      if (isRecord(scopeObj) && typeof scopeObj['name'] === 'string') {
        scope = { name: scopeObj['name'] };
        if (typeof scopeObj['version'] === 'string' && scopeObj['version'])
          scope.version = scopeObj['version'];
      }
      const spans = ss['spans'];
      if (!Array.isArray(spans)) {
        if (spans !== undefined && spans !== null)
          problems.push({ code: 'otlp_invalid_payload', message: `spans is ${typeOf(spans)}, not an array` });
        continue;
      }
      for (const raw of spans) {
        const span = decodeSpan(raw, problems);
        if (!span) continue;
        if (resource) span.resource = resource;
        if (scope) span.scope = scope;
        out.push(span);
      }
    }
  }
}

function decodeSpan(raw: unknown, problems: Problem[]): SpanLike | undefined {
  if (!isRecord(raw)) {
    problems.push({ code: 'span_invalid', message: `span is not an object: ${typeOf(raw)}` });
    return undefined;
  }
  const traceId = decodeTraceId(field(raw, 'traceId', 'trace_id'));
  const spanId = decodeId(field(raw, 'spanId', 'span_id'), 8);
  if (!traceId || !spanId) {
    const problem: Problem = {
      code: 'span_missing_id',
      message: `span "${String(raw['name'] ?? '')}" has no valid trace or span id`,
    };
    if (traceId) problem.traceId = traceId;
    problems.push(problem);
    return undefined;
  }
  // Every field is read before the span is made, so it is allocated once, in its final shape.
  const rawParent = field(raw, 'parentSpanId', 'parent_span_id');
  let parent: string | undefined;
  if (rawParent !== undefined && rawParent !== null && rawParent !== '') {
    parent = decodeParentId(rawParent);
    if (!parent)
      problems.push({
        code: 'span_invalid_parent_id',
        message: `unreadable parent span id ${JSON.stringify(rawParent)}; span treated as a root`,
        traceId,
        spanId,
      });
  }
  const rawName = raw['name'];
  if (typeof rawName !== 'string')
    problems.push({ code: 'span_missing_name', message: 'span has no name', traceId, spanId });
  const kind = decodeKind(raw['kind']);
  const start = nanosToMs(field(raw, 'startTimeUnixNano', 'start_time_unix_nano'));
  if (start === undefined)
    problems.push({ code: 'span_missing_start', message: 'span has no start time', traceId, spanId });
  const rawEnd = field(raw, 'endTimeUnixNano', 'end_time_unix_nano');
  const end = nanosToMs(rawEnd);
  if (
    end === undefined &&
    rawEnd !== undefined &&
    rawEnd !== null &&
    rawEnd !== '' &&
    rawEnd !== '0' &&
    rawEnd !== 0
  )
    problems.push({ code: 'span_invalid_end', message: 'span has an unreadable end time', traceId, spanId });
  const span: SpanLike = {
    traceId,
    spanId,
    name: typeof rawName === 'string' ? rawName : '',
    kind,
    startTime: start ?? 0,
    status: decodeStatus(raw['status']),
    attributes: decodeAttributes(raw['attributes'], problems, traceId, spanId),
    events: [],
  };
  if (parent) span.parentSpanId = parent;
  if (end !== undefined && end > 0) span.endTime = end;
  const events = raw['events'];
  if (Array.isArray(events)) {
    for (const e of events) {
      if (!isRecord(e)) {
        problems.push(problemAt('event_invalid', `event is ${typeOf(e)}, not an object`, traceId, spanId));
        continue;
      }
      const event: SpanEventLike = {
        name: typeof e['name'] === 'string' ? e['name'] : '',
        time: nanosToMs(field(e, 'timeUnixNano', 'time_unix_nano')) ?? span.startTime,
        attributes: decodeAttributes(e['attributes'], problems, traceId, spanId),
      };
      span.events.push(event);
    }
  }
  const dropped = toNumber(field(raw, 'droppedAttributesCount', 'dropped_attributes_count'));
  if (dropped !== undefined && dropped > 0) span.droppedAttributesCount = dropped;
  return span;
}

function field(obj: Record<string, unknown>, camel: string, snake: string): unknown {
  const v = obj[camel];
  return v !== undefined ? v : obj[snake];
}

/**
 * The last trace id and parent id read, and what they decoded to: a request's spans mostly
 * share one trace, and siblings one parent. An equal id then costs a comparison, and the spans
 * share one id string instead of each keeping its own copy.
 */
let lastTraceIdIn: unknown;
let lastTraceId: string | undefined;
let lastParentIdIn: unknown;
let lastParentId: string | undefined;

function decodeTraceId(value: unknown): string | undefined {
  if (value === lastTraceIdIn && typeof value === 'string') return lastTraceId;
  const id = decodeId(value, 16);
  lastTraceIdIn = value;
  lastTraceId = id;
  return id;
}

function decodeParentId(value: unknown): string | undefined {
  if (value === lastParentIdIn && typeof value === 'string') return lastParentId;
  const id = decodeId(value, 8);
  lastParentIdIn = value;
  lastParentId = id;
  return id;
}

const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/** Hex as OTLP/JSON says, or base64 as the generic protobuf JSON mapping writes bytes. */
function decodeId(value: unknown, bytes: number): string | undefined {
  if (typeof value !== 'string' || value.length === 0) return undefined;
  if (value.length === bytes * 2) {
    // One pass over the characters (no regular expressions, no copy when already lower case).
    let upper = false;
    let nonZero = false;
    let i = 0;
    for (; i < value.length; i++) {
      const c = value.charCodeAt(i);
      if (c >= 0x30 && c <= 0x39) {
        if (c !== 0x30) nonZero = true;
      } else if (c >= 0x61 && c <= 0x66) nonZero = true;
      else if (c >= 0x41 && c <= 0x46) nonZero = upper = true;
      else break;
    }
    if (i === value.length) return nonZero ? (upper ? value.toLowerCase() : value) : undefined;
  }
  if (BASE64.test(value)) {
    const buf = Buffer.from(value, value.includes('-') || value.includes('_') ? 'base64url' : 'base64');
    if (buf.length === bytes) {
      const hex = buf.toString('hex');
      return /^0+$/.test(hex) ? undefined : hex;
    }
  }
  return undefined;
}

const KIND_NAMES: Record<string, number> = {
  SPAN_KIND_UNSPECIFIED: 0,
  SPAN_KIND_INTERNAL: 0,
  SPAN_KIND_SERVER: 1,
  SPAN_KIND_CLIENT: 2,
  SPAN_KIND_PRODUCER: 3,
  SPAN_KIND_CONSUMER: 4,
  INTERNAL: 0,
  SERVER: 1,
  CLIENT: 2,
  PRODUCER: 3,
  CONSUMER: 4,
};

/** OTLP numbers are the API's plus one (SPAN_KIND_INTERNAL = 1); UNSPECIFIED reads as INTERNAL. */
function decodeKind(value: unknown): number {
  if (typeof value === 'number') return value >= 1 && value <= 5 ? value - 1 : 0;
  if (typeof value === 'string') {
    const named = KIND_NAMES[value.toUpperCase()];
    if (named !== undefined) return named;
    const n = Number(value);
    return Number.isInteger(n) && n >= 1 && n <= 5 ? n - 1 : 0;
  }
  return 0;
}

function decodeStatus(value: unknown): SpanLike['status'] {
  if (!isRecord(value)) return { code: 0 };
  const raw = value['code'];
  let code: StatusCode = 0;
  if (raw === 1 || raw === 2) code = raw;
  else if (typeof raw === 'string') {
    const upper = raw.toUpperCase();
    if (upper === 'STATUS_CODE_OK' || upper === 'OK' || raw === '1') code = 1;
    else if (upper === 'STATUS_CODE_ERROR' || upper === 'ERROR' || raw === '2') code = 2;
  }
  const status: SpanLike['status'] = { code };
  if (typeof value['message'] === 'string' && value['message']) status.message = value['message'];
  return status;
}

function nanosToMs(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value / 1e6 : undefined;
  if (typeof value !== 'string' || value.length === 0) return undefined;
  const n = value.length;
  if (n <= 21) {
    // Whole milliseconds and the nanosecond remainder apart, so 19-digit nanos lose nothing
    // to a double (the figures BigInt division gives), read digit by digit: each part stays
    // below 2^53, so the sums are exact, with no BigInt, slice or Number() per timestamp.
    const cut = n <= 15 ? n : n - 6;
    let whole = 0;
    let rest = 0;
    for (let i = 0; i < n; i++) {
      const d = value.charCodeAt(i) - 0x30;
      if (d < 0 || d > 9) return undefined;
      if (i < cut) whole = whole * 10 + d;
      else rest = rest * 10 + d;
    }
    return n <= 15 ? whole / 1e6 : whole + rest / 1e6;
  }
  for (let i = 0; i < n; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return undefined;
  }
  return Number(value.slice(0, n - 6)) + Number(value.slice(n - 6)) / 1e6;
}

function toNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && value.trim() !== '') {
    const n = Number(value);
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

/** OTLP KeyValue list → record. Entries without a key or with an unreadable value are skipped and recorded. */
export function decodeAttributes(
  list: unknown,
  problems: Problem[],
  traceId?: string,
  spanId?: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (list === undefined || list === null) return out;
  if (!Array.isArray(list)) {
    problems.push(problemAt('attribute_invalid', 'attributes is not an array', traceId, spanId));
    return out;
  }
  for (const kv of list) {
    if (!isRecord(kv) || typeof kv['key'] !== 'string') {
      problems.push(problemAt('attribute_invalid', 'attribute without a key', traceId, spanId));
      continue;
    }
    const decoded = decodeAnyValue(kv['value']);
    if (decoded === INVALID) {
      problems.push(
        problemAt('attribute_invalid', `attribute "${kv['key']}" has an unreadable value`, traceId, spanId),
      );
      continue;
    }
    setOwn(out, kv['key'], decoded);
  }
  return out;
}

/**
 * `record[key] = value`, except that a `__proto__` key becomes an own property like any
 * other: assigned, it would set the record's prototype, so its contents would read as
 * attributes that iteration does not see (a span made to look like an agent to some readers
 * and not to others) and a string value would vanish.
 */
function setOwn(record: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
  else record[key] = value;
}

const INVALID = Symbol('invalid');

/**
 * Values still to decode inside arrays and kvlists, as (source, container, key) triples: an
 * explicit stack so deeply nested kvlists cannot overflow the call stack, and flat so nesting
 * costs no closure or frame object per value. Only used inside one synchronous call.
 */
const pending: unknown[] = [];

/** AnyValue → JS value; INVALID when it or anything nested in it cannot be read. */
function decodeAnyValue(root: unknown): unknown {
  // Every call leaves it empty; an exception thrown from inside (a getter) might not.
  if (pending.length > 0) pending.length = 0;
  const result = anyValue(root);
  while (pending.length > 0 && result !== INVALID) {
    const key = pending.pop() as string | number;
    const container = pending.pop() as Record<string | number, unknown>;
    const value = anyValue(pending.pop());
    if (value === INVALID) {
      pending.length = 0;
      return INVALID;
    }
    if (typeof key === 'number') container[key] = value;
    else setOwn(container as Record<string, unknown>, key, value);
  }
  return result;
}

/**
 * One AnyValue: a scalar, or a fresh array/record whose members are queued on `pending`.
 * Fields are looked up camelCase first, then snake_case, in protobuf's oneof order.
 */
function anyValue(src: unknown): unknown {
  // An absent value (`{}` or null) is an empty AnyValue in protobuf.
  if (src === undefined || src === null) return undefined;
  if (typeof src !== 'object' || Array.isArray(src)) return INVALID;
  const o = src as Record<string, unknown>;
  // Scalars of the wrong JSON type are unreadable, not coerced: an object read as the string
  // "[object Object]", "" or [] as the number 0, or "yes" as false would be scored as data.
  let v = o['stringValue'];
  if (v === undefined) v = o['string_value'];
  if (v !== undefined) {
    if (typeof v === 'string') return v;
    return typeof v === 'number' || typeof v === 'boolean' ? String(v) : INVALID;
  }
  v = o['boolValue'];
  if (v === undefined) v = o['bool_value'];
  if (v !== undefined) {
    if (typeof v === 'boolean') return v;
    return v === 'true' ? true : v === 'false' ? false : INVALID;
  }
  v = o['intValue'];
  if (v === undefined) v = o['int_value'];
  if (v !== undefined) {
    if (typeof v === 'number') return Number.isInteger(v) ? v : INVALID;
    if (typeof v !== 'string' || !isIntegerText(v)) return INVALID;
    const n = Number(v);
    // Past 2^53 a number would lie; keep the digits.
    return Number.isSafeInteger(n) ? n : v;
  }
  v = o['doubleValue'];
  if (v === undefined) v = o['double_value'];
  if (v !== undefined) {
    if (typeof v === 'number') return v;
    // Strings as the protobuf JSON mapping writes them, "NaN" and "Infinity" included.
    if (typeof v !== 'string' || v.trim() === '') return INVALID;
    const n = Number(v);
    return Number.isNaN(n) && v !== 'NaN' ? INVALID : n;
  }
  v = o['bytesValue'];
  if (v === undefined) v = o['bytes_value'];
  if (v !== undefined) return typeof v === 'string' ? v : INVALID;
  v = o['arrayValue'];
  if (v === undefined) v = o['array_value'];
  if (v !== undefined) {
    const values = isRecord(v) ? v['values'] : undefined;
    const out: unknown[] = [];
    if (Array.isArray(values)) {
      for (let k = 0; k < values.length; k++) {
        out.push(undefined);
        pending.push(values[k], out, k);
      }
    }
    return out;
  }
  v = o['kvlistValue'];
  if (v === undefined) v = o['kvlist_value'];
  if (v !== undefined) {
    const values = isRecord(v) ? v['values'] : undefined;
    const out: Record<string, unknown> = {};
    if (Array.isArray(values)) {
      for (const kv of values) {
        if (isRecord(kv) && typeof kv['key'] === 'string') pending.push(kv['value'], out, kv['key']);
      }
    }
    return out;
  }
  // `{}` is empty; an object with only unknown fields is unreadable.
  return Object.keys(o).length === 0 ? undefined : INVALID;
}

/** A protobuf JSON int64: an optional minus and digits. */
function isIntegerText(text: string): boolean {
  const n = text.length;
  let i = n > 1 && text.charCodeAt(0) === 0x2d ? 1 : 0;
  if (i === n) return false;
  for (; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

function problemAt(code: string, message: string, traceId?: string, spanId?: string): Problem {
  const p: Problem = { code, message };
  if (traceId) p.traceId = traceId;
  if (spanId) p.spanId = spanId;
  return p;
}

function typeOf(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
