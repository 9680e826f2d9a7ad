// P13: the SQL of parked deliveries (deliveries.parked_since, drizzle/0037): the state the endpoint's probe decides
// on, taking the oldest parked out (each taken one carries the P1 hand-off marker until its workflow has started, so
// the dispatchers' hand-off sweep starts it if the taker dies in between), failing those the retry schedule has
// outlived, and the endpoints whose parked deliveries have waited long enough that their probe may be missing.
import type { Sql } from 'postgres';
import type { Db } from '../db/client.js';
import type { Owned } from './delivery-start.js';
import type { EndpointOrdering, EndpointStatus } from '../shared/outbound.js';

export interface ProbeRow {
  parked: number;
  status: EndpointStatus;
  deleted: boolean;
  ordering: EndpointOrdering;
  consecutiveFailures: number;
  failingSince: Date | null;
  rateLimitPerSecond: number | null;
  recoveringSince: Date | null;
}

const date = (v: string | Date | null) => (v === null ? null : new Date(v));

export function createParkingStore(db: Db) {
  const client = (db as unknown as { $client: Sql }).$client;
  return {
    /** The endpoint's row and how many deliveries wait parked for it; null when the endpoint does not exist. */
    async probeRow(endpointId: string): Promise<ProbeRow | null> {
      const [row] = await client<
        {
          parked: number;
          status: EndpointStatus;
          deleted: boolean;
          ordering: EndpointOrdering;
          consecutive_failures: number;
          failing_since: string | Date | null;
          rate_limit_per_second: number | null;
          recovering_since: string | Date | null;
        }[]
      >`
        select (select count(*)::int from deliveries d where d.endpoint_id = w.id and d.parked_since is not null) as parked,
               w.status, w.deleted_at is not null as deleted, w.ordering, w.consecutive_failures, w.failing_since,
               w.rate_limit_per_second, w.recovering_since
          from webhook_endpoints w where w.id = ${endpointId}`;
      if (!row) return null;
      return {
        parked: row.parked,
        status: row.status,
        deleted: row.deleted,
        ordering: row.ordering,
        consecutiveFailures: row.consecutive_failures,
        failingSince: date(row.failing_since),
        rateLimitPerSecond: row.rate_limit_per_second,
        recoveringSince: date(row.recovering_since),
      };
    },

    /**
     * Unparks the `limit` oldest parked deliveries of the endpoint and marks them handed off (handoff_since = now):
     * the caller starts their workflows (handOff clears the marker); if it dies first, the hand-off sweep does.
     */
    async take(endpointId: string, limit: number): Promise<Owned[]> {
      const rows = await client<
        {
          id: string;
          endpoint_id: string;
          merchant_account: string;
          type: string;
          traceparent: string | null;
          body: Buffer | null;
          url: string;
          endpoint_status: EndpointStatus;
        }[]
      >`
        with taken as (
          update deliveries set parked_since = null, handoff_since = clock_timestamp(), updated_at = clock_timestamp()
           where id in (select id from deliveries where endpoint_id = ${endpointId} and parked_since is not null
                         order by created_at, id limit ${limit} for update skip locked)
             and parked_since is not null
          returning id, endpoint_id, merchant_account, event_public_id)
        select t.id, t.endpoint_id, t.merchant_account, e.type, e.traceparent, e.body, w.url, w.status as endpoint_status
          from taken t join events e on e.event_public_id = t.event_public_id join webhook_endpoints w on w.id = t.endpoint_id`;
      // Owned (handoff_since set) like a batched fan-out's: sent as attempt 1, or handed to a workflow. O19: a body
      // expunged meanwhile is no hand-off (the workflow's attempt finds it gone and fails with why).
      return rows.map((r) => ({
        deliveryId: r.id,
        endpointId: r.endpoint_id,
        merchantAccount: r.merchant_account,
        eventType: r.type,
        traceparent: r.traceparent,
        handoff: {
          status: 'PENDING',
          attemptCount: 0,
          nextAttemptAt: null,
          body: r.body ?? Buffer.alloc(0),
          url: r.url,
          endpointStatus: r.endpoint_status,
        },
      }));
    },

    /** Parked deliveries fanned out before `before` (all of them when null) end FAILED with `reason`; how many. */
    async fail(endpointId: string, before: Date | null, reason: string): Promise<number> {
      const rows = await client`
        update deliveries set status = 'FAILED', failure_reason = ${reason}, failed_at = clock_timestamp(),
               parked_since = null, next_attempt_at = null, updated_at = clock_timestamp()
         where endpoint_id = ${endpointId} and parked_since is not null
           and (${before === null ? null : before.toISOString()}::timestamptz is null or created_at < ${before === null ? null : before.toISOString()}::timestamptz)
        returning id`;
      return rows.length;
    },

    /** Endpoints with a delivery parked since before `cutoff`: the sweep makes sure their probe runs. */
    async staleEndpoints(cutoff: Date, limit = 100): Promise<string[]> {
      const rows = await client<{ endpoint_id: string }[]>`
        select distinct endpoint_id from deliveries
         where parked_since is not null and parked_since < ${cutoff.toISOString()}::timestamptz limit ${limit}`;
      return rows.map((r) => r.endpoint_id);
    },
  };
}
