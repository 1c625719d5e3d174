import { describe, expect, it } from 'vitest';
import { JudgeLimiter } from '../../src/evaluation/judge-limiter.js';

describe('JudgeLimiter', () => {
  it('refuses beyond max_concurrent until a slot is released', () => {
    const limiter = new JudgeLimiter({ maxPerMinute: 100, maxConcurrent: 2 }, () => 0);
    expect(limiter.tryAcquire()).toBe(true);
    expect(limiter.tryAcquire()).toBe(true);
    expect(limiter.tryAcquire()).toBe(false);
    limiter.release();
    expect(limiter.tryAcquire()).toBe(true);
    expect(limiter.active).toBe(2);
  });

  it('refuses beyond max_per_minute in a sliding window (fake clock)', () => {
    let now = 1_000_000;
    const limiter = new JudgeLimiter({ maxPerMinute: 3, maxConcurrent: 10 }, () => now);
    for (let i = 0; i < 3; i++) {
      expect(limiter.tryAcquire()).toBe(true);
      limiter.release();
      now += 10_000;
    }
    // t = +30 s: three calls in the last minute.
    expect(limiter.tryAcquire()).toBe(false);
    now = 1_000_000 + 59_999;
    expect(limiter.tryAcquire()).toBe(false);
    // The first call (at +0) leaves the window at +60 s.
    now = 1_000_000 + 60_000;
    expect(limiter.tryAcquire()).toBe(true);
    limiter.release();
    expect(limiter.tryAcquire()).toBe(false);
    now = 1_000_000 + 70_000;
    expect(limiter.tryAcquire()).toBe(true);
  });

  it('counts refused attempts against nothing', () => {
    let now = 0;
    const limiter = new JudgeLimiter({ maxPerMinute: 1, maxConcurrent: 1 }, () => now);
    expect(limiter.tryAcquire()).toBe(true);
    for (let i = 0; i < 10; i++) expect(limiter.tryAcquire()).toBe(false);
    limiter.release();
    now = 60_000;
    expect(limiter.tryAcquire()).toBe(true);
  });

  it('never allows anything with a zero budget, and release never goes negative', () => {
    const limiter = new JudgeLimiter({ maxPerMinute: 0, maxConcurrent: 2 }, () => 0);
    limiter.release();
    expect(limiter.active).toBe(0);
    expect(limiter.tryAcquire()).toBe(false);
  });
});
