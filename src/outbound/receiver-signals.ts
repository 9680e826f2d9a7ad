// O18: what a merchant's answer asks of us. `410 Gone` disables the endpoint at once (reason `gone`, recorded and
// announced as endpoint.disabled like any disable, M4; enabling it again is the usual path). `Retry-After` (delta
// seconds or an HTTP date) on a 429 or 503 puts the next attempt no earlier than asked, capped by the schedule's last
// wait. A 429 is the merchant saying "slower", not "down": it lowers the endpoint's send rate (M5) for a while
// instead of counting towards the automatic disable (O13).
import { and, eq, sql } from 'drizzle-orm';
import { webhookEndpoints } from '../db/schema/index.js';
import { recordStatusChange } from './endpoint-status.js';
import type { Executor } from './secrets.js';

export const GONE_REASON = 'gone';
/** After a 429 an endpoint without a throttle is sent at most this many POSTs per second; a throttled one half its rate. */
export const BACKOFF_FLOOR_PER_SECOND = 1;
/** How long a 429's lower rate lasts when the answer asked for less (or gave no Retry-After). */
export const BACKOFF_MIN_MS = 60_000;

/** The statuses whose Retry-After we honour. */
export const honoursRetryAfter = (status: number | null) => status === 429 || status === 503;

/**
 * Retry-After as milliseconds from `now`: `120` (delta seconds) or an HTTP date; null when absent or unreadable.
 * A date in the past is 0.
 */
export function parseRetryAfter(value: string | null | undefined, now: number): number | null {
  if (value === null || value === undefined) return null;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Math.min(Number(text) * 1000, 2 ** 31 - 1);
  if (!/[a-z]/i.test(text)) return null; // "1.5", "-3": not a delta-seconds, not a date
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.min(Math.max(0, at - now), 2 ** 31 - 1);
}

/** The wait before the next attempt: the schedule's, or longer when asked, but never past the schedule's last wait. */
export function nextWait(scheduleWaitMs: number, retryAfterMs: number | null | undefined, lastWaitMs: number): number {
  if (retryAfterMs === null || retryAfterMs === undefined || retryAfterMs <= scheduleWaitMs) return scheduleWaitMs;
  return Math.max(scheduleWaitMs, Math.min(retryAfterMs, lastWaitMs));
}

/** 410 Gone: the endpoint is disabled now (M4: recorded and announced in this transaction). True when this call did it. */
export async function disableGone(tx: Executor, endpointId: string, now: Date): Promise<boolean> {
  const [endpoint] = await tx
    .update(webhookEndpoints)
    .set({ status: 'disabled', disabledAt: now, disabledReason: GONE_REASON, updatedAt: now })
    .where(and(eq(webhookEndpoints.id, endpointId), eq(webhookEndpoints.status, 'enabled')))
    .returning({
      id: webhookEndpoints.id,
      merchantAccount: webhookEndpoints.merchantAccount,
      livemode: webhookEndpoints.livemode,
    });
  if (endpoint)
    await recordStatusChange(tx, { endpoint, from: 'enabled', to: 'disabled', reason: GONE_REASON, actor: 'system', at: now });
  return endpoint !== undefined;
}

/**
 * 429: the endpoint's effective rate drops to half its current one (or BACKOFF_FLOOR_PER_SECOND without a throttle)
 * until now + max(Retry-After, BACKOFF_MIN_MS), capped by `maxMs`. A 429 during a backoff halves it again.
 */
export async function backOff(
  tx: Executor,
  endpointId: string,
  retryAfterMs: number | null,
  now: Date,
  maxMs: number,
): Promise<void> {
  const forMs = Math.min(Math.max(retryAfterMs ?? 0, BACKOFF_MIN_MS), Math.max(maxMs, BACKOFF_MIN_MS));
  await tx
    .update(webhookEndpoints)
    .set({
      backoffRatePerSecond: sql`greatest(${BACKOFF_FLOOR_PER_SECOND}, (${effectiveRateSql(now)}) / 2)`,
      backoffUntil: sql`greatest(coalesce(${webhookEndpoints.backoffUntil}, ${now.toISOString()}::timestamptz), ${new Date(now.getTime() + forMs).toISOString()}::timestamptz)`,
    })
    .where(eq(webhookEndpoints.id, endpointId));
}

/**
 * M5 with O18: the rate the throttle uses — the lower of the operator's rate_limit_per_second and a running 429
 * backoff; null = unthrottled. Without a throttle, an unthrottled endpoint's "current rate" for halving is taken as
 * 2 × the floor, so its first 429 brings it to the floor.
 */
export function effectiveRateSql(now?: Date) {
  const at = now ? sql`${now.toISOString()}::timestamptz` : sql`clock_timestamp()`;
  return sql`case when ${webhookEndpoints.backoffUntil} > ${at}
                  then least(coalesce(${webhookEndpoints.rateLimitPerSecond}, ${BACKOFF_FLOOR_PER_SECOND * 2}), coalesce(${webhookEndpoints.backoffRatePerSecond}, ${BACKOFF_FLOOR_PER_SECOND * 2}))
                  else coalesce(${webhookEndpoints.rateLimitPerSecond}, ${BACKOFF_FLOOR_PER_SECOND * 2}) end`;
}

/** The rate the M5 throttle applies now, or null when the endpoint is unthrottled and not backing off. */
export function throttleRateSql() {
  return sql<number | null>`case when ${webhookEndpoints.backoffUntil} > clock_timestamp()
                  then least(coalesce(${webhookEndpoints.rateLimitPerSecond}, ${webhookEndpoints.backoffRatePerSecond}), ${webhookEndpoints.backoffRatePerSecond})
                  else ${webhookEndpoints.rateLimitPerSecond} end`;
}
