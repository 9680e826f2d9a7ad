// P13: an endpoint's circuit. When its last `open_after_failures` attempts failed and its streak (O13 failing_since)
// is `open_after` old, or (P16) `open_after_burst` attempts in a row failed, the circuit is open: new deliveries to it
// are parked at fan-out (deliveries.parked_since: no workflow, no POST) instead of each starting a workflow that POSTs
// into the outage and sleeps in its own timers. One probe workflow per endpoint (src/workflows/endpoint-probe.ts)
// tries the oldest parked delivery at once, then after 1 s, 2 s, 4 s… up to `probe_every` (P16); a 2xx ends the
// streak (which closes the circuit: the rule reads the same columns), and the probe releases the backlog at the
// recovery ramp's rate (P12) — after an outage shorter than `ramp_after`, at the ramp's top rate (P16). The rule is
// here once, in TypeScript for the fan-out's rows and the probe's decisions; every value it reads is on the endpoint
// row, so every dispatcher agrees. While any delivery is parked for an endpoint, its new ones are parked too
// (fan-out.ts): they queue behind the backlog.
import type { Profile } from '../config/profile.js';
import type { EndpointOrdering } from '../shared/outbound.js';
import { rampRate, type RecoverySettings } from './recovery.js';

export type CircuitSettings = Profile['outbound']['circuit'];

export interface CircuitColumns {
  consecutiveFailures: number;
  failingSince: Date | null;
  /** M3: an ordered endpoint keeps its sequence in its workflows; it is never parked. */
  ordering: EndpointOrdering;
}

/**
 * True when a delivery fanned out to this endpoint at `now` is parked rather than attempted. P16: a busy endpoint's
 * circuit opens on `open_after_burst` failures in a row however young the streak: at 90 deliveries/s an `open_after`
 * of a minute was 5,400 workflows started into the outage, each waking again to park.
 */
export function circuitOpen(endpoint: CircuitColumns, c: CircuitSettings, now: number): boolean {
  if (c.open_after_failures <= 0 || endpoint.ordering === 'per_endpoint') return false;
  if (endpoint.consecutiveFailures < c.open_after_failures || endpoint.failingSince === null) return false;
  if (c.open_after_burst > 0 && endpoint.consecutiveFailures >= c.open_after_burst) return true;
  return now - endpoint.failingSince.getTime() >= c.open_after;
}

/**
 * P12/P13: the endpoint's recovery ramp runs (it returned from a streak `recoveringSince`, and the ramp has not reached
 * its top rate) and the endpoint has no rate of its own, so the ramp is its only throttle. Read by the fan-out (a new
 * delivery parks meanwhile) and by the probe (it releases at the ramp's rate meanwhile): one rule for both.
 */
export function rampRunning(
  r: RecoverySettings | undefined,
  endpoint: { recoveringSince: Date | null; ownRate: number | null },
  now: number,
): boolean {
  if (!r?.ramp || endpoint.recoveringSince === null || endpoint.ownRate !== null) return false;
  return rampRate(now - endpoint.recoveringSince.getTime(), r, null) !== null;
}

/**
 * P13 at fan-out: a new delivery is parked when the endpoint's circuit is open, when deliveries parked for it still
 * wait (it queues behind them), and while its recovery ramp runs unthrottled (`rampRunning`): the probe then sends it
 * at the ramp's rate with the batched steps, where a throttled workflow per delivery would cost a start and a slot
 * timer each. An ordered endpoint (M3) is never parked.
 */
export function parks(
  endpoint: CircuitColumns & { hasParked: boolean; recoveringSince: Date | null; ownRate: number | null },
  c: CircuitSettings,
  r: RecoverySettings | undefined,
  now: number,
): boolean {
  if (c.open_after_failures <= 0 || endpoint.ordering === 'per_endpoint') return false;
  return endpoint.hasParked || rampRunning(r, endpoint, now) || circuitOpen(endpoint, c, now);
}

/** Deliveries released per tick at most (one activity's sends; the next tick takes the rest). */
export const MAX_RELEASE_PER_TICK = 500;

/**
 * How many parked deliveries the probe releases in one tick of `tickMs`: the recovery ramp's rate while it runs
 * (P12, `sinceRecoveryMs` after the return), else the endpoint's own rate (M5), else after a ramp its top rate, else
 * MAX_RELEASE_PER_TICK; at least one.
 */
export function releaseAllowance(
  tickMs: number,
  r: RecoverySettings,
  endpoint: { rateLimitPerSecond: number | null; sinceRecoveryMs: number | null },
): number {
  const ramp =
    r.ramp && endpoint.sinceRecoveryMs !== null ? rampRate(endpoint.sinceRecoveryMs, r, endpoint.rateLimitPerSecond) : null;
  // Past the ramp's end the backlog leaves at the ramp's top rate, never in one burst of the per-tick maximum.
  const after = r.ramp && endpoint.sinceRecoveryMs !== null ? r.ramp_max_per_second : null;
  const perSecond = ramp ?? endpoint.rateLimitPerSecond ?? after;
  if (perSecond === null) return MAX_RELEASE_PER_TICK;
  return Math.min(MAX_RELEASE_PER_TICK, Math.max(1, Math.floor((perSecond * tickMs) / 1000)));
}

/** A parked delivery older than the whole retry schedule has had the time its retries would have had: FAILED. */
export const parkedDeadline = (retryScheduleMs: number[], now: number): number =>
  now - retryScheduleMs.reduce((a, b) => a + b, 0);
