import { ProtoWriter } from './protobuf-wire.js';

/** What the gateway adds to a judged span: OTel attribute values and span events. */
export type AttributeMap = Record<string, unknown>;

/** A double that must be written as `double_value` even when whole (OTLP/JSON input). */
export class DoubleValue {
  constructor(readonly value: number) {}
}

export interface EventToAdd {
  name: string;
  timeUnixNano: bigint;
  attributes: AttributeMap;
}

/**
 * `AnyValue` of a JS value, typed as the OpenTelemetry JS transformer types it (integers as
 * `int_value`, other numbers as `double_value`), so a verdict written by the gateway reads
 * the same as one the in-process processor wrote through the SDK.
 */
export function writeAnyValue(w: ProtoWriter, value: unknown): void {
  if (typeof value === 'string') w.string(1, value);
  else if (typeof value === 'boolean') w.tag(2, 0).uint(value ? 1 : 0);
  else if (typeof value === 'number') {
    if (Number.isInteger(value)) w.tag(3, 0).varint(BigInt(value));
    else w.double(4, value);
  } else if (typeof value === 'bigint') w.tag(3, 0).varint(value);
  else if (Array.isArray(value))
    w.message(5, (a) => {
      for (const v of value) a.message(1, (x) => writeAnyValue(x, v));
    });
  else if (value instanceof Uint8Array) w.bytes(7, value);
  else if (value instanceof DoubleValue) w.double(4, value.value);
  else if (value !== null && typeof value === 'object')
    w.message(6, (kv) => {
      for (const [k, v] of Object.entries(value)) kv.message(1, (x) => writeKeyValue(x, k, v));
    });
}

export function writeKeyValue(w: ProtoWriter, key: string, value: unknown): void {
  w.string(1, key);
  if (value !== undefined && value !== null) w.message(2, (v) => writeAnyValue(v, value));
}

/**
 * The span's received bytes followed by new `attributes` (field 9) and `events` (field 11).
 * Protobuf merges repeated fields that appear later in a message, so this is the span
 * with the additions, and every received byte stays as it was.
 */
export function appendToSpan(
  span: Uint8Array,
  attributes: AttributeMap,
  events: readonly EventToAdd[],
): Uint8Array {
  const w = new ProtoWriter();
  w.raw(span);
  for (const [key, value] of Object.entries(attributes)) w.message(9, (kv) => writeKeyValue(kv, key, value));
  for (const event of events) {
    w.message(11, (e) => {
      e.fixed64(1, event.timeUnixNano);
      e.string(2, event.name);
      for (const [key, value] of Object.entries(event.attributes))
        e.message(3, (kv) => writeKeyValue(kv, key, value));
    });
  }
  return w.finish();
}
