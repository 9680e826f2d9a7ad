// The public ids (src/shared/ids.ts): prefix, 26 lowercase Crockford base32 characters of a ULID whose first 10 carry
// the time, so ids sort by when they were minted and idFloor bounds a time range; the random part is drawn from a
// pooled buffer (P14: the ulid package asked the kernel once per character, 1 s of dispatcher CPU per 20,000
// deliveries), so it must stay unique and uniform over many draws and across pool refills.
import fc from 'fast-check';
import { decodeTime } from 'ulid';
import { describe, expect, it } from 'vitest';
import { idFloor, newId, type IdPrefix } from '../../src/shared/ids.js';

const prefixes: IdPrefix[] = ['whd', 'we', 'evt', 'ltx', 'aud'];

describe('newId', () => {
  it('is the prefix and a lowercase ULID that decodes to the time it was minted', () => {
    fc.assert(
      fc.property(fc.constantFrom(...prefixes), (prefix) => {
        const before = Date.now();
        const id = newId(prefix);
        const after = Date.now();
        expect(id).toMatch(new RegExp(`^${prefix}_[0-9a-hjkmnp-tv-z]{26}$`));
        const at = decodeTime(id.slice(prefix.length + 1).toUpperCase());
        expect(at).toBeGreaterThanOrEqual(before);
        expect(at).toBeLessThanOrEqual(after);
      }),
    );
  });

  it('never repeats and spreads its random characters evenly, across many pool refills', () => {
    const n = 200_000;
    const seen = new Set<string>();
    const counts = new Map<string, number>();
    for (let i = 0; i < n; i++) {
      const id = newId('whd');
      seen.add(id);
      for (const c of id.slice(14)) counts.set(c, (counts.get(c) ?? 0) + 1);
    }
    expect(seen.size).toBe(n);
    expect(counts.size).toBe(32);
    const expected = (n * 16) / 32;
    for (const count of counts.values()) expect(Math.abs(count - expected) / expected).toBeLessThan(0.03);
  });

  it('sorts after idFloor of any earlier instant and before that of a later one', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 ** 9 }), (ms) => {
        const id = newId('whd');
        expect(idFloor('whd', new Date(Date.now() - ms)) < id).toBe(true);
        expect(idFloor('whd', new Date(Date.now() + ms)) > id).toBe(true);
      }),
    );
  });
});
