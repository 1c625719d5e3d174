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
