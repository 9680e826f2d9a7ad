// M5: a throttled endpoint's send slots. Each POST takes the next free slot, 1/rate_limit_per_second after the
// previous one (or now, if that has passed), in one UPDATE on the endpoint row, so every worker shares one schedule.
// A slot in the future is waited for in the workflow (one durable timer), not here.
import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';

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
                              + make_interval(secs => 1.0 / rate_limit_per_second)
     where id = ${endpointId} and rate_limit_per_second is not null
    returning (extract(epoch from throttle_next_at - make_interval(secs => 1.0 / rate_limit_per_second)) * 1000)::text as at,
              (extract(epoch from clock_timestamp()) * 1000)::text as now`);
  const row = rows[0];
  if (!row) return null; // the throttle was removed meanwhile
  const at = Math.round(Number(row.at));
  const waitMs = Math.max(0, at - Math.round(Number(row.now)));
  return { at, waitMs: waitMs <= NOW_ENOUGH_MS ? 0 : waitMs };
}
