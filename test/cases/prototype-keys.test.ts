import { describe, expect, it } from 'vitest';
import { CasesError, parseCasesText } from '../../src/cases/load-cases.js';

describe('`__proto__` keys in case files', () => {
  it('refuses them in a JSON Lines case file by path, not as "expected a scorer mapping"', () => {
    const text = `${JSON.stringify({ id: 'a', input: 'hi', expected_tools: ['x'] })}\n{"id":"b","input":"hi","expected_tools":["x"],"__proto__":{"forbidden_tools":["x"]}}\n`;
    let error: unknown;
    try {
      parseCasesText(text, 'cases.jsonl');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(CasesError);
    expect((error as CasesError).problems).toEqual([
      { path: 'cases[1].__proto__', message: '`__proto__` cannot be a key' },
    ]);
  });
});
