import { describe, expect, it } from 'vitest';
import { classify } from '../../src/conventions/classify.js';
import { spansFromOtlpJson } from '../../src/conventions/from-otlp-json.js';
import type { Problem } from '../../src/types.js';

const TRACE = '0102030405060708090a0b0c0d0e0f10';

function request(attributes: unknown[]) {
  // Through JSON text, as every input arrives: JSON.parse makes `__proto__` an own key.
  return JSON.parse(
    JSON.stringify({
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                {
                  traceId: TRACE,
                  spanId: '0102030405060708',
                  name: 'GET /',
                  startTimeUnixNano: '1000000',
                  endTimeUnixNano: '2000000',
                  attributes,
                },
              ],
            },
          ],
        },
      ],
    }),
  );
}

describe('spansFromOtlpJson, hostile keys', () => {
  it('keeps a `__proto__` attribute key as an attribute: it never becomes the record’s prototype', () => {
    const problems: Problem[] = [];
    const [span] = spansFromOtlpJson(
      request([
        {
          key: '__proto__',
          value: {
            kvlistValue: {
              values: [
                { key: 'gen_ai.operation.name', value: { stringValue: 'invoke_agent' } },
                { key: 'gen_ai.agent.name', value: { stringValue: 'forged' } },
              ],
            },
          },
        },
        {
          key: 'nested',
          value: { kvlistValue: { values: [{ key: '__proto__', value: { stringValue: 'kept' } }] } },
        },
      ]),
      problems,
    );
    expect(problems).toEqual([]);
    const attributes = span!.attributes;
    expect(Object.getPrototypeOf(attributes)).toBe(Object.prototype);
    expect(Object.keys(attributes)).toEqual(['__proto__', 'nested']);
    expect(Object.getOwnPropertyDescriptor(attributes, '__proto__')?.value).toEqual({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'forged',
    });
    // Before: the kvlist was the attributes' prototype, so this plain span read as an agent.
    expect(attributes['gen_ai.operation.name']).toBeUndefined();
    expect(classify(span!)).not.toBe('agent');
    const nested = attributes['nested'] as Record<string, unknown>;
    expect(Object.getOwnPropertyDescriptor(nested, '__proto__')?.value).toBe('kept');
  });
});

describe('spansFromOtlpJson, AnyValue scalars of the wrong type', () => {
  it('records and skips them instead of coercing them into data', () => {
    const problems: Problem[] = [];
    const bad = {
      s_object: { stringValue: { nested: 'x' } },
      s_array: { stringValue: ['x'] },
      b_word: { boolValue: 'yes' },
      b_number: { boolValue: 1 },
      i_empty: { intValue: '' },
      i_fraction: { intValue: 1.5 },
      i_exponent: { intValue: '1e3' },
      i_hex: { intValue: '0x10' },
      i_array: { intValue: [] },
      d_empty: { doubleValue: '' },
      d_array: { doubleValue: [] },
      d_object: { doubleValue: {} },
      y_number: { bytesValue: 5 },
    };
    const good = {
      s: { stringValue: 'text' },
      s_number: { stringValue: 7 },
      b: { boolValue: false },
      b_text: { boolValue: 'true' },
      i: { intValue: '-42' },
      i_number: { intValue: 43 },
      i_big: { intValue: '9007199254740993' },
      d: { doubleValue: 1.5 },
      d_text: { doubleValue: '2.5' },
      d_nan: { doubleValue: 'NaN' },
      d_inf: { doubleValue: '-Infinity' },
      y: { bytesValue: 'AQI=' },
    };
    const [span] = spansFromOtlpJson(
      request(Object.entries({ ...bad, ...good }).map(([key, value]) => ({ key, value }))),
      problems,
    );
    // Before: all but i_array and d_object were coerced: "[object Object]", "x", false,
    // false, 0, 1.5, 1000, 16, 0, 0 and "5", with no problem recorded.
    expect(span!.attributes).toEqual({
      s: 'text',
      s_number: '7',
      b: false,
      b_text: true,
      i: -42,
      i_number: 43,
      i_big: '9007199254740993',
      d: 1.5,
      d_text: 2.5,
      d_nan: Number.NaN,
      d_inf: Number.NEGATIVE_INFINITY,
      y: 'AQI=',
    });
    expect(problems.map((p) => p.message)).toEqual(
      Object.keys(bad).map((key) => `attribute "${key}" has an unreadable value`),
    );
  });
});

describe('spansFromOtlpJson, envelopes and spans of the wrong shape', () => {
  it('records every part it skips: entries that are not objects, lists that are not lists, an unreadable end', () => {
    const problems: Problem[] = [];
    const good = request([])['resourceSpans'][0];
    const spans = spansFromOtlpJson(
      {
        resourceSpans: [
          'not a resource',
          { scopeSpans: { spans: [] } },
          { scopeSpans: [42, { spans: { traceId: TRACE } }] },
          {
            scopeSpans: [
              {
                spans: [
                  {
                    traceId: TRACE,
                    spanId: '0a0b0c0d0e0f0102',
                    name: 'x',
                    startTimeUnixNano: '1000000',
                    endTimeUnixNano: 'soon',
                    events: ['not an event'],
                  },
                ],
              },
            ],
          },
          good,
        ],
      },
      problems,
    );
    expect(spans.map((s) => s.spanId)).toEqual(['0a0b0c0d0e0f0102', '0102030405060708']);
    expect(spans[0]!.endTime).toBeUndefined();
    // Before: only the span with its events and end was kept, and nothing was recorded.
    expect(problems.map((p) => `${p.code}: ${p.message}`)).toEqual([
      'otlp_invalid_payload: resourceSpans entry is string, not an object',
      'otlp_invalid_payload: scopeSpans is object, not an array',
      'otlp_invalid_payload: scopeSpans entry is number, not an object',
      'otlp_invalid_payload: spans is object, not an array',
      'span_invalid_end: span has an unreadable end time',
      'event_invalid: event is string, not an object',
    ]);
  });
});
