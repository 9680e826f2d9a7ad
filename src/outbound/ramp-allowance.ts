// C17, P12: what the recovery ramp allowed an endpoint to be sent per chart bucket, so its page can set the
// successful POSTs beside it: the ramp's rate (rampRate, ./recovery.ts) integrated over each bucket's part after
// recovering_since. Only buckets that overlap the ramp get a figure (null elsewhere: before the recovery there was
// nothing to allow, after it the endpoint is back to its own rate or unthrottled). Pure: no I/O, no clock.
import type { ChartWindow } from '../shared/chart-window.js';
import { rampLengthMs, rampRate, type RecoverySettings } from './recovery.js';

export interface RampBand {
  start: Date;
  end: Date;
}

/** The ramp that began at `recoveringSince`, or null when the ramp is off or there was none. */
export function rampBand(recoveringSince: Date | null, r: RecoverySettings, capPerSecond: number | null): RampBand | null {
  if (!r.ramp || !recoveringSince) return null;
  const length = rampLengthMs(r, capPerSecond);
  return length > 0 ? { start: recoveringSince, end: new Date(recoveringSince.getTime() + length) } : null;
}

/** POSTs the ramp allowed from `a` to `b` (ms since the epoch), the ramp having begun at `start`. */
export function allowedBetween(start: number, a: number, b: number, r: RecoverySettings, cap: number | null): number {
  let total = 0;
  let t = Math.max(a, start);
  // The ramp doubles at most 40 times (recovery.ts), so 64 steps reach its end; the rest goes at the final rate.
  for (let guard = 0; t < b && guard < 64; guard++) {
    const steps = Math.floor((t - start) / r.ramp_interval);
    const next = Math.min(b, start + (steps + 1) * r.ramp_interval);
    // Past the ramp the rate is the cap (or, unthrottled, the ramp's last rate: the figure stays finite).
    const rate = rampRate(t - start, r, cap) ?? r.ramp_max_per_second;
    total += (rate * (next - t)) / 1000;
    t = next;
  }
  if (t < b) total += ((cap ?? r.ramp_max_per_second) * (b - t)) / 1000;
  return total;
}

/** Per bucket: the POSTs the ramp allowed in it, for the buckets that overlap the ramp; null elsewhere. */
export function rampAllowance(w: ChartWindow, band: RampBand | null, r: RecoverySettings, cap: number | null): (number | null)[] {
  const step = w.bucketSeconds * 1000;
  return w.buckets.map((b) => {
    const a = b.getTime();
    if (!band || a + step <= band.start.getTime() || a >= band.end.getTime()) return null;
    return Math.round(allowedBetween(band.start.getTime(), a, a + step, r, cap) * 10) / 10;
  });
}
