// M5: a throttled endpoint's send slots, in two stages that share the endpoint row (so every worker agrees):
// 1. reserveSlot: each attempt takes the next free slot, 1/rate_limit_per_second after the previous one (or now);
//    a slot in the future is waited for in the workflow, one durable timer, holding no worker slot.
// 2. reserveSend: right before the POST, the send time is spaced 1/rate after the previous POST's. Timers that fire
//    late under load would otherwise bunch several POSTs into one second; this wait is short (the bunching), and
//    taken inside the activity.
// O18: the rate is the effective one: the operator's rate_limit_per_second, lowered while a 429 backoff runs
// (./receiver-signals.ts); an endpoint without a throttle is throttled only during such a backoff.
import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';

const RATE = sql.raw(
  '(case when backoff_until > clock_timestamp() then least(coalesce(rate_limit_per_second, backoff_rate_per_second), backoff_rate_per_second) else rate_limit_per_second end)',
);

/** A slot this close to now is taken at once: less than a timer round trip. */
const NOW_ENOUGH_MS = 5;

export interface Slot {
  /** Epoch ms of the reserved slot. */
  at: number;
  /** How long until it (0 = send now). */
  waitMs: number;
}

export async function reserveSlot(db: Db, endpointId: string): Promise<Slot | null> {
  const rows = await db.execute<{ at: string; now: string }>(sql`
    update webhook_endpoints
       set throttle_next_at = greatest(coalesce(throttle_next_at, clock_timestamp()), clock_timestamp())
                              + make_interval(secs => 1.0 / ${RATE})
     where id = ${endpointId} and ${RATE} is not null
    returning (extract(epoch from throttle_next_at - make_interval(secs => 1.0 / ${RATE})) * 1000)::text as at,
              (extract(epoch from clock_timestamp()) * 1000)::text as now`);
  const row = rows[0];
  if (!row) return null; // the throttle was removed meanwhile
  const at = Math.round(Number(row.at));
  const waitMs = Math.max(0, at - Math.round(Number(row.now)));
  return { at, waitMs: waitMs <= NOW_ENOUGH_MS ? 0 : waitMs };
}

/** M5 stage 2: how long to wait before this POST so that POSTs stay 1/rate apart (0 = now); null when unthrottled. */
export async function reserveSend(db: Db, endpointId: string): Promise<Slot | null> {
  const rows = await db.execute<{ at: string; now: string }>(sql`
    update webhook_endpoints
       set throttle_sent_at = greatest(coalesce(throttle_sent_at + make_interval(secs => 1.0 / ${RATE}), clock_timestamp()), clock_timestamp())
     where id = ${endpointId} and ${RATE} is not null
    returning (extract(epoch from throttle_sent_at) * 1000)::text as at, (extract(epoch from clock_timestamp()) * 1000)::text as now`);
  const row = rows[0];
  if (!row) return null;
  const at = Math.round(Number(row.at));
  return { at, waitMs: Math.max(0, at - Math.round(Number(row.now))) };
}
