// P13: the endpoint circuit's rule and the probe's release allowance (src/outbound/circuit.ts), by property: the circuit
// is open exactly when the streak is long and old enough (never for an ordered endpoint, never with the feature off),
// and a release tick never lets more out than the recovery ramp (P12) or the endpoint's own rate allows.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  circuitOpen,
  MAX_RELEASE_PER_TICK,
  parkedDeadline,
  parks,
  rampRunning,
  releaseAllowance,
  type CircuitSettings,
} from '../../src/outbound/circuit.js';
import { rampRate, type RecoverySettings } from '../../src/outbound/recovery.js';
import { FIRST_PROBE_MS, probeWaitMs } from '../../src/shared/endpoint-probe.js';

const recovery: RecoverySettings = {
  jitter: 0,
  ramp: true,
  ramp_after: 30_000,
  ramp_start_per_second: 5,
  ramp_interval: 10_000,
  ramp_max_per_second: 100,
};
const settings = (open_after_failures: number, open_after: number, open_after_burst = 0): CircuitSettings => ({
  open_after_failures,
  open_after,
  open_after_burst,
  probe_every: 60_000,
  release_tick: 1000,
});

describe('P13 circuit', () => {
  it('P13 property: open exactly when the last N attempts failed and the streak is open_after old; never for an ordered endpoint or with N = 0', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: 0, max: 120_000 }),
        fc.integer({ min: 0, max: 40 }),
        fc.option(fc.integer({ min: 0, max: 300_000 }), { nil: null }),
        fc.constantFrom('none' as const, 'per_endpoint' as const),
        (n, openAfter, failures, streakAgeMs, ordering) => {
          const now = 1_800_000_000_000;
          const open = circuitOpen(
            { consecutiveFailures: failures, failingSince: streakAgeMs === null ? null : new Date(now - streakAgeMs), ordering },
            settings(n, openAfter),
            now,
          );
          const expected = n > 0 && ordering === 'none' && failures >= n && streakAgeMs !== null && streakAgeMs >= openAfter;
          expect(open).toBe(expected);
        },
      ),
    );
  });

  it('P16 property: with open_after_burst B it also opens on B failures in a row however young the streak, and never below N', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 0, max: 80 }),
        fc.integer({ min: 0, max: 120_000 }),
        (n, burst, failures, streakAgeMs) => {
          const now = 1_800_000_000_000;
          const columns = { consecutiveFailures: failures, failingSince: new Date(now - streakAgeMs), ordering: 'none' as const };
          const open = circuitOpen(columns, settings(n, 60_000, burst), now);
          const byAge = failures >= n && streakAgeMs >= 60_000;
          const byBurst = burst > 0 && failures >= Math.max(n, burst);
          expect(open).toBe(byAge || byBurst);
          // Never less open than without the burst rule.
          if (circuitOpen(columns, settings(n, 60_000), now)) expect(open).toBe(true);
        },
      ),
    );
  });

  it('P16 property: the probe waits 1 s, then twice as long each time it finds the circuit open, never past probe_every', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 80 }), fc.integer({ min: 1000, max: 3_600_000 }), (k, every) => {
        const wait = probeWaitMs(k, every);
        expect(wait).toBeLessThanOrEqual(every);
        expect(wait).toBeGreaterThanOrEqual(Math.min(every, FIRST_PROBE_MS));
        expect(probeWaitMs(k + 1, every)).toBe(Math.min(every, wait * 2));
      }),
    );
    expect([0, 1, 2, 3, 6, 7].map((k) => probeWaitMs(k, 60_000))).toEqual([1000, 2000, 4000, 8000, 60_000, 60_000]);
  });

  it('P13 property: a delivery parks when the circuit is open, when others wait parked, or while an unthrottled endpoint ramps; never ordered, never with the circuit off', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: 0, max: 40 }),
        fc.boolean(),
        fc.option(fc.integer({ min: 0, max: 120_000 }), { nil: null }),
        fc.option(fc.integer({ min: 1, max: 100 }), { nil: null }),
        fc.constantFrom('none' as const, 'per_endpoint' as const),
        fc.boolean(),
        (n, failures, hasParked, recoveredAgoMs, ownRate, ordering, rampOn) => {
          const now = 1_800_000_000_000;
          const r = { ...recovery, ramp: rampOn };
          const endpoint = {
            consecutiveFailures: failures,
            failingSince: new Date(now - 120_000),
            ordering,
            hasParked,
            recoveringSince: recoveredAgoMs === null ? null : new Date(now - recoveredAgoMs),
            ownRate,
          };
          const c = settings(n, 60_000);
          // The ramp (5/s doubling every 10 s) reaches its top of 100/s after 5 doublings: 50 s.
          const ramping = rampOn && recoveredAgoMs !== null && recoveredAgoMs < 50_000 && ownRate === null;
          expect(rampRunning(r, endpoint, now)).toBe(ramping);
          const expected = n > 0 && ordering === 'none' && (hasParked || ramping || failures >= n);
          expect(parks(endpoint, c, r, now)).toBe(expected);
        },
      ),
    );
  });

  it('P13 property: a release tick lets out at least one and never more than the ramp’s (or the endpoint’s) rate over the tick', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 100, max: 10_000 }),
        fc.option(fc.integer({ min: 1, max: 1000 }), { nil: null }),
        fc.option(fc.integer({ min: 0, max: 200_000 }), { nil: null }),
        fc.boolean(),
        (tickMs, rateLimitPerSecond, sinceRecoveryMs, ramp) => {
          const r = { ...recovery, ramp };
          const n = releaseAllowance(tickMs, r, { rateLimitPerSecond, sinceRecoveryMs });
          expect(n).toBeGreaterThanOrEqual(1);
          expect(n).toBeLessThanOrEqual(MAX_RELEASE_PER_TICK);
          const rampNow = ramp && sinceRecoveryMs !== null ? rampRate(sinceRecoveryMs, r, rateLimitPerSecond) : null;
          const perSecond = rampNow ?? rateLimitPerSecond ?? (ramp && sinceRecoveryMs !== null ? r.ramp_max_per_second : null);
          if (perSecond !== null) expect(n).toBeLessThanOrEqual(Math.max(1, Math.floor((perSecond * tickMs) / 1000)));
        },
      ),
    );
  });

  it('P13 a ramp that has just begun releases its start rate per second; an endpoint past its ramp the ramp’s top rate, one that never ramped the per-tick maximum', () => {
    expect(releaseAllowance(1000, recovery, { rateLimitPerSecond: null, sinceRecoveryMs: 0 })).toBe(5);
    expect(releaseAllowance(1000, recovery, { rateLimitPerSecond: null, sinceRecoveryMs: 25_000 })).toBe(20);
    expect(releaseAllowance(1000, recovery, { rateLimitPerSecond: null, sinceRecoveryMs: 10 * 60_000 })).toBe(100);
    expect(releaseAllowance(1000, recovery, { rateLimitPerSecond: null, sinceRecoveryMs: null })).toBe(MAX_RELEASE_PER_TICK);
    expect(releaseAllowance(1000, recovery, { rateLimitPerSecond: 7, sinceRecoveryMs: null })).toBe(7);
  });

  it('P13 a parked delivery has had its whole retry schedule when it is older than the schedule’s sum', () => {
    expect(parkedDeadline([60_000, 300_000, 1_800_000], 10_000_000)).toBe(10_000_000 - 2_160_000);
  });
});
