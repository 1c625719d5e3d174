import { FieldReader, type FieldValue } from './protobuf-wire.js';

/**
 * OTLP/protobuf `ExportTraceServiceRequest` → the OTLP/JSON object form (hex ids, decimal
 * string nanos, camelCase keys), so protobuf files go through the same decoder as JSON.
 * Hand-written over the wire format (a few dozen fields) rather than a generated codec:
 * no runtime dependency, and unknown fields are skipped as protobuf requires. Throws on
 * truncated or malformed input; callers report the file.
 */
export function otlpJsonFromProtobuf(bytes: Uint8Array): Record<string, unknown> {
  const resourceSpans: unknown[] = [];
  for (const r = new FieldReader(bytes); r.next(); ) {
    const field = r.field;
    const value = r.value;
    if (field === 1) resourceSpans.push(resourceSpansOf(value as Uint8Array));
  }
  return { resourceSpans };
}

const utf8 = new TextDecoder('utf-8');

function text(v: FieldValue): string {
  return v instanceof Uint8Array ? utf8.decode(v) : '';
}

function hex(v: FieldValue): string {
  return v instanceof Uint8Array ? Buffer.from(v).toString('hex') : '';
}

function resourceSpansOf(buf: Uint8Array): Record<string, unknown> {
  const out: Record<string, unknown> = { scopeSpans: [] as unknown[] };
  for (const r = new FieldReader(buf); r.next(); ) {
    const field = r.field;
    const value = r.value;
    if (field === 1) out.resource = { attributes: attributesOf(value as Uint8Array, 1) };
    else if (field === 2) (out.scopeSpans as unknown[]).push(scopeSpansOf(value as Uint8Array));
    else if (field === 3) out.schemaUrl = text(value);
  }
  return out;
}

function scopeSpansOf(buf: Uint8Array): Record<string, unknown> {
  const out: Record<string, unknown> = { spans: [] as unknown[] };
  for (const r = new FieldReader(buf); r.next(); ) {
    const field = r.field;
    const value = r.value;
    if (field === 1) out.scope = scopeOf(value as Uint8Array);
    else if (field === 2) (out.spans as unknown[]).push(spanOf(value as Uint8Array));
    else if (field === 3) out.schemaUrl = text(value);
  }
  return out;
}

function scopeOf(buf: Uint8Array): Record<string, unknown> {
  const out: Record<string, unknown> = { name: '' };
  const attributes: unknown[] = [];
  for (const r = new FieldReader(buf); r.next(); ) {
    const field = r.field;
    const value = r.value;
    if (field === 1) out.name = text(value);
    else if (field === 2) out.version = text(value);
    else if (field === 3) attributes.push(keyValueOf(value as Uint8Array));
  }
  if (attributes.length > 0) out.attributes = attributes;
  return out;
}

function spanOf(buf: Uint8Array): Record<string, unknown> {
  const out: Record<string, unknown> = { attributes: [] as unknown[], events: [] as unknown[] };
  for (const r = new FieldReader(buf); r.next(); ) {
    const field = r.field;
    const value = r.value;
    switch (field) {
      case 1:
        out.traceId = hex(value);
        break;
      case 2:
        out.spanId = hex(value);
        break;
      case 3:
        out.traceState = text(value);
        break;
      case 4:
        if ((value as Uint8Array).length > 0) out.parentSpanId = hex(value);
        break;
      case 5:
        out.name = text(value);
        break;
      case 6:
        out.kind = Number(value);
        break;
      case 7:
        out.startTimeUnixNano = String(value);
        break;
      case 8:
        out.endTimeUnixNano = String(value);
        break;
      case 9:
        (out.attributes as unknown[]).push(keyValueOf(value as Uint8Array));
        break;
      case 10:
        out.droppedAttributesCount = Number(value);
        break;
      case 11:
        (out.events as unknown[]).push(eventOf(value as Uint8Array));
        break;
      case 15:
        out.status = statusOf(value as Uint8Array);
        break;
      case 16:
        out.flags = Number(value);
        break;
    }
  }
  return out;
}

function eventOf(buf: Uint8Array): Record<string, unknown> {
  const out: Record<string, unknown> = { attributes: [] as unknown[] };
  for (const r = new FieldReader(buf); r.next(); ) {
    const field = r.field;
    const value = r.value;
    if (field === 1) out.timeUnixNano = String(value);
    else if (field === 2) out.name = text(value);
    else if (field === 3) (out.attributes as unknown[]).push(keyValueOf(value as Uint8Array));
    else if (field === 4) out.droppedAttributesCount = Number(value);
  }
  return out;
}

function statusOf(buf: Uint8Array): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const r = new FieldReader(buf); r.next(); ) {
    const field = r.field;
    const value = r.value;
    if (field === 2) out.message = text(value);
    else if (field === 3) out.code = Number(value);
  }
  return out;
}

function attributesOf(buf: Uint8Array, fieldNumber: number): unknown[] {
  const out: unknown[] = [];
  for (const r = new FieldReader(buf); r.next(); )
    if (r.field === fieldNumber) out.push(keyValueOf(r.value as Uint8Array));
  return out;
}

function keyValueOf(buf: Uint8Array): Record<string, unknown> {
  const entry: Record<string, unknown> = { key: '', value: {} };
  const pending: Pending[] = [];
  keyValueInto(buf, entry, pending);
  fill(pending);
  return entry;
}

/**
 * AnyValues still to decode, as (bytes, container, key): arrays and kvlists nest without a
 * bound in valid protobuf, so they are decoded from an explicit stack rather than by
 * recursion, which a few thousand levels of nesting in one attribute would overflow.
 */
type Pending = [Uint8Array, Record<string | number, unknown>, string | number];

function fill(pending: Pending[]): void {
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [buf, container, key] = next;
    container[key] = oneAnyValue(buf, pending);
  }
}

/** One AnyValue; the members of an array or kvlist are left on `pending` (last field wins). */
function oneAnyValue(buf: Uint8Array, pending: Pending[]): Record<string, unknown> {
  let out: Record<string, unknown> = {};
  for (const r = new FieldReader(buf); r.next(); ) {
    const field = r.field;
    const v = r.value;
    switch (field) {
      case 1:
        out = { stringValue: text(v) };
        break;
      case 2:
        out = { boolValue: Number(v) !== 0 };
        break;
      case 3:
        out = { intValue: typeof v === 'number' ? String(v) : BigInt.asIntN(64, v as bigint).toString() };
        break;
      case 4:
        out = { doubleValue: doubleOf(BigInt(v as bigint)) };
        break;
      case 5: {
        const values: unknown[] = [];
        for (const item of listOf(v as Uint8Array)) {
          values.push({});
          pending.push([item, values as unknown as Record<number, unknown>, values.length - 1]);
        }
        out = { arrayValue: { values } };
        break;
      }
      case 6: {
        const values: unknown[] = [];
        for (const item of listOf(v as Uint8Array)) {
          const entry: Record<string, unknown> = { key: '', value: {} };
          keyValueInto(item, entry, pending);
          values.push(entry);
        }
        out = { kvlistValue: { values } };
        break;
      }
      case 7:
        out = { bytesValue: Buffer.from(v as Uint8Array).toString('base64') };
        break;
    }
  }
  return out;
}

/** A KeyValue's key into `entry`, its value left on `pending`. */
function keyValueInto(buf: Uint8Array, entry: Record<string, unknown>, pending: Pending[]): void {
  let value: Uint8Array | undefined;
  for (const r = new FieldReader(buf); r.next(); ) {
    if (r.field === 1) entry.key = text(r.value);
    else if (r.field === 2) value = r.value as Uint8Array;
  }
  if (value) pending.push([value, entry, 'value']);
}

/** `ArrayValue.values` / `KeyValueList.values`: repeated field 1. */
function listOf(buf: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const r = new FieldReader(buf); r.next(); ) if (r.field === 1) out.push(r.value as Uint8Array);
  return out;
}

function doubleOf(bits: bigint): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, bits, true);
  return view.getFloat64(0, true);
}
