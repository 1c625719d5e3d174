import { describe, expect, it } from 'vitest';
import { raceAbort } from '../../src/processor/race-abort.js';

describe('raceAbort', () => {
  it('settles with the promise when it wins', async () => {
    await expect(raceAbort(Promise.resolve(7), new AbortController().signal)).resolves.toBe(7);
    await expect(raceAbort(Promise.reject(new Error('no')), new AbortController().signal)).rejects.toThrow(
      'no',
    );
  });

  it('rejects with the reason as soon as the signal aborts, even if the promise never settles', async () => {
    const abort = new AbortController();
    const raced = raceAbort(new Promise(() => {}), abort.signal);
    abort.abort(new Error('timed out'));
    await expect(raced).rejects.toThrow('timed out');
    await expect(raceAbort(Promise.resolve(1), abort.signal)).rejects.toThrow('timed out');
  });
});
