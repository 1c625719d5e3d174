/**
 * The protobuf wire format, as far as OTLP needs it: a field reader that never reads past
 * its buffer and a writer for the few messages toolwatch builds (requests, attributes,
 * events, status). Hand-written because OTLP traces use a few dozen fields and the gateway
 * must splice bytes it did not decode: a generated codec would re-encode everything.
 */

export type FieldValue = bigint | Uint8Array | number;

/**
 * A cursor over one message's fields: `while (r.next())` then `r.field`, `r.wire`,
 * `r.value` — varints as numbers up to 2^49 and as bigint above (so negative and 64-bit
 * integers stay exact), fixed64 as bigint, fixed32 as number, bytes as views. Numbers and a
 * reused cursor because nearly every varint in OTLP is a tag, a length or a small enum, and
 * a decoder built on BigInt and per-field tuples spent most of its time allocating.
 * Throws on truncated or malformed input, never reads past the buffer.
 */
export class FieldReader {
  field = 0;
  wire = 0;
  value: FieldValue = 0;
  /** Offsets in the buffer: the field's tag, its value's first byte, and the byte after it. */
  start = 0;
  valueStart = 0;
  valueEnd = 0;
  private _pos = 0;
  private _view: DataView | undefined;

  constructor(private readonly _buf: Uint8Array) {}

  next(): boolean {
    const buf = this._buf;
    if (this._pos >= buf.length) return false;
    this.start = this._pos;
    const key = Number(this._varint());
    const field = Math.floor(key / 8);
    const wire = key % 8;
    if (field === 0) throw new Error('field number 0');
    this.field = field;
    this.wire = wire;
    this.valueStart = this._pos;
    switch (wire) {
      case 0:
        this.value = this._varint();
        break;
      case 1:
        if (this._pos + 8 > buf.length) throw new Error('truncated fixed64');
        this.value = this._dataView().getBigUint64(this._pos, true);
        this._pos += 8;
        break;
      case 2: {
        const len = Number(this._varint());
        if (this._pos + len > buf.length) throw new Error('truncated length-delimited field');
        this.valueStart = this._pos;
        this.value = buf.subarray(this._pos, this._pos + len);
        this._pos += len;
        break;
      }
      case 5:
        if (this._pos + 4 > buf.length) throw new Error('truncated fixed32');
        this.value = this._dataView().getUint32(this._pos, true);
        this._pos += 4;
        break;
      default:
        throw new Error(`unsupported wire type ${wire}`);
    }
    this.valueEnd = this._pos;
    return true;
  }

  private _dataView(): DataView {
    this._view ??= new DataView(this._buf.buffer, this._buf.byteOffset, this._buf.byteLength);
    return this._view;
  }

  private _varint(): number | bigint {
    const buf = this._buf;
    let result = 0;
    let mul = 1;
    for (let i = 0; i < 7; i++) {
      if (this._pos >= buf.length) throw new Error('truncated varint');
      const b = buf[this._pos++]!;
      result += (b & 0x7f) * mul;
      if ((b & 0x80) === 0) return result;
      mul *= 128;
    }
    let big = BigInt(result);
    let shift = 49n;
    for (;;) {
      if (this._pos >= buf.length) throw new Error('truncated varint');
      const b = buf[this._pos++]!;
      big |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return BigInt.asUintN(64, big);
      shift += 7n;
      if (shift > 63n) throw new Error('varint too long');
    }
  }
}

/** (field number, value, wire type) of each field, for callers that prefer iteration. */
export function* fields(buf: Uint8Array): Generator<[number, FieldValue, number]> {
  const r = new FieldReader(buf);
  while (r.next()) yield [r.field, r.value, r.wire];
}

/** Bytes of a length-delimited field, or a clear error when the wire type is another. */
export function bytesOf(value: FieldValue, wire: number, what: string): Uint8Array {
  if (wire !== 2 || !(value instanceof Uint8Array)) throw new Error(`${what} is not length-delimited`);
  return value;
}

const utf8 = new TextEncoder();

/** Appends protobuf fields to a growing buffer. */
export class ProtoWriter {
  private _buf = new Uint8Array(256);
  private _len = 0;

  get length(): number {
    return this._len;
  }

  finish(): Uint8Array {
    return this._buf.slice(0, this._len);
  }

  private _reserve(n: number): void {
    if (this._len + n <= this._buf.length) return;
    let size = this._buf.length * 2;
    while (size < this._len + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this._buf.subarray(0, this._len));
    this._buf = next;
  }

  varint(value: number | bigint): this {
    let v = BigInt.asUintN(64, BigInt(value));
    this._reserve(10);
    while (v >= 0x80n) {
      this._buf[this._len++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this._buf[this._len++] = Number(v);
    return this;
  }

  /** Small non-negative integers (tags, lengths) without BigInt. */
  uint(value: number): this {
    this._reserve(10);
    let v = value;
    while (v >= 0x80) {
      this._buf[this._len++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    this._buf[this._len++] = v;
    return this;
  }

  tag(field: number, wire: number): this {
    return this.uint(field * 8 + wire);
  }

  raw(bytes: Uint8Array): this {
    this._reserve(bytes.length);
    this._buf.set(bytes, this._len);
    this._len += bytes.length;
    return this;
  }

  bytes(field: number, bytes: Uint8Array): this {
    return this.tag(field, 2).uint(bytes.length).raw(bytes);
  }

  string(field: number, text: string): this {
    return this.bytes(field, utf8.encode(text));
  }

  fixed64(field: number, value: bigint): this {
    this.tag(field, 1)._reserve(8);
    new DataView(this._buf.buffer).setBigUint64(this._len, BigInt.asUintN(64, value), true);
    this._len += 8;
    return this;
  }

  double(field: number, value: number): this {
    this.tag(field, 1)._reserve(8);
    new DataView(this._buf.buffer).setFloat64(this._len, value, true);
    this._len += 8;
    return this;
  }

  /** A nested message written by `write` into a fresh writer. */
  message(field: number, write: (w: ProtoWriter) => void): void {
    const inner = new ProtoWriter();
    write(inner);
    this.bytes(field, inner.finish());
  }
}
