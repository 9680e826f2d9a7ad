// C14 relative times and C15 page versions, without a server: what "3 min ago" says for any pair of times, and that
// a live page's version moves with what it shows but not with ages that tick every second.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exact, relative } from '../../src/api/console/format.js';
import { versions } from '../../src/api/console/live.js';

const now = new Date('2026-12-02T12:00:00Z');

describe('C14 relative times', () => {
  it('C14 reads as an operator would: just now, 3 min ago, in 2 h, the date past 30 days', () => {
    expect(relative(new Date(now.getTime() - 2000), now)).toBe('just now');
    expect(relative(new Date(now.getTime() - 42_000), now)).toBe('42 s ago');
    expect(relative(new Date(now.getTime() - 3 * 60_000 - 5000), now)).toBe('3 min ago');
    expect(relative(new Date(now.getTime() + 2 * 3600_000), now)).toBe('in 2 h');
    expect(relative(new Date(now.getTime() - 3 * 86_400_000), now)).toBe('3 d ago');
    expect(relative(new Date('2026-10-01T08:00:00Z'), now)).toBe('2026-10-01');
    expect(exact(new Date('2026-12-02T12:18:07.123Z'))).toBe('2026-12-02 12:18:07 UTC');
  });

  it('C14 for any two times: past says "ago", future says "in", the count never exceeds the real distance', () => {
    fc.assert(
      fc.property(fc.integer({ min: -40 * 86_400_000, max: 40 * 86_400_000 }), (offset) => {
        const at = new Date(now.getTime() + offset);
        const text = relative(at, now);
        const seconds = Math.abs(Math.round(-offset / 1000)); // as relative() rounds now − at
        if (seconds < 5) {
          expect(text).toBe('just now');
          return;
        }
        if (seconds >= 30 * 86_400) {
          expect(text).toBe(at.toISOString().slice(0, 10));
          return;
        }
        const m = /^(?:in )?(\d+) (s|min|h|d)(?: ago)?$/.exec(text);
        expect(m, text).not.toBeNull();
        expect(text.startsWith('in ')).toBe(offset > 0);
        expect(text.endsWith(' ago')).toBe(offset < 0);
        const unit = { s: 1, min: 60, h: 3600, d: 86_400 }[m![2] as 's' | 'min' | 'h' | 'd'];
        expect(Number(m![1]) * unit).toBeLessThanOrEqual(seconds);
        expect((Number(m![1]) + 1) * unit).toBeGreaterThan(seconds);
      }),
      { seed: 20_261_202, numRuns: 500 },
    );
  });
});

describe('C15 live page versions', () => {
  const backlog = (pending: number, oldest: number) => ({
    inbound: {
      lastHour: { acked: 1, started: 1, posted: 1 },
      lastDay: { acked: 1, started: 1, posted: 1 },
      unstarted: { count: 0, oldestSeconds: oldest },
      manualReview: { count: 2, oldestSeconds: oldest },
    },
    outbound: {
      open: { PENDING: { count: pending, oldestSeconds: oldest }, RETRYING: { count: 0, oldestSeconds: 0 } },
      finished: { lastHour: { delivered: 0, failed: 0 }, lastDay: { delivered: 0, failed: 0 } },
    },
  });

  it('C15 the backlog version changes with a count, not with the oldest item getting older', () => {
    expect(versions.backlog(backlog(3, 10) as never)).toBe(versions.backlog(backlog(3, 99) as never));
    expect(versions.backlog(backlog(3, 10) as never)).not.toBe(versions.backlog(backlog(4, 10) as never));
    expect(versions.backlog(backlog(3, 10) as never)).toMatch(/^[A-Za-z0-9_-]{16}$/);
  });

  it('C15 the review queue version changes when an item comes, goes or moves on', () => {
    const a = { id: 'rec_a', updatedAt: new Date(1000) };
    const b = { id: 'rec_b', updatedAt: new Date(2000) };
    expect(versions.reviews([a, b])).toBe(versions.reviews([{ ...a }, { ...b }]));
    expect(versions.reviews([a])).not.toBe(versions.reviews([a, b]));
    expect(versions.reviews([a, b])).not.toBe(versions.reviews([a, { ...b, updatedAt: new Date(3000) }]));
  });
});
