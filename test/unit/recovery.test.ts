// P12: no stampede on recovery — the retry jitter (src/outbound/retry-policy.ts: within bounds, deterministic, spread)
// and the recovery ramp's rule (src/outbound/recovery.ts: monotone, never above the cap, ends at it), and the
// profile's bounds of outbound.recovery.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rampLengthMs, rampRate, type RecoverySettings } from '../../src/outbound/recovery.js';
import { jitteredWait, jitterFraction } from '../../src/outbound/retry-policy.js';
import { testProfile } from '../helpers/profile.js';

const settings = (over: Partial<RecoverySettings> = {}): RecoverySettings => ({
  jitter: 0.2,
  ramp: true,
  ramp_after: 30_000,
  ramp_start_per_second: 5,
  ramp_interval: 10_000,
  ramp_max_per_second: 100,
  ...over,
});

const arbSettings = fc
  .record({
    start: fc.double({ min: 0.1, max: 1000, noNaN: true }),
    max: fc.double({ min: 0.1, max: 100_000, noNaN: true }),
    interval: fc.integer({ min: 100, max: 600_000 }),
  })
  .filter(({ start, max }) => start <= max)
  .map(({ start, max, interval }) =>
    settings({ ramp_start_per_second: start, ramp_max_per_second: max, ramp_interval: interval }),
  );
const arbCap = fc.option(fc.integer({ min: 1, max: 10_000 }), { nil: null });

describe('P12 retry jitter', () => {
  it('P12 property: the jittered wait is never shorter than asked and at most (1 + jitter) × it', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 100 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (id, n, wait, ratio) => {
          const fraction = jitterFraction(id, n);
          expect(fraction).toBeGreaterThanOrEqual(0);
          expect(fraction).toBeLessThan(1);
          const jittered = jitteredWait(wait, fraction, ratio);
          expect(jittered).toBeGreaterThanOrEqual(Math.min(wait, 2 ** 31 - 1));
          expect(jittered).toBeLessThanOrEqual(Math.min(2 ** 31 - 1, wait * (1 + ratio)));
          expect(jitterFraction(id, n)).toBe(fraction); // the same on every worker and replay
        },
      ),
    );
  });

  it('P12 jitter 0 keeps the schedule exactly', () => {
    expect(jitteredWait(60_000, jitterFraction('whd_a', 1), 0)).toBe(60_000);
  });

  it('P12 spreads deliveries that failed together: 10,000 ids fill every tenth of the jitter window', () => {
    const tenths = new Array<number>(10).fill(0);
    for (let i = 0; i < 10_000; i++)
      tenths[Math.floor(jitterFraction(`whd_01J${i.toString(36).padStart(8, '0')}`, 2) * 10)]! += 1;
    for (const count of tenths) expect(count).toBeGreaterThan(850); // 1,000 each if uniform
    // and the attempt number changes it: a delivery does not land in the same place of every wait
    expect(jitterFraction('whd_x', 1)).not.toBe(jitterFraction('whd_x', 2));
  });
});

describe('P12 recovery ramp', () => {
  it('P12 starts at ramp_start_per_second and doubles every ramp_interval up to the cap, then the cap', () => {
    const r = settings();
    expect([0, 9_999, 10_000, 20_000, 30_000, 40_000].map((t) => rampRate(t, r, 30))).toEqual([5, 5, 10, 20, 30, 30]);
    // unthrottled: up to ramp_max_per_second, then no limit at all (null)
    expect([0, 10_000, 30_000, 40_000, 50_000].map((t) => rampRate(t, r, null))).toEqual([5, 10, 40, 80, null]);
    expect(rampLengthMs(r, 30)).toBe(30_000);
    expect(rampLengthMs(r, null)).toBe(50_000);
    expect(rampLengthMs(r, 5)).toBe(0);
  });

  it('P12 property: the ramp never goes down, never exceeds the cap, and ends at the cap after rampLengthMs', () => {
    fc.assert(
      fc.property(
        arbSettings,
        arbCap,
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.integer({ min: 0, max: 10_000_000 }),
        (r, cap, a, b) => {
          const [t1, t2] = a <= b ? [a, b] : [b, a];
          const at = (t: number) => rampRate(t, r, cap) ?? Infinity; // null: unthrottled again
          expect(at(t2)).toBeGreaterThanOrEqual(at(t1));
          if (cap !== null) expect(at(t1)).toBeLessThanOrEqual(cap);
          else if (t1 < rampLengthMs(r, null)) expect(at(t1)).toBeLessThan(r.ramp_max_per_second);
          expect(rampRate(rampLengthMs(r, cap), r, cap)).toBe(cap);
          if (rampLengthMs(r, cap) > 0) expect(rampRate(rampLengthMs(r, cap) - 1, r, cap)).not.toBe(cap);
        },
      ),
    );
  });

  it('P12 property: the POSTs a ramp allows from recovery to t never exceed the cap × t', () => {
    fc.assert(
      fc.property(arbSettings, fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 1, max: 100 }), (r, cap, intervals) => {
        let allowed = 0;
        for (let i = 0; i < intervals; i++) allowed += (rampRate(i * r.ramp_interval, r, cap) ?? cap) * (r.ramp_interval / 1000);
        expect(allowed).toBeLessThanOrEqual(cap * intervals * (r.ramp_interval / 1000) + 1e-6);
      }),
    );
  });

  it('P12 profile defaults and bounds of outbound.recovery', { timeout: 30_000 }, () => {
    const shipped = testProfile({ outbound: { recovery: { jitter: 0.2 } } }).outbound.recovery;
    expect(shipped).toEqual(settings());
    expect(testProfile().outbound.recovery.jitter).toBe(0); // the tests' profile: exact waits
    const refused = (recovery: Record<string, unknown>) => () => testProfile({ outbound: { recovery } });
    expect(refused({ jitter: 1.5 })).toThrow();
    expect(refused({ jitter: -0.1 })).toThrow();
    expect(refused({ ramp_interval: '10ms' })).toThrow(/at least 100ms/);
    expect(refused({ ramp_start_per_second: 200, ramp_max_per_second: 100 })).toThrow(/must not exceed/);
    expect(refused({ ramp_start_per_second: 0 })).toThrow();
  });
});
