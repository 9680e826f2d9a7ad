// A7 token bucket: burst, refill at the configured rate, Retry-After from the deficit, independent keys.
import { describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../src/lib/token-bucket.js';

describe('A7 token bucket', () => {
  it('A7 allows a burst, then refuses with the time until the next token, and refills at per_second', () => {
    let t = 0;
    const limiter = createRateLimiter({ per_second: 2, burst: 3 }, { now: () => t });
    expect([1, 2, 3].map(() => limiter.take('k').allowed)).toEqual([true, true, true]);
    expect(limiter.take('k')).toEqual({ allowed: false, retryAfterMs: 500 });
    t = 250;
    expect(limiter.take('k')).toEqual({ allowed: false, retryAfterMs: 250 });
    t = 500;
    expect(limiter.take('k').allowed).toBe(true);
    t = 60_000;
    expect([1, 2, 3, 4].map(() => limiter.take('k').allowed)).toEqual([true, true, true, false]);
  });

  it('A7 one key’s flood does not take another key’s tokens; a per-key limit overrides the default', () => {
    const limiter = createRateLimiter({ per_second: 1, burst: 1 }, { now: () => 0 });
    expect(limiter.take('a').allowed).toBe(true);
    expect(limiter.take('a').allowed).toBe(false);
    expect(limiter.take('b').allowed).toBe(true);
    const big = { per_second: 1, burst: 10 };
    expect(Array.from({ length: 10 }, () => limiter.take('c', big).allowed).every(Boolean)).toBe(true);
  });

  it('A7 memory is bounded: the least recently used bucket is dropped (it comes back full)', () => {
    const limiter = createRateLimiter({ per_second: 1, burst: 1 }, { now: () => 0, maxKeys: 2 });
    limiter.take('a');
    limiter.take('b');
    limiter.take('c'); // evicts a
    expect(limiter.take('a').allowed).toBe(true);
    expect(limiter.take('c').allowed).toBe(false);
  });
});
