import { describe, expect, it } from 'vitest';
import { otlpJsonFromProtobuf } from '../../src/otlp/otlp-protobuf.js';
import { MAX_ANY_VALUE_DEPTH, otlpProtobufFromJson } from '../../src/otlp/otlp-protobuf-from-json.js';

function request(value: unknown) {
  return {
    resourceSpans: [
      {
        scopeSpans: [
          {
            spans: [
              {
                traceId: '0102030405060708090a0b0c0d0e0f10',
                spanId: '0102030405060708',
                name: 'root',
                startTimeUnixNano: '1000000',
                endTimeUnixNano: '2000000',
                attributes: [{ key: 'value', value }],
              },
            ],
          },
        ],
      },
    ],
  };
}

/** The attribute as the protobuf the gateway forwards decodes again. */
function roundTrip(value: unknown): unknown {
  const decoded = otlpJsonFromProtobuf(otlpProtobufFromJson(request(value))) as any;
  return decoded.resourceSpans[0].scopeSpans[0].spans[0].attributes[0].value;
}

function nested(depth: number): unknown {
  let text = '{"stringValue":"leaf"}';
  for (let i = 0; i < depth; i++) text = `{"arrayValue":{"values":[${text}]}}`;
  return JSON.parse(text);
}

describe('otlpProtobufFromJson, hostile values', () => {
  it('keeps a kvlist as its list of entries: duplicate keys, `__proto__` and key order', () => {
    // Parsed from text, as the gateway receives it: JSON.parse makes `__proto__` an own key.
    const value = JSON.parse(
      JSON.stringify({
        kvlistValue: {
          values: [
            { key: 'b', value: { stringValue: 'first b' } },
            { key: '10', value: { intValue: '10' } },
            { key: 'b', value: { stringValue: 'second b' } },
            {
              key: '__proto__',
              value: { kvlistValue: { values: [{ key: 'x', value: { boolValue: true } }] } },
            },
          ],
        },
      }),
    );
    // Before: the entries went through a JS object on the way, so the forwarded span had
    // lost the first `b` and the `__proto__` entry and put `10` first.
    expect(roundTrip(value)).toEqual({
      kvlistValue: {
        values: [
          { key: 'b', value: { stringValue: 'first b' } },
          { key: '10', value: { intValue: '10' } },
          { key: 'b', value: { stringValue: 'second b' } },
          {
            key: '__proto__',
            value: { kvlistValue: { values: [{ key: 'x', value: { boolValue: true } }] } },
          },
        ],
      },
    });
  });

  it(`encodes values nested ${MAX_ANY_VALUE_DEPTH} levels deep and refuses deeper ones with the path, not a stack overflow`, () => {
    let decoded = roundTrip(nested(MAX_ANY_VALUE_DEPTH - 1)) as any;
    for (let i = 0; i < MAX_ANY_VALUE_DEPTH - 1; i++) decoded = decoded.arrayValue.values[0];
    expect(decoded).toEqual({ stringValue: 'leaf' });
    let error: unknown;
    try {
      otlpProtobufFromJson(request(nested(100_000)));
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(RangeError);
    expect((error as Error).message).toMatch(
      new RegExp(
        `^\\$\\.resourceSpans\\[0\\]\\.scopeSpans\\[0\\]\\.spans\\[0\\]\\.attributes\\[0\\]\\.value(\\.arrayValue\\.values\\[0\\]){${MAX_ANY_VALUE_DEPTH}}: nested deeper than ${MAX_ANY_VALUE_DEPTH} levels$`,
      ),
    );
  });
});
