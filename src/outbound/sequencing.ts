// M3: per-endpoint ordering. The dispatcher numbers the deliveries of an ordered endpoint in event order as it fans
// them out (under the endpoint row's lock, so concurrent dispatchers number them in commit order); a delivery's first
// attempt waits until the delivery numbered just before it is DELIVERED or FAILED, or an operator skipped it. The
// workflow of the delivery that finishes signals its successor (src/workflows/delivery.ts), and rechecks on a timer.
import { and, desc, eq, isNotNull, lt, sql } from 'drizzle-orm';
import { deliveries, webhookEndpoints } from '../db/schema/index.js';
import type { Executor } from './secrets.js';

/** Reserves `count` sequence numbers of `endpointId` in the caller's transaction; returns the first. */
export async function takeSequence(tx: Executor, endpointId: string, count: number): Promise<number> {
  const [row] = await tx
    .update(webhookEndpoints)
    .set({ orderSequence: sql`${webhookEndpoints.orderSequence} + ${count}` })
    .where(eq(webhookEndpoints.id, endpointId))
    .returning({ last: webhookEndpoints.orderSequence });
  return Number(row!.last) - count + 1;
}

/** True when nothing ahead of `sequence` still holds this endpoint's line. */
export async function predecessorDone(db: Executor, endpointId: string, sequence: number): Promise<boolean> {
  const [previous] = await db
    .select({ status: deliveries.status, skippedAt: deliveries.orderSkippedAt })
    .from(deliveries)
    .where(and(eq(deliveries.endpointId, endpointId), isNotNull(deliveries.sequence), lt(deliveries.sequence, sequence)))
    .orderBy(desc(deliveries.sequence))
    .limit(1);
  return !previous || previous.status === 'DELIVERED' || previous.status === 'FAILED' || previous.skippedAt !== null;
}

/** The successor of a delivery of an ordered endpoint (null when unordered or last in line). */
export async function successorOfDelivery(db: Executor, deliveryId: string): Promise<string | null> {
  const rows = await db.execute<{ id: string }>(sql`
    select next.id from ${deliveries} as this
      join ${deliveries} as next on next.endpoint_id = this.endpoint_id and next.sequence > this.sequence
     where this.id = ${deliveryId}
     order by next.sequence limit 1`);
  return rows[0]?.id ?? null;
}

/** M3, operator: the next delivery stops waiting for this one (which keeps its own schedule). False if nothing waits on it. */
export async function skipInOrder(db: Executor, deliveryId: string, at: Date): Promise<boolean> {
  const rows = await db
    .update(deliveries)
    .set({ orderSkippedAt: at, updatedAt: at })
    .where(
      and(
        eq(deliveries.id, deliveryId),
        isNotNull(deliveries.sequence),
        sql`${deliveries.status} not in ('DELIVERED', 'FAILED')`,
      ),
    )
    .returning({ id: deliveries.id });
  return rows.length > 0;
}
