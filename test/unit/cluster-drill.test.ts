// R22 (issue 34): the cluster drill's plan is a function of its seed (every target once, replayable), and its
// figures: windows, p99, the recovery time (a trailing 5 s rate back at 80% of the rate before the kill).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { figures, firstDeliveries, percentile, recoveredAt, windowOf } from '../../bench/cluster/metrics.js';
import { FULL_TARGETS, drillSchedule, nodeOf } from '../../bench/cluster/schedule.js';

describe('R22 cluster drill plan', () => {
  it('R22 every target exactly once, in an order the seed chooses and replays, replicas 1 or 2', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 }), (seed) => {
        const plan = drillSchedule(seed);
        expect(drillSchedule(seed)).toEqual(plan);
        expect([...plan.map((k) => k.target)].sort()).toEqual([...FULL_TARGETS].sort());
        for (const k of plan) {
          expect([1, 2]).toContain(k.index);
          expect(k.downS).toBeGreaterThanOrEqual(5);
          expect(k.afterS).toBeGreaterThanOrEqual(25);
        }
      }),
    );
    const orders = new Set(
      Array.from({ length: 20 }, (_, s) =>
        drillSchedule(s)
          .map((k) => k.target)
          .join(),
      ),
    );
    expect(orders.size).toBeGreaterThan(10);
  });

  it('R22 node names are scripts/cluster.sh nodes; the leader and the primary are resolved at the kill', () => {
    const names = drillSchedule(3).map(nodeOf);
    for (const n of names)
      expect(n).toMatch(/^(temporal-(history|matching)[12]|(api|worker|dispatcher)[12]|kafka-leader|pg-primary)$/);
    expect(
      drillSchedule(3, ['temporal-history', 'kafka-leader'])
        .map((k) => k.target)
        .sort(),
    ).toEqual(['kafka-leader', 'temporal-history']);
  });
});

describe('R22 cluster drill figures', () => {
  const steady = (from: number, to: number, perS: number, latencyMs = 100) =>
    Array.from({ length: Math.round(((to - from) / 1000) * perS) }, (_, i) => ({ at: from + (i * 1000) / perS, latencyMs }));

  it('R22 p99 and windows', () => {
    expect(percentile([], 99)).toBeNull();
    expect(
      percentile(
        Array.from({ length: 100 }, (_, i) => i + 1),
        99,
      ),
    ).toBe(99);
    expect(percentile([5], 99)).toBe(5);
    const w = windowOf(steady(0, 10_000, 4, 250), 0, 10_000);
    expect(w).toEqual({ deliveriesPerS: 4, p99Ms: 250, count: 40 });
  });

  it('R22 recovery: no dip reports the 5 s floor; a 12 s gap after the kill reports when the rate is back', () => {
    const kill = 20_000;
    const noDip = steady(0, 60_000, 4);
    expect(recoveredAt(noDip, kill + 5_000, 60_000, 4)).toBe(kill + 5_000);
    const gap = [...steady(0, kill, 4), ...steady(kill + 12_000, 60_000, 4)];
    const back = recoveredAt(gap, kill + 5_000, 60_000, 4)!;
    expect(back).toBeGreaterThan(kill + 12_000);
    expect(back).toBeLessThanOrEqual(kill + 17_500);
    expect(recoveredAt(steady(0, kill, 4), kill + 5_000, 60_000, 4)).toBeNull();
    const f = figures('temporal-history1', kill, kill + 8_000, 60_000, gap);
    expect(f.before.deliveriesPerS).toBe(4);
    expect(f.during.deliveriesPerS).toBeLessThan(4);
    expect(f.recoveredAt).toBe(back);
  });

  it('R22 first 2xx per delivery, its latency from the produce', () => {
    const posts = [
      { path: '/ok', eventId: 'e1', at: 1_500, answered2xx: true },
      { path: '/flaky', eventId: 'e1', at: 1_200, answered2xx: false },
      { path: '/flaky', eventId: 'e1', at: 3_000, answered2xx: true },
      { path: '/ok', eventId: 'e1', at: 4_000, answered2xx: true }, // a duplicate: not a second delivery
    ];
    expect(firstDeliveries(posts, new Map([['e1', 1_000]])).sort((a, b) => a.at - b.at)).toEqual([
      { at: 1_500, latencyMs: 500 },
      { at: 3_000, latencyMs: 2_000 },
    ]);
  });
});
