import { describe, expect, it } from 'vitest';
import { mergeAttributes, withField } from '../../src/util/merge-attributes.js';

describe('mergeAttributes', () => {
  it('copies base then over, over winning, in spread order', () => {
    const base = { 'service.name': 'shop', shared: 1 };
    const over = { shared: 2, 'gen_ai.agent.name': 'refunds' };
    const merged = mergeAttributes<Record<string, unknown>>(base, over);
    expect(merged).toEqual({ ...base, ...over });
    expect(Object.keys(merged)).toEqual(Object.keys({ ...base, ...over }));
    expect(merged).not.toBe(over);
    expect(base).toEqual({ 'service.name': 'shop', shared: 1 });
  });

  it('copies over alone when there is no base', () => {
    const over = { a: 1 };
    const merged = mergeAttributes(undefined, over);
    expect(merged).toEqual({ a: 1 });
    expect(merged).not.toBe(over);
  });

  it('keeps a __proto__ attribute as a key, like spread, without touching the prototype', () => {
    const over = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    const merged = mergeAttributes<Record<string, unknown>>({ b: 2 }, over);
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(Object.hasOwn(merged, '__proto__')).toBe(true);
    expect((merged as { polluted?: unknown }).polluted).toBeUndefined();
  });
});

describe('withField', () => {
  it('equals a spread with the field added last', () => {
    const call = { name: 'get', callId: 'c1' };
    const out = withField(call, 'spanId', 's1');
    expect(out).toEqual({ ...call, spanId: 's1' });
    expect(Object.keys(out)).toEqual(['name', 'callId', 'spanId']);
    expect(call).toEqual({ name: 'get', callId: 'c1' });
  });

  it('keeps a __proto__ key as a key', () => {
    const record = JSON.parse('{"__proto__": {"x": 1}, "name": "n"}') as Record<string, unknown>;
    const out = withField(record, 'spanId', 's');
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect(out['spanId']).toBe('s');
  });
});
