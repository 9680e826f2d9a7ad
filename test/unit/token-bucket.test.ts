// A7 token bucket: burst, refill at the configured rate, Retry-After from the deficit, independent keys; A17's
// failure throttle over it and the client address it counts by.
import { describe, expect, it } from 'vitest';
import type { FailureBuckets } from '../../src/access/failure-buckets.js';
import { createCredentialThrottle } from '../../src/api/middleware/credential-throttle.js';
import { clientAddress } from '../../src/api/middleware/client-address.js';
import { createRateLimiter, type RateLimit } from '../../src/lib/token-bucket.js';

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

  it('A17 peek answers what take would, without taking', () => {
    const limiter = createRateLimiter({ per_second: 1, burst: 1 }, { now: () => 0 });
    expect(limiter.peek('a').allowed).toBe(true);
    expect(limiter.peek('a').allowed).toBe(true);
    expect(limiter.take('a').allowed).toBe(true);
    expect(limiter.peek('a')).toEqual({ allowed: false, retryAfterMs: 1000 });
  });
});

/** The shared buckets' semantics over in-memory token buckets (the PostgreSQL ones: test/integration/throttle-proxies). */
function memoryBuckets(now: () => number): FailureBuckets {
  const scopes = new Map<string, ReturnType<typeof createRateLimiter>>();
  const of = (scope: string, limit: RateLimit) => {
    if (!scopes.has(scope)) scopes.set(scope, createRateLimiter(limit, { now }));
    return scopes.get(scope)!;
  };
  return {
    take: async (scope, key, limit) => of(scope, limit).take(key, limit),
    peek: async (scope, key, limit) => of(scope, limit).peek(key, limit),
  };
}

describe('A17 credential throttle', () => {
  it('A17 A23 failures past the address budget or the key id budget answer a wait; other addresses and keys are untouched', async () => {
    let t = 0;
    const throttle = createCredentialThrottle(
      memoryBuckets(() => t),
      {
        perAddress: { per_second: 1, burst: 3 },
        perKey: { per_second: 0.5, burst: 2 },
      },
    );
    const key = `apk_${'0'.repeat(26)}_wrong`;
    expect(await throttle.failed('a', key)).toBeUndefined();
    expect(await throttle.failed('b', key)).toBeUndefined();
    expect(await throttle.failed('c', key)).toBe(2); // the key's third wrong secret: 429, retry in 2 s
    expect(await throttle.failed('d', 'junk')).toBeUndefined();
    expect(await throttle.failed('d', 'junk')).toBeUndefined();
    expect(await throttle.failed('d', 'junk')).toBeUndefined();
    expect(await throttle.blocked('d')).toBe(1);
    expect(await throttle.failed('d', 'junk')).toBe(1);
    expect(await throttle.failed('e', 'junk')).toBeUndefined();
    expect(await throttle.blocked('c')).toBeUndefined(); // c's own budget is untouched by the key's
    t = 1000;
    expect(await throttle.blocked('d')).toBeUndefined();
    expect(await throttle.failed('d', 'junk')).toBeUndefined();
  });

  it('A17 the client address: the socket peer, IPv4-mapped as IPv4, IPv6 by its /64', () => {
    const at = (remoteAddress?: string) =>
      clientAddress({ env: remoteAddress ? { remoteAddress } : undefined, get: () => undefined } as never);
    expect(at('203.0.113.7')).toBe('203.0.113.7');
    expect(at('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(at('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(at('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(at('2001:0db8:0001:0002::ffff')).toBe('2001:db8:1:2::/64');
    expect(at('64:ff9b::192.0.2.1')).toBe('64:ff9b:0:0::/64');
    expect(at()).toBe('unknown');
  });
});
