// P13: the SQL of parked deliveries (deliveries.parked_since, drizzle/0037): the state the endpoint's probe decides
// on, taking the oldest parked out (each taken one carries the P1 hand-off marker until its workflow has started, so
// the dispatchers' hand-off sweep starts it if the taker dies in between), failing those the retry schedule has
// outlived, and the endpoints whose parked deliveries have waited long enough that their probe may be missing.
// P15: a retry parked by its workflow (RETRYING, parked_since set): what decides it, parking it, and unparking it.
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

/** P15: a retry its workflow parked, for the probe to release by a signal. */
export interface ParkedRetry {
  deliveryId: string;
  endpointId: string;
  merchantAccount: string;
  eventType: string;
  attemptCount: number;
}

export interface RetryColumns {
  status: string;
  endpointId: string;
  ordering: EndpointOrdering;
  consecutiveFailures: number;
  failingSince: Date | null;
  recoveringSince: Date | null;
  ownRate: number | null;
  hasParked: boolean;
  /** O7/R3: this attempt number is already reserved (an earlier execution of the attempt): it is settled, never parked. */
  reserved: boolean;
  /** P15/R20: the endpoint's probe released this attempt (released_attempt): it is sent, not parked again. */
  released: boolean;
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
     * The `limit` oldest parked deliveries of the endpoint. A fan-out's (PENDING) is unparked and marked handed off
     * (handoff_since = now): the caller sends it or starts its workflow (handOff clears the marker); if it dies first,
     * the hand-off sweep does. P15: a retry its workflow parked (RETRYING) stays parked and is returned in `retrying`:
     * the caller signals its waiting workflow, then unparks it (`unpark`), so a crash in between signals it again.
     * R20: the attempt it releases (its next) is recorded first in released_attempt: only that attempt is sent without
     * parking, so a signal from anyone else wakes the workflow and releases nothing. `retriesOnly`: only those. P23:
     * `freshFirst` (the probe's one delivery) takes a never-attempted one before any retry: a failed probe of it is
     * parked again by one UPDATE, where a retry's costs its workflow a start or a wake, a timer and a wake to park.
     */
    async take(
      endpointId: string,
      limit: number,
      { retriesOnly = false, freshFirst = false } = {},
    ): Promise<{ owned: Owned[]; retrying: ParkedRetry[] }> {
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
          status: string;
          attempt_count: number;
        }[]
      >`
        with picked as (
          select id, status, attempt_count from deliveries where endpoint_id = ${endpointId} and parked_since is not null
             and (not ${retriesOnly} or status = 'RETRYING')
           order by (${freshFirst} and status = 'RETRYING'), created_at, id limit ${limit} for update skip locked),
        taken as (
          update deliveries d set parked_since = null, handoff_since = clock_timestamp(), updated_at = clock_timestamp()
            from picked p where d.id = p.id and p.status <> 'RETRYING' and d.parked_since is not null
          returning d.id, d.endpoint_id, d.merchant_account, d.event_public_id, d.status, d.attempt_count),
        waiting as (
          update deliveries d set released_attempt = d.attempt_count + 1
            from picked p where d.id = p.id and p.status = 'RETRYING'
          returning d.id, d.endpoint_id, d.merchant_account, d.event_public_id, d.status, d.attempt_count)
        select t.id, t.endpoint_id, t.merchant_account, e.type, e.traceparent, e.body, w.url, w.status as endpoint_status,
               t.status, t.attempt_count
          from (select * from taken union all select * from waiting) t
          join events e on e.event_public_id = t.event_public_id join webhook_endpoints w on w.id = t.endpoint_id`;
      const owned: Owned[] = [];
      const retrying: ParkedRetry[] = [];
      for (const r of rows) {
        if (r.status === 'RETRYING') {
          retrying.push({
            deliveryId: r.id,
            endpointId: r.endpoint_id,
            merchantAccount: r.merchant_account,
            eventType: r.type,
            attemptCount: r.attempt_count,
          });
          continue;
        }
        // Owned (handoff_since set) like a batched fan-out's: sent as attempt 1, or handed to a workflow. O19: a body
        // expunged meanwhile is no hand-off (the workflow's attempt finds it gone and fails with why).
        owned.push({
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
        });
      }
      return { owned, retrying };
    },

    /** P15: parked retries whose workflows were signalled are parked no more (P23: and each has its workflow now). */
    async unpark(deliveryIds: string[]): Promise<void> {
      if (deliveryIds.length === 0) return;
      await client`update deliveries set parked_since = null, handoff_since = null, updated_at = clock_timestamp()
                    where id = any(${deliveryIds}::text[]) and parked_since is not null`;
    },

    /**
     * P15: what `parks` (./circuit.ts) reads for a retry of `deliveryId`: its status, its endpoint's columns,
     * whether other deliveries wait parked for that endpoint, whether `attemptNumber` is already reserved, and whether
     * the probe released it. Null
     * when the delivery does not exist.
     */
    async retryColumns(deliveryId: string, attemptNumber: number): Promise<RetryColumns | null> {
      const [row] = await client<
        {
          status: string;
          endpoint_id: string;
          ordering: EndpointOrdering;
          consecutive_failures: number;
          failing_since: string | Date | null;
          recovering_since: string | Date | null;
          rate_limit_per_second: number | null;
          has_parked: boolean;
          reserved: boolean;
          released: boolean;
        }[]
      >`
        select d.status, d.endpoint_id, w.ordering, w.consecutive_failures, w.failing_since, w.recovering_since,
               w.rate_limit_per_second,
               exists (select 1 from deliveries p where p.endpoint_id = d.endpoint_id and p.parked_since is not null
                        and p.id <> d.id) as has_parked,
               exists (select 1 from delivery_attempts a where a.delivery_id = d.id
                        and a.attempt_number = ${attemptNumber}) as reserved,
               coalesce(d.released_attempt = ${attemptNumber}, false) as released
          from deliveries d join webhook_endpoints w on w.id = d.endpoint_id where d.id = ${deliveryId}`;
      if (!row) return null;
      return {
        status: row.status,
        endpointId: row.endpoint_id,
        ordering: row.ordering,
        consecutiveFailures: row.consecutive_failures,
        failingSince: date(row.failing_since),
        recoveringSince: date(row.recovering_since),
        ownRate: row.rate_limit_per_second,
        hasParked: row.has_parked,
        reserved: row.reserved,
        released: row.released,
      };
    },

    /**
     * P15: parks a RETRYING delivery (no next attempt until it is released); false when it is not RETRYING. Its
     * workflow parks it, so it has one: no hand-off marker (P23).
     */
    async parkRetry(deliveryId: string): Promise<boolean> {
      const rows = await client`
        update deliveries set parked_since = coalesce(parked_since, clock_timestamp()), next_attempt_at = null,
               handoff_since = null, updated_at = clock_timestamp()
         where id = ${deliveryId} and status = 'RETRYING' returning id`;
      return rows.length === 1;
    },

    /**
     * Parked deliveries fanned out before `before` (all of them when null) end FAILED with `reason`; how many. P15: a
     * parked retry is not among them: its workflow waits with its own deadline, and fails it itself. P23: one parked
     * after its failed first attempt is (it has no workflow: the hand-off marker says so).
     */
    async fail(endpointId: string, before: Date | null, reason: string): Promise<number> {
      const rows = await client`
        update deliveries set status = 'FAILED', failure_reason = ${reason}, failed_at = clock_timestamp(),
               parked_since = null, next_attempt_at = null, handoff_since = null, updated_at = clock_timestamp()
         where endpoint_id = ${endpointId} and parked_since is not null and (status <> 'RETRYING' or handoff_since is not null)
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
