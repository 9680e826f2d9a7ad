// M5: a throttled endpoint's send slots, in two stages that share the endpoint row (so every worker agrees):
// 1. reserveSlot: each attempt takes the next free slot, 1/rate_limit_per_second after the previous one (or now);
//    a slot in the future is waited for in the workflow, one durable timer, holding no worker slot.
// 2. reserveSend: right before the POST, the send time is spaced 1/rate after the previous POST's. Timers that fire
//    late under load would otherwise bunch several POSTs into one second; this wait is short (the bunching), and
//    taken inside the activity.
// O18: the rate is the effective one: the operator's rate_limit_per_second, lowered while a 429 backoff runs
// (./receiver-signals.ts); an endpoint without a throttle is throttled only during such a backoff.
// P12: and while a recovering endpoint's ramp runs (./recovery.ts), whose rate is taken at the slot's own time, so
// that slots booked ahead of now follow the ramp's doublings.
import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { sendRateSql, type RecoverySettings } from './recovery.js';

/** A slot this close to now is taken at once: less than a timer round trip. */
const NOW_ENOUGH_MS = 5;

export interface Slot {
  /** Epoch ms of the reserved slot. */
  at: number;
  /** How long until it (0 = send now). */
  waitMs: number;
}

type SlotRow = { at: string; now: string };

const toSlot = (row: SlotRow | undefined, nowEnough: number): Slot | null => {
  if (!row) return null; // the throttle was removed meanwhile (or the ramp ended)
  const at = Math.round(Number(row.at));
  const waitMs = Math.max(0, at - Math.round(Number(row.now)));
  return { at, waitMs: waitMs <= nowEnough ? 0 : waitMs };
};

/** The spacing after a slot at `at`: 1 / the rate then (past a ramp's end on an unthrottled endpoint, its ceiling). */
const spacing = (recovery: RecoverySettings, at: SQL) =>
  sql`make_interval(secs => 1.0 / coalesce(${sendRateSql(recovery, at)}, ${recovery.ramp_max_per_second}::float8))`;

export async function reserveSlot(db: Db, endpointId: string, recovery: RecoverySettings): Promise<Slot | null> {
  // The row is locked first, so a concurrent reservation sees this one's slot (READ COMMITTED re-reads a locked row).
  const rows = await db.execute<SlotRow>(sql`
    with e as (
      select id, greatest(coalesce(throttle_next_at, clock_timestamp()), clock_timestamp()) as base
        from webhook_endpoints
       where id = ${endpointId} and ${sendRateSql(recovery)} is not null
         for update)
    update webhook_endpoints
       set throttle_next_at = e.base + ${spacing(recovery, sql`e.base`)}
      from e
     where webhook_endpoints.id = e.id
    returning (extract(epoch from e.base) * 1000)::text as at, (extract(epoch from clock_timestamp()) * 1000)::text as now`);
  return toSlot(rows[0], NOW_ENOUGH_MS);
}

/** M5 stage 2: how long to wait before this POST so that POSTs stay 1/rate apart (0 = now); null when unthrottled. */
export async function reserveSend(db: Db, endpointId: string, recovery: RecoverySettings): Promise<Slot | null> {
  const rows = await db.execute<SlotRow>(sql`
    update webhook_endpoints
       set throttle_sent_at = greatest(coalesce(throttle_sent_at + ${spacing(recovery, sql`throttle_sent_at`)}, clock_timestamp()), clock_timestamp())
     where id = ${endpointId} and ${sendRateSql(recovery)} is not null
    returning (extract(epoch from throttle_sent_at) * 1000)::text as at, (extract(epoch from clock_timestamp()) * 1000)::text as now`);
  return toSlot(rows[0], 0);
}
