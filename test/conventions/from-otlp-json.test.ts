import { describe, expect, it } from 'vitest';
import { spansFromOtlpJson } from '../../src/conventions/from-otlp-json.js';
import type { Problem } from '../../src/types.js';

const TRACE_HEX = '5b8efff798038103d269b633813fc60c';
const SPAN_HEX = 'eee19b7ec3c1b174';
const PARENT_HEX = 'eee19b7ec3c1b173';
const b64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64');

function request(spans: unknown[], resourceAttrs: unknown[] = []) {
  return {
    resourceSpans: [
      {
        resource: { attributes: resourceAttrs },
        scopeSpans: [{ scope: { name: 'lib', version: '1.2' }, spans }],
      },
    ],
  };
}

const baseSpan = {
  traceId: TRACE_HEX,
  spanId: SPAN_HEX,
  parentSpanId: PARENT_HEX,
  name: 'execute_tool get_weather',
  kind: 1,
  startTimeUnixNano: '1764000000000000123',
  endTimeUnixNano: '1764000000500000000',
  attributes: [{ key: 'gen_ai.tool.name', value: { stringValue: 'get_weather' } }],
  status: { code: 2, message: 'boom' },
};

describe('spansFromOtlpJson', () => {
  it('decodes hex ids, times to fractional ms, kind, status, resource and scope', () => {
    const problems: Problem[] = [];
    const [span, ...rest] = spansFromOtlpJson(
      request([baseSpan], [{ key: 'service.name', value: { stringValue: 'svc' } }]),
      problems,
    );
    expect(rest).toEqual([]);
    expect(problems).toEqual([]);
    expect(span).toMatchObject({
      traceId: TRACE_HEX,
      spanId: SPAN_HEX,
      parentSpanId: PARENT_HEX,
      name: 'execute_tool get_weather',
      kind: 0,
      status: { code: 2, message: 'boom' },
      attributes: { 'gen_ai.tool.name': 'get_weather' },
      resource: { 'service.name': 'svc' },
      scope: { name: 'lib', version: '1.2' },
    });
    // Nanoseconds survive as a fraction of a millisecond (to the ~0.2 µs a double holds at this size).
    expect(span!.startTime - 1_764_000_000_000).toBeGreaterThan(0);
    expect(span!.startTime - 1_764_000_000_000).toBeCloseTo(0.000123, 3);
    expect(span!.endTime).toBe(1_764_000_000_500);
  });

  it('accepts base64 ids (protobuf JSON mapping), snake_case keys, enum-name kinds and status codes', () => {
    const problems: Problem[] = [];
    const spans = spansFromOtlpJson(
      {
        resource_spans: [
          {
            scope_spans: [
              {
                spans: [
                  {
                    trace_id: b64(TRACE_HEX),
                    span_id: b64(SPAN_HEX),
                    parent_span_id: b64(PARENT_HEX),
                    name: 'x',
                    kind: 'SPAN_KIND_CLIENT',
                    start_time_unix_nano: 1_764_000_000_000_000_000,
                    status: { code: 'STATUS_CODE_OK' },
                    attributes: [{ key: 'n', value: { int_value: '7' } }],
                  },
                ],
              },
            ],
          },
        ],
      },
      problems,
    );
    expect(problems).toEqual([]);
    expect(spans[0]).toMatchObject({
      traceId: TRACE_HEX,
      spanId: SPAN_HEX,
      parentSpanId: PARENT_HEX,
      kind: 2,
      status: { code: 1 },
    });
    expect(spans[0]!.attributes).toEqual({ n: 7 });
    expect(spans[0]!.endTime).toBeUndefined();
  });

  it('maps OTLP kind numbers to the API (INTERNAL=1 → 0, SERVER=2 → 1, UNSPECIFIED → 0)', () => {
    const kinds = [0, 1, 2, 3, 4, 5].map(
      (kind) => spansFromOtlpJson(request([{ ...baseSpan, kind }]))[0]!.kind,
    );
    expect(kinds).toEqual([0, 0, 1, 2, 3, 4]);
  });

  it('decodes every AnyValue: string, bool, int as string or number, double, bytes, array, nested kvlist', () => {
    const attrs = [
      { key: 's', value: { stringValue: 'a' } },
      { key: 'b', value: { boolValue: true } },
      { key: 'i', value: { intValue: '42' } },
      { key: 'inum', value: { intValue: 43 } },
      { key: 'big', value: { intValue: '9007199254740993' } },
      { key: 'd', value: { doubleValue: 1.5 } },
      { key: 'bytes', value: { bytesValue: 'AQI=' } },
      { key: 'arr', value: { arrayValue: { values: [{ stringValue: 'x' }, { intValue: '1' }] } } },
      {
        key: 'kv',
        value: {
          kvlistValue: {
            values: [
              {
                key: 'inner',
                value: { kvlistValue: { values: [{ key: 'z', value: { boolValue: false } }] } },
              },
            ],
          },
        },
      },
      { key: 'empty', value: {} },
    ];
    const problems: Problem[] = [];
    const [span] = spansFromOtlpJson(request([{ ...baseSpan, attributes: attrs }]), problems);
    expect(problems).toEqual([]);
    expect(span!.attributes).toEqual({
      s: 'a',
      b: true,
      i: 42,
      inum: 43,
      big: '9007199254740993',
      d: 1.5,
      bytes: 'AQI=',
      arr: ['x', 1],
      kv: { inner: { z: false } },
      empty: undefined,
    });
  });

  it('accepts JSON text, an array of requests and JSON Lines', () => {
    const one = request([baseSpan]);
    expect(spansFromOtlpJson(JSON.stringify(one))).toHaveLength(1);
    expect(spansFromOtlpJson([one, one])).toHaveLength(2);
    expect(spansFromOtlpJson(`${JSON.stringify(one)}\n${JSON.stringify(one)}\n`)).toHaveLength(2);
  });

  it('records and skips malformed spans and attributes, never throws', () => {
    const problems: Problem[] = [];
    const spans = spansFromOtlpJson(
      request([
        'not a span',
        { ...baseSpan, spanId: 'zz' },
        { ...baseSpan, traceId: undefined },
        { ...baseSpan, spanId: '0000000000000000' },
        { ...baseSpan, spanId: 'eee19b7ec3c1b175', parentSpanId: 'nope', name: undefined },
        {
          ...baseSpan,
          spanId: 'eee19b7ec3c1b176',
          attributes: [
            { value: { stringValue: 'no key' } },
            { key: 'bad', value: { weird: 1 } },
            { key: 'ok', value: { stringValue: 'y' } },
          ],
        },
      ]),
      problems,
    );
    expect(spans.map((s) => s.spanId)).toEqual(['eee19b7ec3c1b175', 'eee19b7ec3c1b176']);
    expect(spans[0]!.parentSpanId).toBeUndefined();
    expect(spans[0]!.name).toBe('');
    expect(spans[1]!.attributes).toEqual({ ok: 'y' });
    expect(problems.map((p) => p.code).sort()).toEqual(
      [
        'attribute_invalid',
        'attribute_invalid',
        'span_invalid',
        'span_invalid_parent_id',
        'span_missing_id',
        'span_missing_id',
        'span_missing_id',
        'span_missing_name',
      ].sort(),
    );
  });

  it('reports unreadable payloads as problems', () => {
    for (const payload of ['{not json', 42, null, { resourceSpans: 'x' }]) {
      const problems: Problem[] = [];
      expect(spansFromOtlpJson(payload, problems)).toEqual([]);
      expect(problems.length).toBeGreaterThan(0);
    }
  });

  it('reads 19-digit nanoseconds exactly as integer arithmetic does, and upper-case hex ids as lower case', () => {
    const times = [
      '1764000000000000123',
      '1764000000999999999',
      '0000001764000000000000001',
      '999999999999999',
    ];
    for (const t of times) {
      const [span] = spansFromOtlpJson(request([{ ...baseSpan, startTimeUnixNano: t }]));
      const ns = BigInt(t);
      expect(span!.startTime).toBe(Number(ns / 1_000_000n) + Number(ns % 1_000_000n) / 1e6);
    }
    const problems: Problem[] = [];
    const spans = spansFromOtlpJson(
      request([
        { ...baseSpan, traceId: TRACE_HEX.toUpperCase(), spanId: SPAN_HEX.toUpperCase() },
        { ...baseSpan, startTimeUnixNano: '17640000000000001x' },
        { ...baseSpan, traceId: '0'.repeat(32) },
        { ...baseSpan, traceId: `${TRACE_HEX.slice(0, 31)}g` },
      ]),
      problems,
    );
    expect(spans.map((s) => [s.traceId, s.spanId])).toEqual([
      [TRACE_HEX, SPAN_HEX],
      [TRACE_HEX, SPAN_HEX],
    ]);
    expect(problems.map((p) => p.code)).toEqual(['span_missing_start', 'span_missing_id', 'span_missing_id']);
  });

  it('keeps an empty value inside a kvlist as a present key, and fails the attribute on a bad nested value', () => {
    const problems: Problem[] = [];
    const [span] = spansFromOtlpJson(
      request([
        {
          ...baseSpan,
          attributes: [
            {
              key: 'm',
              value: {
                kvlistValue: {
                  values: [
                    { key: 'empty', value: {} },
                    { key: 'n', value: { intValue: '7' } },
                  ],
                },
              },
            },
            {
              key: 'bad',
              value: {
                arrayValue: { values: [{ stringValue: 'a' }, { arrayValue: { values: [{ nope: 1 }] } }] },
              },
            },
            { key: 'after', value: { boolValue: true } },
          ],
        },
      ]),
      problems,
    );
    expect(span!.attributes).toStrictEqual({ m: { n: 7, empty: undefined }, after: true });
    expect(problems).toEqual([
      expect.objectContaining({
        code: 'attribute_invalid',
        message: 'attribute "bad" has an unreadable value',
      }),
    ]);
  });

  it('decodes a 10,000-deep kvlist without overflowing the stack', () => {
    let value: Record<string, unknown> = { stringValue: 'leaf' };
    for (let i = 0; i < 10_000; i++) value = { kvlistValue: { values: [{ key: 'k', value }] } };
    const [span] = spansFromOtlpJson(request([{ ...baseSpan, attributes: [{ key: 'deep', value }] }]));
    let v: unknown = span!.attributes['deep'];
    let depth = 0;
    while (typeof v === 'object' && v !== null) {
      v = (v as Record<string, unknown>)['k'];
      depth++;
    }
    expect(depth).toBe(10_000);
    expect(v).toBe('leaf');
  });
});
