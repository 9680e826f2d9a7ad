// O18: the writes a merchant's answer leads to (the waits are retry-policy.ts's). `410 Gone` disables the endpoint
// at once (reason `gone`, recorded and announced as endpoint.disabled like any disable, M4; enabling it again is the
// usual path). A 429 is the merchant saying "slower", not "down": it lowers the endpoint's send rate (M5) for a while
// instead of counting towards the automatic disable (O13).
import { and, eq, sql } from 'drizzle-orm';
import { webhookEndpoints } from '../db/schema/index.js';
import { recordStatusChange } from './endpoint-status.js';
import { backoffDurationMs, BACKOFF_FLOOR_PER_SECOND } from './retry-policy.js';
import type { Executor } from './secrets.js';

export const GONE_REASON = 'gone';

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
  const forMs = backoffDurationMs(retryAfterMs, maxMs);
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
