// P9: bench/lib/tail-clustering.ts tells a stall from queueing: the slowest 1 % of a steady phase, placed by when the
// events fell due.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tailClustering } from '../../bench/lib/tail-clustering.js';

/** 200 events/s for 15 s, each `latency(i)` ms late. */
const phase = (latency: (i: number) => number) =>
  Array.from({ length: 3_000 }, (_, i) => ({ due: 1_000_000 + i * 5, latency: latency(i) }));

describe('P9 tail clustering', () => {
  it('P9 a stall: the slowest 1 % all fell due within one second, in a few 100 ms windows', () => {
    const stalled = tailClustering(phase((i) => (i >= 1_000 && i < 1_030 ? 300 : 5)));
    expect(stalled).toMatchObject({ count: 30, windows: 2, ofWindows: 150, busiestSecondShare: 100 });
  });

  it('P9 queueing: slow events spread over the phase fill many windows and no second holds most of them', () => {
    const spread = tailClustering(phase((i) => (i % 100 === 0 ? 300 : 5)));
    expect(spread.count).toBe(30);
    expect(spread.windows).toBe(30);
    expect(spread.busiestSecondShare).toBeLessThanOrEqual(10);
  });

  it('P9 for any phase: 1 % of the events (at least one), the counts within their bounds, the slowest first', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ due: fc.integer({ min: 0, max: 60_000 }), latency: fc.nat(5_000) }), {
          minLength: 1,
          maxLength: 500,
        }),
        (events) => {
          const t = tailClustering(events);
          expect(t.count).toBe(Math.max(1, Math.ceil(events.length / 100)));
          expect(t.windows).toBeGreaterThanOrEqual(1);
          expect(t.windows).toBeLessThanOrEqual(Math.min(t.count, t.ofWindows));
          expect(t.busiestSecondShare).toBeGreaterThan(0);
          expect(t.busiestSecondShare).toBeLessThanOrEqual(100);
          const slowestLatency = Math.min(...t.slowest.map((e) => e.latency));
          expect(events.filter((e) => e.latency > slowestLatency).length).toBeLessThan(t.count);
        },
      ),
    );
  });
});
