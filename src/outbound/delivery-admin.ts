// Operator queries and commands on deliveries (O11, O12, O13 recover): list, get with attempts, retry, recover,
// and an event with its deliveries. The workflow does the attempts; this only reads rows and asks it to retry.
// Every method takes the acting principal (A1): for a merchant key, other accounts' rows do not exist. A retry and
// a recovery each write one audit row (A3), the retry in the transaction that re-queues the delivery.
import type { Client } from '@temporalio/client';
import { and, asc, eq, gte, inArray, sql, type SQL } from 'drizzle-orm';
import pLimit from 'p-limit';
import { scopeOf, seesRawBodies, type Principal } from '../access/roles.js';
import { actorOf, recordAuditEvent, type AuditExecutor } from '../audit/record.js';
import { idWindow, type ListWindow } from '../db/list-window.js';
import type { Db } from '../db/client.js';
import { deliveries, deliveryAttempts, events, webhookEndpoints } from '../db/schema/index.js';
import type { DeliveryStatus, RetryRequest } from '../shared/outbound.js';
import { orderReleasedSignal } from '../shared/outbound.js';
import { EventExpungedError, expungedEventOf } from './expunge.js';
import { requestDeliveryRetry } from './operator-retry.js';
import { skipInOrder, successorOfDelivery } from './sequencing.js';

export type Delivery = typeof deliveries.$inferSelect;
export type Attempt = typeof deliveryAttempts.$inferSelect;
export type EventRow = typeof events.$inferSelect;

/** What deliveries can be searched by (O11; C1 adds merchant, event type and payment reference for the console). */
export interface DeliveryFilter {
  status?: DeliveryStatus;
  endpointId?: string;
  eventId?: string;
  merchantAccount?: string;
  eventType?: string;
  /** Found in the event body, as the value of any field. */
  paymentReference?: string;
}

export class DeliveryConflictError extends Error {
  override name = 'DeliveryConflictError';
}

/** A19: the payment-reference search matches inside event bodies, so only those who may read bodies may run it. */
export class BodySearchForbiddenError extends Error {
  override name = 'BodySearchForbiddenError';
  constructor() {
    super('viewers cannot search deliveries by payment reference (it matches inside event bodies, which a viewer may not read); search reconciliations instead');
  }
}

export interface DeliveryAdminDeps {
  db: Db;
  temporal: Client;
  taskQueue: string;
  retryScheduleMs: number[];
  reviewWindowMs?: number;
  now?: () => Date;
}

/** How many re-queued deliveries are signalled at once: enough to be quick, few enough not to flood the frontend. */
const RECOVER_CONCURRENCY = 8;

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

  async function endpointStatus(principal: Principal, endpointId: string) {
    const account = scopeOf(principal);
    const [row] = await db
      .select({ status: webhookEndpoints.status, deletedAt: webhookEndpoints.deletedAt })
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.id, endpointId), account === undefined ? undefined : eq(webhookEndpoints.merchantAccount, account)));
    return row;
  }

  async function findDelivery(principal: Principal, id: string): Promise<Delivery | undefined> {
    const account = scopeOf(principal);
    const [row] = await db
      .select()
      .from(deliveries)
      .where(and(eq(deliveries.id, id), account === undefined ? undefined : eq(deliveries.merchantAccount, account)));
    return row;
  }

  return {
    /** O11, C9: ordered by id (ULID, so creation order) either way, within from/to; the cursor is the last id of the previous page. */
    async list(principal: Principal, filter: DeliveryFilter & { afterId?: string; limit: number } & ListWindow): Promise<Delivery[]> {
      if (filter.paymentReference !== undefined && !seesRawBodies(principal)) throw new BodySearchForbiddenError();
      const window = idWindow(deliveries.id, deliveries.createdAt, filter);
      const where: SQL[] = window.where;
      const account = scopeOf(principal);
      if (account !== undefined) where.push(eq(deliveries.merchantAccount, account));
      if (filter.status !== undefined) where.push(eq(deliveries.status, filter.status));
      if (filter.endpointId !== undefined) where.push(eq(deliveries.endpointId, filter.endpointId));
      if (filter.eventId !== undefined) where.push(eq(deliveries.eventPublicId, filter.eventId));
      if (filter.merchantAccount !== undefined) where.push(eq(deliveries.merchantAccount, filter.merchantAccount));
      if (filter.eventType !== undefined) {
        where.push(inArray(deliveries.eventPublicId, db.select({ id: events.eventPublicId }).from(events).where(eq(events.type, filter.eventType))));
      }
      if (filter.paymentReference !== undefined) {
        // C1: the reference as a JSON string anywhere in the body (the bytes as sent, so no decoding); a scan of
        // the events in the window, fine for an operator's search, not for a hot path.
        const needle = Buffer.from(JSON.stringify(filter.paymentReference), 'utf8');
        where.push(inArray(deliveries.eventPublicId, db.select({ id: events.eventPublicId }).from(events).where(sql`position(${needle}::bytea in ${events.body}) > 0`)));
      }
      return db
        .select()
        .from(deliveries)
        .where(where.length ? and(...where) : undefined)
        .orderBy(...window.orderBy)
        .limit(filter.limit + 1);
    },

    async get(principal: Principal, id: string): Promise<{ delivery: Delivery; attempts: Attempt[] } | undefined> {
      const delivery = await findDelivery(principal, id);
      if (!delivery) return undefined;
      const attempts = await db.select().from(deliveryAttempts).where(eq(deliveryAttempts.deliveryId, id)).orderBy(asc(deliveryAttempts.attemptNumber));
      return { delivery, attempts };
    },

    /** O12: DELIVERED is a conflict; FAILED goes back to PENDING and starts a new cycle; waiting ones attempt now. */
    async retry(principal: Principal, id: string, request: RetryRequest): Promise<Delivery | undefined> {
      const delivery = await findDelivery(principal, id);
      if (!delivery) return undefined;
      if (delivery.status === 'DELIVERED') throw new DeliveryConflictError(`delivery ${id} was already delivered; a retry would send it twice`);
      const endpoint = await endpointStatus(principal, delivery.endpointId);
      if (endpoint?.deletedAt) throw new DeliveryConflictError(`endpoint ${delivery.endpointId} was deleted`);
      if (endpoint?.status === 'disabled') throw new DeliveryConflictError(`endpoint ${delivery.endpointId} is disabled; enable it first`);
      // O19: nothing left to send.
      const expunged = await expungedEventOf(db, id);
      if (expunged) throw new DeliveryConflictError(new EventExpungedError(expunged.eventId, expunged.expungedAt, expunged.reason).message);
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
          after: { status: delivery.status, order_skipped_at: at.toISOString(), ...(request.reason ? { reason: request.reason } : {}) },
        });
        return true;
      });
      if (!skipped) throw new DeliveryConflictError(`delivery ${id} is already ${delivery.status === 'DELIVERED' ? 'DELIVERED' : 'FAILED'}; the next one does not wait for it`);
      const successor = await successorOfDelivery(db, id);
      // Not started yet is fine: its first check sees the skip.
      if (successor) await deps.temporal.workflow.getHandle(successor).signal(orderReleasedSignal).catch(() => undefined);
      const [after] = await db.select().from(deliveries).where(eq(deliveries.id, id));
      return after;
    },

    /** O13: after an outage (or re-enabling), re-queue the endpoint's FAILED deliveries created since `since`. */
    async recover(principal: Principal, endpointId: string, since: Date, request: RetryRequest): Promise<{ requeued: number; deliveryIds: string[] } | undefined> {
      const endpoint = await endpointStatus(principal, endpointId);
      if (!endpoint || endpoint.deletedAt) return undefined;
      if (endpoint.status === 'disabled') throw new DeliveryConflictError(`endpoint ${endpointId} is disabled; enable it before recovering its deliveries`);
      const candidates = await db
        .select({ id: deliveries.id, status: deliveries.status, endpointId: deliveries.endpointId, expunged: sql<boolean>`${events.expungedAt} is not null` })
        .from(deliveries)
        .innerJoin(events, eq(events.eventPublicId, deliveries.eventPublicId))
        .where(and(eq(deliveries.endpointId, endpointId), eq(deliveries.status, 'FAILED'), gte(deliveries.createdAt, since)))
        .orderBy(asc(deliveries.id));
      // O19: a delivery of an expunged event has nothing to send; a recovery of only such deliveries is a conflict.
      const failed = candidates.filter((d) => !d.expunged).map(({ expunged: _e, ...d }) => d);
      if (failed.length === 0 && candidates.length > 0) {
        throw new DeliveryConflictError(`the ${candidates.length} FAILED deliveries since ${since.toISOString()} are of expunged events: their bodies are gone, so they cannot be sent again`);
      }
      // After a failure no further one starts (those in flight finish); the error answers the request.
      const limit = pLimit({ concurrency: RECOVER_CONCURRENCY, rejectOnClear: true });
      const done: string[] = [];
      let failure: unknown;
      await limit
        .map(failed, (d) =>
          requeue(d, request).then(
            () => void done.push(d.id),
            (error: unknown) => {
              limit.clearQueue();
              throw error;
            },
          ),
        )
        .catch((error: unknown) => (failure = error));
      // A3: one row for the recovery, naming what it re-queued (also when a failure stopped it part way).
      if (failure === undefined || done.length > 0) {
        await recordAuditEvent(db, {
          actor: actorOf(principal),
          action: 'endpoint.recover',
          target: { type: 'webhook_endpoint', id: endpointId },
          after: { since: since.toISOString(), requeued: done.length, delivery_ids: done.sort(), ...(request.reason ? { reason: request.reason } : {}), ...(failure === undefined ? {} : { stopped_by_error: true }) },
        });
      }
      if (failure !== undefined) throw failure;
      return { requeued: failed.length, deliveryIds: failed.map((d) => d.id) };
    },

    async event(principal: Principal, eventId: string): Promise<{ event: EventRow; deliveries: Delivery[] } | undefined> {
      const account = scopeOf(principal);
      const [event] = await db
        .select()
        .from(events)
        .where(and(eq(events.eventPublicId, eventId), account === undefined ? undefined : eq(events.merchantAccount, account)));
      if (!event) return undefined;
      const rows = await db.select().from(deliveries).where(inArray(deliveries.eventPublicId, [eventId])).orderBy(asc(deliveries.id));
      return { event, deliveries: rows };
    },
  };
}

export type DeliveryAdmin = ReturnType<typeof createDeliveryAdmin>;
