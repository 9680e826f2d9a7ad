// O18: Retry-After as delta seconds or an HTTP date, and the wait it makes: never shorter than the schedule's, never
// longer than the schedule's last wait.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nextWait, parseRetryAfter } from '../../src/outbound/retry-policy.js';

const now = Date.parse('2026-12-02T10:00:00Z');

describe('Retry-After (O18)', () => {
  it('O18 reads delta seconds and HTTP dates; a past date is 0; anything else is ignored', () => {
    expect(parseRetryAfter('600', now)).toBe(600_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Wed, 02 Dec 2026 10:05:00 GMT', now)).toBe(300_000);
    expect(parseRetryAfter('Wed, 02 Dec 2026 09:00:00 GMT', now)).toBe(0);
    for (const bad of [null, undefined, '', '-5', '1.5', 'soon', '12abc']) expect(parseRetryAfter(bad, now)).toBeNull();
  });

  it('O18 the next wait is within [schedule wait, max(schedule wait, last wait)] and honours what was asked inside it', () => {
    fc.assert(
      fc.property(fc.nat(10 * 86_400_000), fc.option(fc.nat(10 * 86_400_000)), fc.nat(86_400_000), (scheduled, asked, last) => {
        const wait = nextWait(scheduled, asked, last);
        expect(wait).toBeGreaterThanOrEqual(scheduled);
        expect(wait).toBeLessThanOrEqual(Math.max(scheduled, last));
        if (asked !== null && asked <= Math.max(scheduled, last)) expect(wait).toBe(Math.max(scheduled, asked));
      }),
    );
  });
});
