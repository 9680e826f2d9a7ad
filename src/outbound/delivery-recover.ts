// O13, O19, A3: recovering an endpoint's deliveries after an outage (or re-enabling it): its FAILED deliveries created
// since a time are re-queued, a few at a time, and one audit row names what was re-queued, also when a failure stopped
// it part way. A delivery of an expunged event has nothing to send and is left out.
import { and, asc, eq, gte, sql } from 'drizzle-orm';
import pLimit from 'p-limit';
import type { Principal } from '../access/roles.js';
import { actorOf, recordAuditEvent } from '../audit/record.js';
import type { Db } from '../db/client.js';
import { deliveries, events } from '../db/schema/index.js';
import type { RetryRequest } from '../shared/outbound.js';
import { DeliveryConflictError } from './delivery-errors.js';
import type { Delivery, DeliveryQueries } from './delivery-queries.js';

/** How many re-queued deliveries are signalled at once: enough to be quick, few enough not to flood the frontend. */
const RECOVER_CONCURRENCY = 8;

export interface RecoverDeps {
  db: Db;
  endpointStatus: DeliveryQueries['endpointStatus'];
  /** Marks a FAILED delivery PENDING, then signals its workflow to retry. */
  requeue: (delivery: Pick<Delivery, 'id' | 'status' | 'endpointId'>, request: RetryRequest) => Promise<void>;
}

export function createRecover(deps: RecoverDeps) {
  const { db, endpointStatus, requeue } = deps;
  return {
    /** O13: after an outage (or re-enabling), re-queue the endpoint's FAILED deliveries created since `since`. */
    async recover(
      principal: Principal,
      endpointId: string,
      since: Date,
      request: RetryRequest,
    ): Promise<{ requeued: number; deliveryIds: string[] } | undefined> {
      const endpoint = await endpointStatus(principal, endpointId);
      if (!endpoint || endpoint.deletedAt) return undefined;
      if (endpoint.status === 'disabled')
        throw new DeliveryConflictError(`endpoint ${endpointId} is disabled; enable it before recovering its deliveries`);
      const candidates = await db
        .select({
          id: deliveries.id,
          status: deliveries.status,
          endpointId: deliveries.endpointId,
          expunged: sql<boolean>`${events.expungedAt} is not null`,
        })
        .from(deliveries)
        .innerJoin(events, eq(events.eventPublicId, deliveries.eventPublicId))
        .where(and(eq(deliveries.endpointId, endpointId), eq(deliveries.status, 'FAILED'), gte(deliveries.createdAt, since)))
        .orderBy(asc(deliveries.id));
      // O19: a delivery of an expunged event has nothing to send; a recovery of only such deliveries is a conflict.
      const failed = candidates.filter((d) => !d.expunged).map(({ expunged: _e, ...d }) => d);
      if (failed.length === 0 && candidates.length > 0) {
        throw new DeliveryConflictError(
          `the ${candidates.length} FAILED deliveries since ${since.toISOString()} are of expunged events: their bodies are gone, so they cannot be sent again`,
        );
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
          after: {
            since: since.toISOString(),
            requeued: done.length,
            delivery_ids: done.sort(),
            ...(request.reason ? { reason: request.reason } : {}),
            ...(failure === undefined ? {} : { stopped_by_error: true }),
          },
        });
      }
      if (failure !== undefined) throw failure;
      return { requeued: failed.length, deliveryIds: failed.map((d) => d.id) };
    },
  };
}
