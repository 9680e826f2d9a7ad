// Token buckets keyed by a name (an API key, a provider), A7: each key refills `perSecond` tokens up to `burst`;
// a request takes one or is told how long until one is there. One bucket per key, so one key's flood never
// drains another's. In memory, per process: with N API replicas the effective limit is N times the profile's.

export interface RateLimit {
  per_second: number;
  burst: number;
}

export type Take = { allowed: true } | { allowed: false; retryAfterMs: number };

export interface RateLimiter {
  take(key: string, limit?: RateLimit): Take;
  /** What `take` would answer, without taking (A17: a throttle that only counts failures checks first). */
  peek(key: string, limit?: RateLimit): Take;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** `maxKeys` bounds memory against a caller inventing keys: the least recently used buckets are dropped first. */
export function createRateLimiter(defaults: RateLimit, options: { now?: () => number; maxKeys?: number } = {}): RateLimiter {
  const now = options.now ?? (() => performance.now());
  const maxKeys = options.maxKeys ?? 10_000;
  const buckets = new Map<string, Bucket>();

  const refill = (key: string, limit: RateLimit, t: number) => {
    const previous = buckets.get(key);
    return previous ? Math.min(limit.burst, previous.tokens + ((t - previous.at) / 1000) * limit.per_second) : limit.burst;
  };
  const wait = (tokens: number, limit: RateLimit) => Math.ceil(((1 - tokens) / limit.per_second) * 1000);

  return {
    peek(key, limit = defaults) {
      const tokens = refill(key, limit, now());
      return tokens >= 1 ? { allowed: true } : { allowed: false, retryAfterMs: wait(tokens, limit) };
    },
    take(key, limit = defaults) {
      const t = now();
      const refilled = refill(key, limit, t);
      buckets.delete(key); // re-inserted below: Map order is recency order
      if (refilled >= 1) {
        buckets.set(key, { tokens: refilled - 1, at: t });
        if (buckets.size > maxKeys) buckets.delete(buckets.keys().next().value!);
        return { allowed: true };
      }
      buckets.set(key, { tokens: refilled, at: t });
      return { allowed: false, retryAfterMs: wait(refilled, limit) };
    },
  };
}
