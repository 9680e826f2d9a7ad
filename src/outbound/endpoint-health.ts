// O13: an endpoint's failure streak and its automatic disable. `failing_since` is the scheduled time of the first
// failed attempt of the current unbroken streak; any 2xx ends the streak; an endpoint whose every attempt has failed
// for `outbound.auto_disable_after` is disabled, and the rest of its schedule is not sent. `consecutive_failures`
// counts the streak's attempts (M2, src/outbound/lanes.ts).
import { and, eq, lte, sql, type SQL } from 'drizzle-orm';
import { webhookEndpoints } from '../db/schema/index.js';
import { recordStatusChange } from './endpoint-status.js';
import type { Executor } from './secrets.js';

/**
 * The statement that ends the streak after a 2xx, run only when `guard` holds (part of one delivered statement);
 * `recoveryStart` the P12 assignment that starts a recovery ramp (./recovery.ts recoveryStartSql).
 */
export function endStreak(endpointId: string, guard: SQL, recoveryStart: SQL = sql``): SQL {
  return sql`update ${webhookEndpoints} set failing_since = null, consecutive_failures = 0${recoveryStart}
              where id = ${endpointId} and failing_since is not null and ${guard}
             returning id`;
}

/**
 * A failed attempt scheduled at `scheduledAt`: starts the streak if none is running, then disables the endpoint if
 * the streak is now `autoDisableAfterMs` old (M4: recorded and announced). True when this call disabled it.
 */
export async function recordEndpointFailure(
  tx: Executor,
  endpointId: string,
  scheduledAt: Date,
  now: Date,
  autoDisableAfterMs: number,
): Promise<boolean> {
  // The first failure of a streak sets failing_since; every failure counts (M2: the slow lane after a few in a row).
  await tx
    .update(webhookEndpoints)
    .set({
      failingSince: sql`coalesce(${webhookEndpoints.failingSince}, ${scheduledAt.toISOString()}::timestamptz)`,
      consecutiveFailures: sql`${webhookEndpoints.consecutiveFailures} + 1`,
    })
    .where(eq(webhookEndpoints.id, endpointId));
  // Every attempt since failing_since has failed (a 2xx would have cleared it) for auto_disable_after.
  const cutoff = new Date(scheduledAt.getTime() - autoDisableAfterMs);
  const disabled = await tx
    .update(webhookEndpoints)
    .set({
      status: 'disabled',
      disabledAt: now,
      disabledReason: sql`'auto-disabled: every attempt failed since ' || ${webhookEndpoints.failingSince}::text || ' (outbound.auto_disable_after)'`,
      updatedAt: now,
    })
    .where(
      and(
        eq(webhookEndpoints.id, endpointId),
        eq(webhookEndpoints.status, 'enabled'),
        lte(webhookEndpoints.failingSince, cutoff),
      ),
    )
    .returning({
      id: webhookEndpoints.id,
      merchantAccount: webhookEndpoints.merchantAccount,
      livemode: webhookEndpoints.livemode,
      reason: webhookEndpoints.disabledReason,
    });
  const [endpoint] = disabled;
  // M4: recorded for the admin feed and announced (endpoint.disabled) in this same transaction.
  if (endpoint)
    await recordStatusChange(tx, {
      endpoint,
      from: 'enabled',
      to: 'disabled',
      reason: endpoint.reason,
      actor: 'system',
      at: now,
    });
  return endpoint !== undefined;
}
