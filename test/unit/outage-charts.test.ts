// C17: the rules behind an endpoint's outage charts, without a database: the backlog at each bucket's end (never
// negative; each step is the bucket's arrivals minus its completions; equal to a brute-force count), the outage spans
// found in attempt buckets, the recovery ramp's allowance per bucket, the finer ranges, and the bands as drawn.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AttemptBucket } from '../../src/outbound/charts.js';
import { backlogFromRows, backlogPoints, coveredPoints, drainedAt, outageSpans } from '../../src/outbound/outage.js';
import { allowedBetween, rampAllowance, rampBand } from '../../src/outbound/ramp-allowance.js';
import { bucketLabel, chartWindow, CHART_RANGES } from '../../src/shared/chart-window.js';
import { idFloor, newId } from '../../src/shared/ids.js';
import { renderChart } from '../../src/api/console/charts/svg.js';

const RAMP = {
  jitter: 0.2,
  ramp: true,
  ramp_after: 30_000,
  ramp_start_per_second: 5,
  ramp_interval: 10_000,
  ramp_max_per_second: 100,
};
const bucket = (ok: number, failed: number): AttemptBucket => ({
  ok,
  clientError: 0,
  serverError: failed,
  timeout: 0,
  other: 0,
  p50Ms: null,
  p99Ms: null,
});

describe('C17 backlog per bucket', () => {
  const now = new Date('2026-12-06T12:34:56Z');
  const w = chartWindow('1h', now);
  const span = w.to.getTime() - w.from.getTime();
  // Deliveries created from an hour before the window to now, final (or not yet) after their creation, by now.
  const rows = fc.array(
    fc
      .tuple(fc.integer({ min: -3_600_000, max: span }), fc.option(fc.integer({ min: 0, max: 2 * span }), { nil: null }))
      .map(([c, wait]) => {
        const created = new Date(Math.min(now.getTime() - 1, w.from.getTime() + c));
        const final = wait === null ? null : new Date(Math.min(now.getTime(), created.getTime() + Math.max(1, wait)));
        return { created, final };
      }),
    { maxLength: 60 },
  );

  it('C17 the backlog is never negative, equals a brute-force count at each bucket’s end, and steps by arrivals minus completions', () => {
    fc.assert(
      fc.property(rows, (list) => {
        const got = backlogFromRows(w, now, list);
        const points = backlogPoints(w, now);
        const waitingAt = (p: Date) => list.filter((r) => r.created < p && (r.final === null || r.final > p));
        points.forEach((p, i) => {
          const waiting = waitingAt(p);
          expect(got.waiting[i]).toBe(waiting.length);
          expect(got.waiting[i]).toBeGreaterThanOrEqual(0);
          const oldest = waiting.length ? Math.min(...waiting.map((r) => r.created.getTime())) : null;
          expect(got.oldestS[i]).toBe(oldest === null ? null : Math.round((p.getTime() - oldest) / 1000));
          // Sums match: the step from the previous point is what arrived minus what finished in between.
          const prev = i === 0 ? w.from : points[i - 1]!;
          const before = i === 0 ? waitingAt(w.from).length : got.waiting[i - 1]!;
          const arrived = list.filter((r) => r.created >= prev && r.created < p).length;
          const done = list.filter((r) => r.final !== null && r.final > prev && r.final <= p).length;
          expect(got.waiting[i]).toBe(before + arrived - done);
        });
      }),
      { numRuns: 150 },
    );
  });

  it('C17 a delivery waits at the points between its creation and its final state, none when both fall in one bucket', () => {
    const at = (m: number, s = 0) => new Date(w.from.getTime() + m * 60_000 + s * 1000);
    expect(coveredPoints(w, at(5, 10), at(5, 50))).toBeNull();
    expect(coveredPoints(w, at(5, 10), at(8, 0))).toEqual([5, 6]); // done at 08:00 exactly: not waiting then
    expect(coveredPoints(w, at(5, 10), at(8, 1))).toEqual([5, 7]);
    expect(coveredPoints(w, at(-90), null)).toEqual([0, 59]);
    expect(coveredPoints(w, at(-90), at(-30))).toBeNull();
    expect(drainedAt([0, 3, 2, 0, 1], 1)).toBe(3);
    expect(drainedAt([0, 3, 2], 1)).toBe(-1);
  });

  it('C17 delivery ids bound a time range: the floor of a time sorts below every id minted after it', () => {
    const before = new Date(Date.now() - 1000);
    expect(idFloor('whd', before) < newId('whd')).toBe(true);
    expect(idFloor('whd', new Date(Date.now() + 60_000)) > newId('whd')).toBe(true);
  });
});

describe('C17 outage spans', () => {
  it('C17 a span runs from the first all-failed bucket over quiet buckets to the first success', () => {
    const cases: [AttemptBucket[], { from: number; to: number; ongoing: boolean; failed: number }[]][] = [
      [
        [bucket(3, 0), bucket(0, 2), bucket(0, 0), bucket(0, 1), bucket(4, 1), bucket(2, 0)],
        [{ from: 1, to: 4, ongoing: false, failed: 3 }],
      ],
      [[bucket(1, 0), bucket(0, 2), bucket(0, 0)], [{ from: 1, to: 3, ongoing: true, failed: 2 }]],
      [[bucket(1, 0), bucket(0, 1), bucket(1, 0)], []], // one failure is not an outage
      [[bucket(5, 1), bucket(5, 1)], []], // some attempts succeeded in every bucket
      [
        [bucket(0, 2), bucket(1, 0), bucket(0, 3)],
        [
          { from: 0, to: 1, ongoing: false, failed: 2 },
          { from: 2, to: 3, ongoing: true, failed: 3 },
        ],
      ],
    ];
    for (const [buckets, spans] of cases) expect(outageSpans(buckets)).toEqual(spans);
  });

  it('C17 spans never hold a success, end at one, and their failures sum to the failed attempts in them', () => {
    const arb = fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 3 })), { maxLength: 80 });
    fc.assert(
      fc.property(arb, (pairs) => {
        const buckets = pairs.map(([ok, failed]) => bucket(ok, failed));
        const spans = outageSpans(buckets, 1);
        let last = -1;
        for (const s of spans) {
          expect(s.from).toBeGreaterThan(last);
          last = s.to;
          const inside = buckets.slice(s.from, s.to);
          expect(inside.every((b) => b.ok === 0)).toBe(true);
          expect(s.failed).toBe(inside.reduce((a, b) => a + b.serverError, 0));
          if (s.ongoing) expect(s.to).toBe(buckets.length);
          else expect(buckets[s.to]!.ok).toBeGreaterThan(0);
        }
        // Every failure outside the spans shares its bucket with a success (or precedes nothing: none are lost).
        const covered = new Set(spans.flatMap((s) => Array.from({ length: s.to - s.from }, (_, k) => s.from + k)));
        buckets.forEach((b, i) => {
          if (b.serverError > 0 && !covered.has(i)) expect(b.ok).toBeGreaterThan(0);
        });
      }),
    );
  });
});

describe('C17 the recovery ramp’s allowance', () => {
  it('C17 P12 defaults: 5, 10, 20, 40, 80 POSTs/s for 10 s each, then 100/s; per 15 s bucket from the recovery', () => {
    const start = new Date('2026-12-06T12:00:00Z');
    const band = rampBand(start, RAMP, null)!;
    expect(band.end.getTime() - start.getTime()).toBe(50_000);
    expect(allowedBetween(start.getTime(), start.getTime(), band.end.getTime(), RAMP, null)).toBe(1550);
    const w = chartWindow('15m', new Date(start.getTime() + 5 * 60_000));
    const allowance = rampAllowance(w, band, RAMP, null);
    const i = w.buckets.findIndex((b) => b.getTime() === start.getTime());
    expect(allowance.slice(i, i + 4)).toEqual([100, 250, 800, 1400]); // 5·10+10·5, 10·5+20·10, 40·10+80·5, 80·5+100·10
    expect(allowance[i - 1]).toBeNull();
    expect(allowance[i + 4]).toBeNull();
    expect(rampBand(start, { ...RAMP, ramp: false }, null)).toBeNull();
    expect(rampBand(null, RAMP, null)).toBeNull();
  });

  it('C17 the buckets’ allowances add up to the ramp’s integral and never exceed the cap’s rate', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 3_600_000 }),
        fc.constantFrom('15m', '1h', '6h'),
        fc.option(fc.integer({ min: 1, max: 500 }), { nil: null }),
        (offset, range, cap) => {
          const now = new Date('2026-12-06T13:00:00Z');
          const w = chartWindow(range as '15m', now);
          const start = new Date(w.from.getTime() + (offset % (w.to.getTime() - w.from.getTime())));
          const band = rampBand(start, RAMP, cap);
          if (!band) return;
          const got = rampAllowance(w, band, RAMP, cap);
          const step = w.bucketSeconds * 1000;
          const limit = (cap ?? RAMP.ramp_max_per_second) * w.bucketSeconds;
          let sum = 0;
          got.forEach((v) => {
            if (v === null) return;
            expect(v).toBeLessThanOrEqual(limit + 0.05);
            sum += v;
          });
          const firstI = got.findIndex((v) => v !== null);
          const lastI = got.length - 1 - [...got].reverse().findIndex((v) => v !== null);
          const whole = allowedBetween(
            start.getTime(),
            w.buckets[firstI]!.getTime(),
            w.buckets[lastI]!.getTime() + step,
            RAMP,
            cap,
          );
          expect(Math.abs(sum - whole)).toBeLessThan(0.05 * got.filter((v) => v !== null).length + 1e-6);
        },
      ),
    );
  });
});

describe('C17 finer ranges and bands', () => {
  it('C17 the 15-minute range has 15 s buckets labelled to the second, the 6-hour one 5-minute buckets', () => {
    const now = new Date('2026-12-06T12:34:56Z');
    const w = chartWindow('15m', now);
    expect(w.buckets).toHaveLength(60);
    expect(bucketLabel(w, w.buckets.at(-1)!)).toBe('12:34:45');
    expect(chartWindow('6h', now).buckets).toHaveLength(72);
    expect(CHART_RANGES['6h'].bucketSeconds).toBe(300);
  });

  it('C17 a band is shaded with its title, named in the description and legend, and marked in the figures table', () => {
    const out = String(
      renderChart({
        id: 'x',
        title: 'Attempts',
        kind: 'bars',
        labels: ['a', 'b', 'c'],
        series: [{ name: 'delivered', color: '#2e9e5b', values: [1, 0, 5] }],
        overlay: [{ name: 'ramp allowance', color: '#138a8a', values: [null, 4, 8] }],
        bands: [{ kind: 'outage', from: 0, to: 2, color: '#f7d4d4', label: 'outage a–c: every attempt failed (4)' }],
      }),
    );
    expect(out).toMatch(
      /<rect\s+data-band="outage"[^>]*fill="#f7d4d4"[^>]*><title>outage a–c: every attempt failed \(4\)<\/title>/,
    );
    expect(out).toContain('<desc id="x-desc">delivered 6, outage a–c: every attempt failed (4)</desc>');
    expect(out).toContain('data-legend-band="outage"');
    expect(out).toMatch(/<th>Marked<\/th>/);
    expect(out).toMatch(/<td>a<\/td>[\s\S]*?<td>outage<\/td>/);
    expect(out).toContain('stroke-dasharray="5 3"');
    expect(out).toContain('ramp allowance: 8');
  });
});
