// A delivery's row outside its attempts: the state a fresh workflow run continues from, FAILED by a non-retryable
// error (R4), and FAILED → PENDING for an operator's new cycle (O12).
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { deliveries, deliveryAttempts, events } from '../db/schema/index.js';
import type { DeliveryStatus } from '../shared/outbound.js';

export interface DeliveryState {
  status: DeliveryStatus;
  attemptCount: number;
  endpointId: string;
  merchantAccount: string;
  eventType: string;
}

export function createDeliveryStore(db: Db) {
  return {
    /** The highest attempt number recorded counts even if the status update after it never happened. */
    async state(deliveryId: string): Promise<DeliveryState | undefined> {
      const [row] = await db
        .select({
          status: deliveries.status,
          attemptCount: sql<number>`greatest(${deliveries.attemptCount}, coalesce((select max(${deliveryAttempts.attemptNumber}) from ${deliveryAttempts} where ${deliveryAttempts.deliveryId} = ${deliveries.id}), 0))`,
          endpointId: deliveries.endpointId,
          merchantAccount: deliveries.merchantAccount,
          eventType: events.type,
        })
        .from(deliveries)
        .innerJoin(events, eq(events.eventPublicId, deliveries.eventPublicId))
        .where(eq(deliveries.id, deliveryId));
      return row && { ...row, attemptCount: Number(row.attemptCount) };
    },

    /** Never overwrites DELIVERED. */
    async fail(deliveryId: string, reason: string): Promise<void> {
      const now = new Date();
      await db
        .update(deliveries)
        .set({ status: 'FAILED', failureReason: reason, failedAt: now, nextAttemptAt: null, parkedSince: null, updatedAt: now })
        .where(and(eq(deliveries.id, deliveryId), sql`${deliveries.status} <> 'DELIVERED'`));
    },

    /** Only from FAILED. */
    async reopen(deliveryId: string): Promise<void> {
      await db
        .update(deliveries)
        .set({ status: 'PENDING', failedAt: null, failureReason: null, nextAttemptAt: new Date(), updatedAt: new Date() })
        .where(and(eq(deliveries.id, deliveryId), eq(deliveries.status, 'FAILED')));
    },
  };
}

export type DeliveryStore = ReturnType<typeof createDeliveryStore>;
