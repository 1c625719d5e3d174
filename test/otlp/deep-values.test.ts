import { describe, expect, it } from 'vitest';
import { spansFromOtlpJson } from '../../src/conventions/from-otlp-json.js';
import { otlpJsonFromProtobuf } from '../../src/otlp/otlp-protobuf.js';
import type { Problem } from '../../src/types.js';
import { deeplyNestedRequest } from '../fixtures/hostile/deep-request.js';

describe('otlpJsonFromProtobuf, deep values', () => {
  it('decodes an attribute nested 5,000 levels deep (no call-stack overflow) and keeps every level', () => {
    const depth = 5_000;
    const problems: Problem[] = [];
    const [span] = spansFromOtlpJson(otlpJsonFromProtobuf(deeplyNestedRequest(depth)), problems);
    expect(problems).toEqual([]);
    expect(span!.attributes['plain']).toBe('ok');
    let value = span!.attributes['deep'];
    for (let level = depth - 1; level >= 0; level--) {
      value = level % 2 === 0 ? (value as unknown[])[0] : (value as Record<string, unknown>)['k'];
    }
    expect(value).toBe('leaf');
  });
});
