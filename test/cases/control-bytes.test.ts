import { describe, expect, it } from 'vitest';
import { CasesError, parseCasesText } from '../../src/cases/load-cases.js';

describe('case file errors on a terminal', () => {
  it('escape control bytes the file carries (a JSON error quotes the text it stopped at)', () => {
    let error: unknown;
    try {
      parseCasesText('\u001b[2J\u001b]0;pwned\u0007 not json\n', 'cases.jsonl');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(CasesError);
    const message = (error as Error).message;
    // Before: the screen-clear and title sequences were printed as they are.
    expect(message).toContain('\\x1b[2J');
    expect(message).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  });
});
