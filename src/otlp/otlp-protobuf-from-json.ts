import { ProtoWriter } from './protobuf-wire.js';

/**
 * OTLP/JSON `ExportTraceServiceRequest` (as parsed JSON) → OTLP/protobuf bytes, so the
 * gateway keeps one form of every span whatever the sender spoke. Reads what real senders
 * write: hex or base64 ids, camelCase or snake_case keys, 64-bit integers as strings or
 * numbers, enum names or numbers. Throws with the path of the first value it cannot read.
 */
export function otlpProtobufFromJson(request: unknown): Uint8Array {
  const w = new ProtoWriter();
  const req = record(request, '$');
  list(get(req, 'resourceSpans', 'resource_spans'), '$.resourceSpans').forEach((rs, i) => {
    w.message(1, (x) => resourceSpans(x, record(rs, `$.resourceSpans[${i}]`), `$.resourceSpans[${i}]`));
  });
  return w.finish();
}

function resourceSpans(w: ProtoWriter, rs: Obj, path: string): void {
  const resource = get(rs, 'resource');
  if (resource !== undefined) {
    const r = record(resource, `${path}.resource`);
    w.message(1, (x) => {
      attributes(x, 1, get(r, 'attributes'), `${path}.resource.attributes`);
      uint(x, 2, get(r, 'droppedAttributesCount', 'dropped_attributes_count'));
    });
  }
  list(get(rs, 'scopeSpans', 'scope_spans'), `${path}.scopeSpans`).forEach((ss, i) => {
    w.message(2, (x) => scopeSpans(x, record(ss, `${path}.scopeSpans[${i}]`), `${path}.scopeSpans[${i}]`));
  });
  str(w, 3, get(rs, 'schemaUrl', 'schema_url'));
}

function scopeSpans(w: ProtoWriter, ss: Obj, path: string): void {
  const scope = get(ss, 'scope');
  if (scope !== undefined) {
    const s = record(scope, `${path}.scope`);
    w.message(1, (x) => {
      str(x, 1, get(s, 'name'));
      str(x, 2, get(s, 'version'));
      attributes(x, 3, get(s, 'attributes'), `${path}.scope.attributes`);
      uint(x, 4, get(s, 'droppedAttributesCount', 'dropped_attributes_count'));
    });
  }
  list(get(ss, 'spans'), `${path}.spans`).forEach((sp, i) => {
    w.message(2, (x) => span(x, record(sp, `${path}.spans[${i}]`), `${path}.spans[${i}]`));
  });
  str(w, 3, get(ss, 'schemaUrl', 'schema_url'));
}

const KINDS: Record<string, number> = {
  SPAN_KIND_UNSPECIFIED: 0,
  SPAN_KIND_INTERNAL: 1,
  SPAN_KIND_SERVER: 2,
  SPAN_KIND_CLIENT: 3,
  SPAN_KIND_PRODUCER: 4,
  SPAN_KIND_CONSUMER: 5,
};
const CODES: Record<string, number> = { STATUS_CODE_UNSET: 0, STATUS_CODE_OK: 1, STATUS_CODE_ERROR: 2 };

function span(w: ProtoWriter, sp: Obj, path: string): void {
  id(w, 1, get(sp, 'traceId', 'trace_id'), 16, `${path}.traceId`);
  id(w, 2, get(sp, 'spanId', 'span_id'), 8, `${path}.spanId`);
  str(w, 3, get(sp, 'traceState', 'trace_state'));
  const parent = get(sp, 'parentSpanId', 'parent_span_id');
  if (parent !== undefined && parent !== '') id(w, 4, parent, 8, `${path}.parentSpanId`);
  str(w, 5, get(sp, 'name'));
  enumValue(w, 6, get(sp, 'kind'), KINDS, `${path}.kind`);
  fixed(w, 7, get(sp, 'startTimeUnixNano', 'start_time_unix_nano'), `${path}.startTimeUnixNano`);
  fixed(w, 8, get(sp, 'endTimeUnixNano', 'end_time_unix_nano'), `${path}.endTimeUnixNano`);
  attributes(w, 9, get(sp, 'attributes'), `${path}.attributes`);
  uint(w, 10, get(sp, 'droppedAttributesCount', 'dropped_attributes_count'));
  list(get(sp, 'events'), `${path}.events`).forEach((ev, i) => {
    const e = record(ev, `${path}.events[${i}]`);
    w.message(11, (x) => {
      fixed(x, 1, get(e, 'timeUnixNano', 'time_unix_nano'), `${path}.events[${i}].timeUnixNano`);
      str(x, 2, get(e, 'name'));
      attributes(x, 3, get(e, 'attributes'), `${path}.events[${i}].attributes`);
      uint(x, 4, get(e, 'droppedAttributesCount', 'dropped_attributes_count'));
    });
  });
  uint(w, 12, get(sp, 'droppedEventsCount', 'dropped_events_count'));
  list(get(sp, 'links'), `${path}.links`).forEach((ln, i) => {
    const l = record(ln, `${path}.links[${i}]`);
    const at = `${path}.links[${i}]`;
    w.message(13, (x) => {
      id(x, 1, get(l, 'traceId', 'trace_id'), 16, `${at}.traceId`);
      id(x, 2, get(l, 'spanId', 'span_id'), 8, `${at}.spanId`);
      str(x, 3, get(l, 'traceState', 'trace_state'));
      attributes(x, 4, get(l, 'attributes'), `${at}.attributes`);
      uint(x, 5, get(l, 'droppedAttributesCount', 'dropped_attributes_count'));
      fixed32(x, 6, get(l, 'flags'));
    });
  });
  uint(w, 14, get(sp, 'droppedLinksCount', 'dropped_links_count'));
  const status = get(sp, 'status');
  if (status !== undefined) {
    const s = record(status, `${path}.status`);
    w.message(15, (x) => {
      str(x, 2, get(s, 'message'));
      enumValue(x, 3, get(s, 'code'), CODES, `${path}.status.code`);
    });
  }
  fixed32(w, 16, get(sp, 'flags'));
}

type Obj = Record<string, unknown>;

function get(o: Obj, camel: string, snake?: string): unknown {
  const v = o[camel];
  return v === undefined && snake !== undefined ? o[snake] : v;
}

function record(v: unknown, path: string): Obj {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error(`${path}: expected an object`);
  return v as Obj;
}

function list(v: unknown, path: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new Error(`${path}: expected an array`);
  return v;
}

function str(w: ProtoWriter, field: number, v: unknown): void {
  if (typeof v === 'string' && v !== '') w.string(field, v);
}

function integer(v: unknown, path: string): bigint {
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return BigInt(v);
  throw new Error(`${path}: expected an integer`);
}

/** A uint32 count; anything else (not a whole number, beyond 32 bits) is left out as unset. */
function uint(w: ProtoWriter, field: number, v: unknown): void {
  if (typeof v === 'number' && Number.isInteger(v) && v > 0 && v <= 0xffffffff) w.tag(field, 0).uint(v);
}

function fixed(w: ProtoWriter, field: number, v: unknown, path: string): void {
  if (v === undefined || v === null) return;
  const n = integer(v, path);
  if (n < 0n || n >= 2n ** 64n) throw new Error(`${path}: out of range`);
  if (n !== 0n) w.fixed64(field, n);
}

function fixed32(w: ProtoWriter, field: number, v: unknown): void {
  if (typeof v !== 'number' || !Number.isInteger(v) || v === 0) return;
  w.tag(field, 5);
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, v >>> 0, true);
  w.raw(b);
}

function enumValue(
  w: ProtoWriter,
  field: number,
  v: unknown,
  names: Record<string, number>,
  path: string,
): void {
  if (v === undefined || v === null) return;
  const n = typeof v === 'string' && v in names ? names[v]! : Number(v);
  // Protobuf enums are int32: a larger whole number would encode as an invalid varint.
  if (!Number.isInteger(n) || n < 0 || n > 0x7fffffff)
    throw new Error(`${path}: unknown value ${JSON.stringify(v)}`);
  if (n !== 0) w.tag(field, 0).uint(n);
}

function id(w: ProtoWriter, field: number, v: unknown, size: number, path: string): void {
  if (typeof v !== 'string') throw new Error(`${path}: expected a hex or base64 string`);
  let bytes: Buffer;
  if (v.length === size * 2 && /^[0-9a-fA-F]+$/.test(v)) bytes = Buffer.from(v, 'hex');
  else {
    bytes = Buffer.from(v, 'base64');
    if (bytes.length !== size) throw new Error(`${path}: expected ${size} bytes as hex or base64`);
  }
  w.bytes(field, bytes);
}

function attributes(w: ProtoWriter, field: number, v: unknown, path: string): void {
  list(v, path).forEach((kv, i) => {
    const entry = record(kv, `${path}[${i}]`);
    const key = get(entry, 'key');
    if (typeof key !== 'string') throw new Error(`${path}[${i}].key: expected a string`);
    w.message(field, (x) => keyValue(x, key, get(entry, 'value'), `${path}[${i}].value`, 0));
  });
}

/**
 * AnyValues nest without a limit in OTLP; encoding recurses, so deeper JSON is refused with
 * its path rather than overflowing the call stack (and costing a copy of the value per level).
 */
export const MAX_ANY_VALUE_DEPTH = 512;

function keyValue(w: ProtoWriter, key: string, value: unknown, path: string, depth: number): void {
  w.string(1, key);
  if (value !== undefined && value !== null) w.message(2, (x) => anyValue(x, value, path, depth));
}

/**
 * An OTLP/JSON `AnyValue` written straight to protobuf: a kvlist stays the list of entries it
 * was (duplicate keys, `__proto__`, and key order kept), as a received protobuf would be.
 */
function anyValue(w: ProtoWriter, v: unknown, path: string, depth: number): void {
  if (v === undefined || v === null) return;
  if (depth >= MAX_ANY_VALUE_DEPTH)
    throw new Error(`${path}: nested deeper than ${MAX_ANY_VALUE_DEPTH} levels`);
  const o = record(v, path);
  if ('stringValue' in o || 'string_value' in o) w.string(1, String(get(o, 'stringValue', 'string_value')));
  else if ('boolValue' in o || 'bool_value' in o)
    w.tag(2, 0).uint(get(o, 'boolValue', 'bool_value') === true ? 1 : 0);
  else if ('intValue' in o || 'int_value' in o)
    w.tag(3, 0).varint(integer(get(o, 'intValue', 'int_value'), path));
  // A whole double stays a double (field 4), as it was sent.
  else if ('doubleValue' in o || 'double_value' in o)
    w.double(4, Number(get(o, 'doubleValue', 'double_value')));
  else if ('bytesValue' in o || 'bytes_value' in o)
    w.bytes(7, Buffer.from(String(get(o, 'bytesValue', 'bytes_value')), 'base64'));
  else if ('arrayValue' in o || 'array_value' in o) {
    const a = record(get(o, 'arrayValue', 'array_value'), path);
    const values = list(get(a, 'values'), `${path}.arrayValue.values`);
    w.message(5, (x) => {
      for (let i = 0; i < values.length; i++)
        x.message(1, (y) => anyValue(y, values[i], `${path}.arrayValue.values[${i}]`, depth + 1));
    });
  } else if ('kvlistValue' in o || 'kvlist_value' in o) {
    const kv = record(get(o, 'kvlistValue', 'kvlist_value'), path);
    const values = list(get(kv, 'values'), `${path}.kvlistValue.values`);
    w.message(6, (x) => {
      for (let i = 0; i < values.length; i++) {
        const at = `${path}.kvlistValue.values[${i}]`;
        const entry = record(values[i], at);
        const key = get(entry, 'key');
        x.message(1, (y) =>
          keyValue(
            y,
            key === undefined || key === null ? '' : String(key),
            get(entry, 'value'),
            `${at}.value`,
            depth + 1,
          ),
        );
      }
    });
  }
}
