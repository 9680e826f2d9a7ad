// P7: the reconciliation start budget spreads a burst of starts over time and never exceeds its rate.
import { describe, expect, it } from 'vitest';
import { startRateLimiter } from '../../src/inbound/start-rate.js';

describe('P7 the reconciliation start rate limiter', () => {
  it('P7 0 means unlimited: every start goes at once', async () => {
    const limiter = startRateLimiter(0);
    const t0 = performance.now();
    await Promise.all(Array.from({ length: 1000 }, () => limiter.acquire()));
    expect(performance.now() - t0).toBeLessThan(200);
  });

  it('P7 a burst of 3 s worth at 20/s: one second of it at once, the rest spread at the rate, in order', async () => {
    const limiter = startRateLimiter(20);
    const t0 = performance.now();
    const at: number[] = [];
    await Promise.all(Array.from({ length: 60 }, (_, i) => limiter.acquire().then(() => (at[i] = performance.now() - t0))));
    expect(at.slice(0, 20).every((t) => t < 100)).toBe(true);
    for (let i = 1; i < at.length; i += 1) expect(at[i]!).toBeGreaterThanOrEqual(at[i - 1]!);
    // 40 starts beyond the burst at 20/s take 2 s (timers may fire late, never early).
    expect(at[59]!).toBeGreaterThanOrEqual(1_950 - 5);
    expect(at[59]!).toBeLessThan(4_000);
  });
});
