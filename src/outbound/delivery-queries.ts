// O11, C1, C9, A1, A19: the delivery admin's reads: a delivery (with its attempts), the search, an event with its
// deliveries and an endpoint's status, each scoped to the acting principal (for a merchant key, other accounts' rows
// do not exist). The payment-reference search reads event bodies, so only those who may read bodies may run it.
import { and, asc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import { scopeOf, seesRawBodies, type Principal } from '../access/roles.js';
import type { Db } from '../db/client.js';
import { idWindow, type ListWindow } from '../db/list-window.js';
import { deliveries, deliveryAttempts, events, webhookEndpoints } from '../db/schema/index.js';
import type { DeliveryStatus } from '../shared/outbound.js';
import { BodySearchForbiddenError } from './delivery-errors.js';

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

export function createDeliveryQueries(db: Db) {
  async function endpointStatus(principal: Principal, endpointId: string) {
    const account = scopeOf(principal);
    const [row] = await db
      .select({ status: webhookEndpoints.status, deletedAt: webhookEndpoints.deletedAt })
      .from(webhookEndpoints)
      .where(
        and(
          eq(webhookEndpoints.id, endpointId),
          account === undefined ? undefined : eq(webhookEndpoints.merchantAccount, account),
        ),
      );
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
    findDelivery,
    endpointStatus,

    /** O11, C9: ordered by id (ULID, so creation order) either way, within from/to; the cursor is the last id of the previous page. */
    async list(
      principal: Principal,
      filter: DeliveryFilter & { afterId?: string; limit: number } & ListWindow,
    ): Promise<Delivery[]> {
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
        where.push(
          inArray(
            deliveries.eventPublicId,
            db.select({ id: events.eventPublicId }).from(events).where(eq(events.type, filter.eventType)),
          ),
        );
      }
      if (filter.paymentReference !== undefined) {
        // C1: the reference as a JSON string anywhere in the body (the bytes as sent, so no decoding); a scan of
        // the events in the window, fine for an operator's search, not for a hot path.
        const needle = Buffer.from(JSON.stringify(filter.paymentReference), 'utf8');
        where.push(
          inArray(
            deliveries.eventPublicId,
            db
              .select({ id: events.eventPublicId })
              .from(events)
              .where(sql`position(${needle}::bytea in ${events.body}) > 0`),
          ),
        );
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
      const attempts = await db
        .select()
        .from(deliveryAttempts)
        .where(eq(deliveryAttempts.deliveryId, id))
        .orderBy(asc(deliveryAttempts.attemptNumber));
      return { delivery, attempts };
    },

    async event(principal: Principal, eventId: string): Promise<{ event: EventRow; deliveries: Delivery[] } | undefined> {
      const account = scopeOf(principal);
      const [event] = await db
        .select()
        .from(events)
        .where(and(eq(events.eventPublicId, eventId), account === undefined ? undefined : eq(events.merchantAccount, account)));
      if (!event) return undefined;
      const rows = await db
        .select()
        .from(deliveries)
        .where(inArray(deliveries.eventPublicId, [eventId]))
        .orderBy(asc(deliveries.id));
      return { event, deliveries: rows };
    },
  };
}

export type DeliveryQueries = ReturnType<typeof createDeliveryQueries>;
