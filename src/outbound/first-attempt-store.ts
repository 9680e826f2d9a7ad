// P1: the batched dispatcher's SQL — the same rows and rules as the attempt activity (./attempt-store.ts), written
// for many deliveries per statement: attempt 1 reserved for a chunk in one INSERT … unnest, the 2xx outcomes and
// their DELIVERED rows in one statement, and the hand-off marker (deliveries.handoff_since) cleared in one UPDATE.
import type { Sql } from 'postgres';
import type { Db } from '../db/client.js';
import type { DeliveryStatus } from '../shared/outbound.js';
import { IN_FLIGHT } from './attempt-store.js';
import type { AttemptOutcome } from './attempt-record.js';
import type { RecoverySettings } from './recovery.js';

export interface Reserved {
  deliveryId: string;
  attemptId: number;
}

export interface Delivered {
  deliveryId: string;
  attemptId: number;
  endpointId: string;
  outcome: AttemptOutcome;
}

/** A delivery the dispatcher fanned out in batched mode and never handed off (DELIVERED or a workflow). */
export interface Unhanded {
  deliveryId: string;
  endpointId: string;
  merchantAccount: string;
  eventType: string;
  status: DeliveryStatus;
  attemptCount: number;
  nextAttemptAt: Date | null;
}

const iso = (d: Date) => d.toISOString();

export function createFirstAttemptStore(db: Db, recovery?: RecoverySettings) {
  // One bind parameter per column (unnest arrays), as the receipt writer does (src/inbound/receipt-batch-statement.ts).
  const client = (db as unknown as { $client: Sql }).$client;
  return {
    /**
     * O7: reserves attempt 1 of each delivery (in flight, under the unique index) before any POST. A delivery whose
     * attempt 1 exists already is not returned: an earlier execution owns it, and it is never POSTed again here.
     */
    async reserve(deliveryIds: string[], startedAt: Date): Promise<Reserved[]> {
      if (deliveryIds.length === 0) return [];
      const rows = await client<{ id: string; delivery_id: string }[]>`
        insert into delivery_attempts (delivery_id, attempt_number, started_at, latency_ms, succeeded, error_kind)
        select id, 1, ${iso(startedAt)}::timestamptz, 0, false, ${IN_FLIGHT} from unnest(${deliveryIds}::text[]) as t(id)
        on conflict (delivery_id, attempt_number) do nothing
        returning id, delivery_id`;
      return rows.map((r) => ({ deliveryId: r.delivery_id, attemptId: Number(r.id) }));
    },

    /** Attempt 1 of deliveries whose reservation lost: in flight since when, or finished. */
    async existingFirst(deliveryIds: string[]): Promise<Map<string, { inFlight: boolean; startedAt: Date }>> {
      if (deliveryIds.length === 0) return new Map();
      const rows = await client<{ delivery_id: string; error_kind: string | null; started_at: string | Date }[]>`
        select delivery_id, error_kind, started_at from delivery_attempts
         where attempt_number = 1 and delivery_id = any(${deliveryIds}::text[])`;
      return new Map(
        rows.map((r) => [r.delivery_id, { inFlight: r.error_kind === IN_FLIGHT, startedAt: new Date(r.started_at) }]),
      );
    },

    /**
     * The 2xx outcomes of a chunk in one statement: each in-flight row finished, the endpoints' O13 streaks ended,
     * the deliveries DELIVERED and handed off. Returns the delivery ids it marked; a row no longer in flight (a
     * retried execution recorded it `interrupted` meanwhile) keeps that record, as in the activity.
     */
    async markDelivered(done: Delivered[], now: Date): Promise<Set<string>> {
      if (done.length === 0) return new Set();
      const col = <T>(f: (d: Delivered) => T) => done.map(f);
      // P12: the 2xx that ends a long streak starts the endpoint's recovery ramp (./recovery.ts recoveryStartSql).
      const recoveryStart = recovery?.ramp
        ? client`, recovering_since = case when e.failing_since <= clock_timestamp() - make_interval(secs => ${recovery.ramp_after / 1000}) then clock_timestamp() else e.recovering_since end`
        : client``;
      const rows = await client<{ id: string }[]>`
        with done as (
          select * from unnest(${col((d) => d.attemptId)}::bigint[], ${col((d) => d.endpointId)}::text[],
                               ${col((d) => d.outcome.responseStatus)}::int[], ${col((d) => d.outcome.latencyMs)}::int[],
                               ${col((d) => d.outcome.errorMessage)}::text[], ${col((d) => d.outcome.excerpt)}::text[])
                 as t(attempt_id, endpoint_id, response_status, latency_ms, error_message, excerpt)
        ), attempt as (
          update delivery_attempts a
             set response_status = done.response_status, latency_ms = done.latency_ms, succeeded = true, error_kind = null,
                 error_message = done.error_message, response_excerpt = done.excerpt
            from done where a.id = done.attempt_id and a.error_kind = ${IN_FLIGHT}
          returning a.delivery_id, done.endpoint_id
        ), streak as (
          -- O13, M2, P12: as endStreak (./endpoint-health.ts) after the activity's 2xx: the streak and its count end.
          update webhook_endpoints e set failing_since = null, consecutive_failures = 0${recoveryStart}
           where e.failing_since is not null and e.id in (select endpoint_id from attempt)
          returning e.id
        )
        update deliveries
           set status = 'DELIVERED', attempt_count = greatest(attempt_count, 1), next_attempt_at = null,
               delivered_at = ${iso(now)}::timestamptz, failed_at = null, updated_at = ${iso(now)}::timestamptz, handoff_since = null
         where id in (select delivery_id from attempt)
        returning id`;
      return new Set(rows.map((r) => r.id));
    },

    /** The deliveries now have a workflow (started, or it existed): the sweep leaves them alone. */
    async handedOff(deliveryIds: string[]): Promise<void> {
      if (deliveryIds.length === 0) return;
      await client`update deliveries set handoff_since = null where id = any(${deliveryIds}::text[]) and handoff_since is not null`;
    },

    /**
     * The sweep's work: hand-offs older than `cutoff`, except where an attempt is still in flight since after it (a
     * live dispatcher may be sending it: the sweep must not make the workflow record it `interrupted`). P23: a parked
     * one is its endpoint's probe's to release (the sweep makes sure the probe runs).
     */
    async unhanded(cutoff: Date, limit: number): Promise<Unhanded[]> {
      const rows = await client<
        {
          id: string;
          endpoint_id: string;
          merchant_account: string;
          type: string;
          status: DeliveryStatus;
          attempt_count: number;
          next_attempt_at: string | Date | null;
          traceparent: string | null;
        }[]
      >`
        select d.id, d.endpoint_id, d.merchant_account, e.type, d.status, d.attempt_count, d.next_attempt_at, e.traceparent
          from deliveries d join events e on e.event_public_id = d.event_public_id
         where d.handoff_since is not null and d.handoff_since < ${iso(cutoff)}::timestamptz and d.parked_since is null
           and not exists (select 1 from delivery_attempts a
                            where a.delivery_id = d.id and a.error_kind = ${IN_FLIGHT} and a.started_at >= ${iso(cutoff)}::timestamptz)
         order by d.handoff_since
         limit ${limit}`;
      return rows.map((r) => ({
        deliveryId: r.id,
        endpointId: r.endpoint_id,
        merchantAccount: r.merchant_account,
        eventType: r.type,
        status: r.status,
        attemptCount: Number(r.attempt_count),
        nextAttemptAt: r.next_attempt_at === null ? null : new Date(r.next_attempt_at),
        traceparent: r.traceparent, // R18: the hand-off sweep's start joins the event's trace
      }));
    },
  };
}

export type FirstAttemptStore = ReturnType<typeof createFirstAttemptStore>;
