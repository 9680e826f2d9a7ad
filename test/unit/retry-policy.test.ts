// O6, O18: the retry policy's pure decisions (src/outbound/retry-policy.ts): the schedule's waits by attempt, the
// workflow's timer never shorter than the schedule, and the 429 backoff's length between its floor and the last wait.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BACKOFF_MIN_MS,
  backoffDurationMs,
  firstRetryWait,
  lastWait,
  nextWait,
  scheduleWait,
  timerWait,
} from '../../src/outbound/retry-policy.js';

const SCHEDULE = [60_000, 300_000, 1_800_000, 7_200_000, 43_200_000];

describe('retry policy (O6, O18)', () => {
  it('O6 waits 1m, 5m, 30m, 2h, 12h after attempts 1–5, and none after the sixth', () => {
    expect(SCHEDULE.map((_, i) => scheduleWait(SCHEDULE, i))).toEqual(SCHEDULE);
    expect(scheduleWait(SCHEDULE, 5)).toBeNull();
    expect(scheduleWait(SCHEDULE, -1)).toBeNull();
    expect(firstRetryWait(SCHEDULE)).toBe(60_000);
    expect(lastWait(SCHEDULE)).toBe(43_200_000);
    expect(firstRetryWait([])).toBeNull();
  });

  it('O18 the timer is the schedule wait or the longer asked one, never shorter; within the last wait after nextWait', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4 }),
        fc.option(fc.integer({ min: 0, max: 2 ** 31 - 1 }), { nil: null }),
        (i, asked) => {
          const wait = SCHEDULE[i]!;
          const clamped = nextWait(wait, asked, lastWait(SCHEDULE)!);
          const timer = timerWait(wait, clamped);
          expect(timer).toBeGreaterThanOrEqual(wait);
          expect(timer).toBeLessThanOrEqual(Math.max(wait, lastWait(SCHEDULE)!));
          expect(timerWait(wait, undefined)).toBe(wait);
        },
      ),
    );
  });

  it("O18 a 429's backoff lasts at least a minute and at most the schedule's last wait (or a minute)", () => {
    expect(backoffDurationMs(null, 43_200_000)).toBe(BACKOFF_MIN_MS);
    expect(backoffDurationMs(120_000, 43_200_000)).toBe(120_000);
    expect(backoffDurationMs(10 ** 9, 43_200_000)).toBe(43_200_000);
    fc.assert(
      fc.property(fc.option(fc.nat(), { nil: null }), fc.nat(), (asked, max) => {
        const ms = backoffDurationMs(asked, max);
        expect(ms).toBeGreaterThanOrEqual(BACKOFF_MIN_MS);
        expect(ms).toBeLessThanOrEqual(Math.max(max, BACKOFF_MIN_MS));
      }),
    );
  });
});
