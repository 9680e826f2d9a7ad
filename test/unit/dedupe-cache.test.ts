// I5 the fast dedupe cache: answers within dedupe_store_ttl_days, forgets after (the registry then answers), bounded.
import { describe, expect, it } from 'vitest';
import { createDedupeCache } from '../../src/inbound/dedupe-cache.js';

describe('I5 dedupe cache', () => {
  it('I5 remembers an event for the TTL and forgets it after, on the injected clock', () => {
    let now = 0;
    const cache = createDedupeCache({ ttlMs: 7 * 86_400_000, now: () => now });
    cache.add('p', 'evt_1');
    now = 7 * 86_400_000 - 1;
    expect(cache.has('p', 'evt_1')).toBe(true);
    expect(cache.has('other', 'evt_1')).toBe(false);
    now = 7 * 86_400_000;
    expect(cache.has('p', 'evt_1')).toBe(false);
    expect(cache.size).toBe(0);
  });

  it('I5 a hit does not extend the TTL, and the least recently seen entry is evicted first', () => {
    let now = 0;
    const cache = createDedupeCache({ ttlMs: 100, maxEntries: 2, now: () => now });
    cache.add('p', 'a');
    cache.add('p', 'b');
    now = 50;
    expect(cache.has('p', 'a')).toBe(true); // a is now the most recent
    cache.add('p', 'c'); // evicts b
    expect(cache.has('p', 'b')).toBe(false);
    expect(cache.has('p', 'c')).toBe(true);
    now = 100;
    expect(cache.has('p', 'a')).toBe(false);
  });
});
