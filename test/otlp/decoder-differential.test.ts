import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { spansFromOtlpJson } from '../../src/conventions/from-otlp-json.js';
import type { Problem } from '../../src/types.js';
import { otlpFixtures } from '../helpers/recorded-fixtures.js';
import { spansFromOtlpJson as previousSpansFromOtlpJson } from './previous-from-otlp-json.js';

/** Both decoders on the same input: spans and problems, as plain data. */
function both(payload: unknown): { now: unknown; before: unknown } {
  const nowProblems: Problem[] = [];
  const beforeProblems: Problem[] = [];
  const now = spansFromOtlpJson(payload, nowProblems);
  const before = previousSpansFromOtlpJson(payload, beforeProblems);
  return {
    now: { spans: now, problems: nowProblems },
    before: { spans: before, problems: beforeProblems },
  };
}

const span = (traceId: unknown, spanId: unknown, parentSpanId?: unknown) => ({
  traceId,
  spanId,
  ...(parentSpanId === undefined ? {} : { parentSpanId }),
  name: 's',
  startTimeUnixNano: '1764000000000000000',
  endTimeUnixNano: '1764000000001000000',
  attributes: [{ key: 'k', value: { stringValue: 'v' } }],
});

const request = (spans: unknown[]) => ({ resourceSpans: [{ scopeSpans: [{ spans }] }] });

describe('OTLP/JSON decoder: the same spans and problems as the previous decoder', () => {
  const files = otlpFixtures();

  it('for every recorded fixture, alone and one after another (the id caches cross calls)', () => {
    expect(files.length).toBeGreaterThan(50);
    for (const file of files) {
      const { now, before } = both(JSON.parse(readFileSync(file, 'utf8')));
      expect(now, file).toEqual(before);
      expect((now as { spans: unknown[] }).spans.length, file).toBeGreaterThan(0);
    }
    // All fixtures as one JSON Lines text: consecutive requests, ids repeated across them.
    const lines = files.map((f) => JSON.stringify(JSON.parse(readFileSync(f, 'utf8')))).join('\n');
    const { now, before } = both(lines);
    expect(now).toEqual(before);
  });

  it('with the same keys in the same order, whatever fields a span has or lacks', () => {
    // toEqual ignores key order; serialised spans and anything that lists their keys do not.
    const full = {
      ...span('0af7651916cd43dd8448eb211c80319c', '00f067aa0ba902b7', 'b7ad6b7169203331'),
      events: [{ name: 'e', timeUnixNano: '1764000000000500000', attributes: [] }],
    };
    const variants: unknown[] = [
      full,
      { ...full, parentSpanId: undefined },
      { ...full, endTimeUnixNano: undefined },
      { ...full, endTimeUnixNano: '0' },
      { ...full, droppedAttributesCount: 3 },
      { ...full, events: undefined, status: { code: 2, message: 'boom' } },
    ];
    const requests: unknown[] = [];
    for (const v of variants) {
      requests.push(request([v]));
      requests.push({ resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ spans: [v] }] }] });
      requests.push({
        resourceSpans: [
          {
            resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] },
            scopeSpans: [{ scope: { name: 'lib', version: '1' }, spans: [v] }],
          },
        ],
      });
    }
    for (const file of otlpFixtures()) requests.push(JSON.parse(readFileSync(file, 'utf8')));
    for (const r of requests) {
      const { now, before } = both(r);
      expect(JSON.stringify(now)).toBe(JSON.stringify(before));
    }
  });

  it('for ids the caches could get wrong: repeated, upper case, base64, zero, invalid, not strings', () => {
    const t = '0af7651916cd43dd8448eb211c80319c';
    const tUpper = t.toUpperCase();
    const tBase64 = Buffer.from(t, 'hex').toString('base64');
    const p = 'b7ad6b7169203331';
    const cases: unknown[] = [
      request([span(t, '00f067aa0ba902b7'), span(t, '00f067aa0ba902b8', p), span(t, '00f067aa0ba902b9', p)]),
      request([span(tUpper, '00f067aa0ba902b7', p.toUpperCase()), span(tUpper, '00f067aa0ba902b8', p)]),
      request([span(tBase64, Buffer.from(p, 'hex').toString('base64')), span(tBase64, '00f067aa0ba902b8')]),
      request([span('0'.repeat(32), '00f067aa0ba902b7'), span('0'.repeat(32), '00f067aa0ba902b8')]),
      request([span(t, '00f067aa0ba902b7', '0'.repeat(16)), span(t, '00f067aa0ba902b8', '0'.repeat(16))]),
      request([span(t, '00f067aa0ba902b7', 'not-an-id'), span(t, '00f067aa0ba902b8', 'not-an-id')]),
      request([
        span('xyz', '00f067aa0ba902b7'),
        span('xyz', '00f067aa0ba902b8'),
        span(t, '1111111111111111'),
      ]),
      request([
        span(42, '00f067aa0ba902b7'),
        span(null, '00f067aa0ba902b8', 42),
        span(t, '2222222222222222', null),
      ]),
      request([span(t.slice(2), '00f067aa0ba902b7'), span(`${t}00`, '00f067aa0ba902b8')]),
    ];
    // Each alone, then all in a row (the cache state one request leaves is the next one's).
    for (const c of cases) {
      const { now, before } = both(c);
      expect(now).toEqual(before);
    }
    const { now, before } = both(cases);
    expect(now).toEqual(before);
  });

  it('for random requests built from a small alphabet of ids (so ids repeat and collide)', () => {
    const id = (hexLength: number) =>
      fc.oneof(
        fc.constantFrom(
          '0af7651916cd43dd8448eb211c80319c',
          '0AF7651916CD43DD8448EB211C80319C',
          'b7ad6b7169203331',
        ),
        fc.constantFrom('', '0'.repeat(hexLength), 'zz', 'CvdlGRbNQ92ESOshHIAxnA==', 't61rcWkgMzE='),
        fc.string({ unit: fc.constantFrom(...'0aF'), minLength: hexLength, maxLength: hexLength }),
        fc.constant(undefined),
        fc.integer(),
      );
    const anySpan = fc.record({
      traceId: id(32),
      spanId: id(16),
      parentSpanId: id(16),
      name: fc.oneof(fc.string(), fc.constant(undefined)),
      startTimeUnixNano: fc.oneof(fc.constant('1764000000000000001'), fc.bigInt().map(String), fc.integer()),
    });
    fc.assert(
      fc.property(fc.array(fc.array(anySpan, { maxLength: 6 }), { maxLength: 4 }), (requests) => {
        const payload = requests.map((spans) => request(spans));
        const { now, before } = both(payload);
        expect(now).toEqual(before);
      }),
      { numRuns: 500 },
    );
  });
});
