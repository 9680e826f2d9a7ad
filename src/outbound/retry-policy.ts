// O6, O18, P12: the retry schedule in one pure module (no I/O, no clock, so the delivery workflow may import it): the wait
// after each attempt, the Retry-After a merchant may ask for and its clamp, and the 429 backoff's floor and length.
// A running delivery keeps the schedule it was started with (its workflow input, recorded in its history); a profile
// change reaches new deliveries and runs started afresh, such as an operator's retry of a closed one
// (docs/outbound.md). The writes these decisions lead to (a 410's disable, a 429's lower rate) are
// receiver-signals.ts's. P12: each retry's wait is lengthened by a jitter derived from the delivery id and attempt
// number (the same on every worker and replay), so deliveries that failed together do not come due together.

/** After a 429 an endpoint without a throttle is sent at most this many POSTs per second; a throttled one half its rate. */
export const BACKOFF_FLOOR_PER_SECOND = 1;
/** How long a 429's lower rate lasts when the answer asked for less (or gave no Retry-After). */
export const BACKOFF_MIN_MS = 60_000;
/** The longest wait a timer or a Retry-After may stand for (a signed 32-bit millisecond count). */
const MAX_WAIT_MS = 2 ** 31 - 1;

/** The wait after attempt `index + 1` (0-based index into the schedule), or null after the last attempt. */
export const scheduleWait = (schedule: readonly number[], index: number): number | null =>
  index >= 0 && index < schedule.length ? schedule[index]! : null;

/** The wait after the first attempt (the batched dispatcher's attempt 1, P1). */
export const firstRetryWait = (schedule: readonly number[]): number | null => scheduleWait(schedule, 0);

/** The schedule's last wait: the cap of any Retry-After and of a 429 backoff. */
export const lastWait = (schedule: readonly number[]): number | undefined => schedule.at(-1);

/** The statuses whose Retry-After we honour. */
export const honoursRetryAfter = (status: number | null) => status === 429 || status === 503;

/**
 * Retry-After as milliseconds from `now`: `120` (delta seconds) or an HTTP date; null when absent or unreadable.
 * A date in the past is 0.
 */
export function parseRetryAfter(value: string | null | undefined, now: number): number | null {
  if (value === null || value === undefined) return null;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Math.min(Number(text) * 1000, MAX_WAIT_MS);
  if (!/[a-z]/i.test(text)) return null; // "1.5", "-3": not a delta-seconds, not a date
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.min(Math.max(0, at - now), MAX_WAIT_MS);
}

/** The wait before the next attempt: the schedule's, or longer when asked, but never past the schedule's last wait. */
export function nextWait(scheduleWaitMs: number, retryAfterMs: number | null | undefined, lastWaitMs: number): number {
  if (retryAfterMs === null || retryAfterMs === undefined || retryAfterMs <= scheduleWaitMs) return scheduleWaitMs;
  return Math.max(scheduleWaitMs, Math.min(retryAfterMs, lastWaitMs));
}

/** The workflow's timer: the schedule's wait, or the longer one the attempt asked for (already clamped by nextWait). */
export const timerWait = (scheduleWaitMs: number, askedMs: number | undefined): number =>
  askedMs !== undefined && askedMs > scheduleWaitMs ? askedMs : scheduleWaitMs;

/** How long a 429's lower rate lasts: what Retry-After asked, at least BACKOFF_MIN_MS, at most the last wait. */
export const backoffDurationMs = (retryAfterMs: number | null, maxMs: number): number =>
  Math.min(Math.max(retryAfterMs ?? 0, BACKOFF_MIN_MS), Math.max(maxMs, BACKOFF_MIN_MS));

/**
 * P12: a fraction in [0, 1) from the delivery id and the attempt number — FNV-1a over both, then murmur3's finaliser
 * so that neighbouring ids spread: the same on every worker and in every replay, unlike Math.random.
 */
export function jitterFraction(deliveryId: string, attemptNumber: number): number {
  const text = `${deliveryId}#${attemptNumber}`;
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 2 ** 32;
}

/**
 * P12: the wait plus up to `ratio` of it (`fraction` from jitterFraction): never shorter than the schedule or a
 * Retry-After asked, at most (1 + ratio) × the wait, and never past the longest timer.
 */
export const jitteredWait = (waitMs: number, fraction: number, ratio: number): number =>
  Math.min(MAX_WAIT_MS, waitMs + Math.floor(waitMs * ratio * fraction));
