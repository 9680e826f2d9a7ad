// Operator queries and commands on deliveries (O11, O12, O13 recover): list, get with attempts, retry, recover,
// and an event with its deliveries. The workflow does the attempts; this only reads rows and asks it to retry.
// Every method takes the acting principal (A1): for a merchant key, other accounts' rows do not exist. A retry and
// a recovery each write one audit row (A3), the retry in the transaction that re-queues the delivery.
// The reads are in ./delivery-queries.ts, the O13 recovery in ./delivery-recover.ts, the refusals in ./delivery-errors.ts.
import type { Client } from '@temporalio/client';
import { and, eq } from 'drizzle-orm';
import type { Principal } from '../access/roles.js';
import { actorOf, recordAuditEvent, type AuditExecutor } from '../audit/record.js';
import type { Db } from '../db/client.js';
import { deliveries } from '../db/schema/index.js';
import type { RetryRequest } from '../shared/outbound.js';
import { orderReleasedSignal } from '../shared/outbound.js';
import { DeliveryConflictError } from './delivery-errors.js';
import { createDeliveryQueries, type Delivery } from './delivery-queries.js';
import { createRecover } from './delivery-recover.js';
import { EventExpungedError, expungedEventOf } from './expunge.js';
import { requestDeliveryRetry } from './operator-retry.js';
import { skipInOrder, successorOfDelivery } from './sequencing.js';

export { BodySearchForbiddenError, DeliveryConflictError } from './delivery-errors.js';
export type { Attempt, Delivery, DeliveryFilter, EventRow } from './delivery-queries.js';

export interface DeliveryAdminDeps {
  db: Db;
  temporal: Client;
  taskQueue: string;
  retryScheduleMs: number[];
  reviewWindowMs?: number;
  now?: () => Date;
}

export function createDeliveryAdmin(deps: DeliveryAdminDeps) {
  const { db } = deps;
  const now = deps.now ?? (() => new Date());

  /** FAILED → PENDING (only from FAILED, so a concurrent attempt's outcome is never overwritten); the status after. */
  async function markPending(tx: AuditExecutor, delivery: Pick<Delivery, 'id' | 'status'>): Promise<string> {
    if (delivery.status !== 'FAILED') return delivery.status;
    const moved = await tx
      .update(deliveries)
      .set({ status: 'PENDING', failedAt: null, failureReason: null, nextAttemptAt: now(), updatedAt: now() })
      .where(and(eq(deliveries.id, delivery.id), eq(deliveries.status, 'FAILED')))
      .returning({ id: deliveries.id });
    return moved.length ? 'PENDING' : delivery.status;
  }

  /** Marks it PENDING if it FAILED, then the signal. */
  async function requeue(delivery: Pick<Delivery, 'id' | 'status' | 'endpointId'>, request: RetryRequest): Promise<void> {
    await markPending(db, delivery);
    await signal(delivery, request);
  }

  async function signal(delivery: Pick<Delivery, 'id' | 'endpointId'>, request: RetryRequest): Promise<void> {
    await requestDeliveryRetry({
      client: deps.temporal,
      taskQueue: deps.taskQueue,
      deliveryId: delivery.id,
      endpointId: delivery.endpointId,
      retryScheduleMs: deps.retryScheduleMs,
      ...(deps.reviewWindowMs !== undefined ? { reviewWindowMs: deps.reviewWindowMs } : {}),
      request,
    });
  }
  const queries = createDeliveryQueries(db);
  const { findDelivery, endpointStatus } = queries;
  const { recover } = createRecover({ db, endpointStatus, requeue });

  return {
    list: queries.list,
    get: queries.get,
    event: queries.event,
    recover,

    /** O12: DELIVERED is a conflict; FAILED goes back to PENDING and starts a new cycle; waiting ones attempt now. */
    async retry(principal: Principal, id: string, request: RetryRequest): Promise<Delivery | undefined> {
      const delivery = await findDelivery(principal, id);
      if (!delivery) return undefined;
      if (delivery.status === 'DELIVERED')
        throw new DeliveryConflictError(`delivery ${id} was already delivered; a retry would send it twice`);
      const endpoint = await endpointStatus(principal, delivery.endpointId);
      if (endpoint?.deletedAt) throw new DeliveryConflictError(`endpoint ${delivery.endpointId} was deleted`);
      if (endpoint?.status === 'disabled')
        throw new DeliveryConflictError(`endpoint ${delivery.endpointId} is disabled; enable it first`);
      // O19: nothing left to send.
      const expunged = await expungedEventOf(db, id);
      if (expunged)
        throw new DeliveryConflictError(new EventExpungedError(expunged.eventId, expunged.expungedAt, expunged.reason).message);
      await db.transaction(async (tx) => {
        const status = await markPending(tx, delivery);
        await recordAuditEvent(tx, {
          actor: actorOf(principal),
          action: 'delivery.retry',
          target: { type: 'webhook_delivery', id },
          before: { status: delivery.status },
          after: { status, ...(request.reason ? { reason: request.reason } : {}) },
        });
      });
      await signal(delivery, request);
      const [after] = await db.select().from(deliveries).where(eq(deliveries.id, id));
      return after;
    },

    /**
     * M3: the next delivery to this ordered endpoint stops waiting for this one, which keeps its own schedule. A
     * conflict when nothing waits on it (unordered, or already DELIVERED or FAILED).
     */
    /** M3; A13: the skip and its audit row (the authenticated principal, never a body's name) in one transaction. */
    async skip(principal: Principal, id: string, request: { reason?: string | undefined } = {}): Promise<Delivery | undefined> {
      const delivery = await findDelivery(principal, id);
      if (!delivery) return undefined;
      if (delivery.sequence === null) throw new DeliveryConflictError(`delivery ${id} is not in an ordered endpoint's line`);
      const at = now();
      const skipped = await db.transaction(async (tx) => {
        if (!(await skipInOrder(tx, id, at))) return false;
        await recordAuditEvent(tx, {
          actor: actorOf(principal),
          action: 'delivery.skip',
          target: { type: 'webhook_delivery', id },
          before: { status: delivery.status, order_skipped_at: null },
          after: {
            status: delivery.status,
            order_skipped_at: at.toISOString(),
            ...(request.reason ? { reason: request.reason } : {}),
          },
        });
        return true;
      });
      if (!skipped)
        throw new DeliveryConflictError(
          `delivery ${id} is already ${delivery.status === 'DELIVERED' ? 'DELIVERED' : 'FAILED'}; the next one does not wait for it`,
        );
      const successor = await successorOfDelivery(db, id);
      // Not started yet is fine: its first check sees the skip.
      if (successor)
        await deps.temporal.workflow
          .getHandle(successor)
          .signal(orderReleasedSignal)
          .catch(() => undefined);
      const [after] = await db.select().from(deliveries).where(eq(deliveries.id, id));
      return after;
    },
  };
}

export type DeliveryAdmin = ReturnType<typeof createDeliveryAdmin>;
