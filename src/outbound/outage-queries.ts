// C17: what the endpoint page's outage charts read from PostgreSQL: the endpoint's backlog at each bucket's end (the
// deliveries created before it and not yet DELIVERED or FAILED at it, with the oldest one's age) and the exact start
// and end of an outage found in its attempt buckets. Both are bounded by one endpoint id (found for the signed-in
// principal by the endpoint service) and the window. The backlog reads deliveries by the index (endpoint_id, id):
// delivery ids are ULIDs, so ids minted up to LOOKBACK before the window bound the scan; a delivery created earlier
// that still waits is not counted (the retry schedule ends a cycle in about 15 h). A FAILED delivery re-queued later
// counts as waiting from its creation until it is delivered (failed_at is cleared on a retry).
import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { idFloor } from '../shared/ids.js';
import type { ChartWindow } from '../shared/chart-window.js';
import { IN_FLIGHT } from './attempt-store.js';
import { backlogSeries, type BacklogSeries } from './outage.js';

export const LOOKBACK_MS = 2 * 86_400_000;

const iso = (d: Date) => d.toISOString();

/** The backlog at each point of `w` (outage.ts backlogPoints), by outage.ts coveredPoints done in SQL. */
export async function endpointBacklog(db: Db, endpointId: string, w: ChartWindow, now: Date): Promise<BacklogSeries> {
  const n = w.buckets.length;
  const step = w.bucketSeconds * 1000;
  const floor = idFloor('whd', new Date(w.from.getTime() - LOOKBACK_MS));
  const rows = await db.execute<{ i: number; n: string; oldest: string }>(sql`
    with d as (
      select created_at as c, coalesce(delivered_at, failed_at) as f
        from deliveries
       where endpoint_id = ${endpointId} and id >= ${floor} and created_at < ${iso(w.to)}::timestamptz
         and (coalesce(delivered_at, failed_at) is null or coalesce(delivered_at, failed_at) > ${iso(w.from)}::timestamptz)
    )
    select i, count(*) as n, min(c) as oldest
      from d cross join lateral generate_series(
        greatest(0, floor(extract(epoch from (d.c - ${iso(w.from)}::timestamptz)) * 1000 / ${step}))::int,
        case when d.f is null then ${n - 1}::int
             else least(${n - 1}, ceil(extract(epoch from (d.f - ${iso(w.from)}::timestamptz)) * 1000 / ${step})::int - 2) end
      ) as i
     group by i`);
  const perPoint = new Map<number, { waiting: number; oldest: Date }>();
  for (const r of rows) perPoint.set(Number(r.i), { waiting: Number(r.n), oldest: new Date(r.oldest) });
  return backlogSeries(w, now, perPoint);
}

export interface OutageBounds {
  /** The first failed attempt of the span. */
  started: Date | null;
  /** The first successful attempt after it; null while it goes on. */
  ended: Date | null;
}

/** The exact times of an outage spanning [from, until) (bucket starts), the first success looked for before `to`. */
export async function outageBounds(db: Db, endpointId: string, from: Date, until: Date, to: Date): Promise<OutageBounds> {
  const [row] = await db.execute<{ started: string | null; ended: string | null }>(sql`
    select min(started_at) filter (where not succeeded and started_at < ${iso(until)}::timestamptz) as started,
           min(started_at) filter (where succeeded and started_at >= ${iso(until)}::timestamptz) as ended
      from delivery_attempts
     where endpoint_id = ${endpointId} and started_at >= ${iso(from)}::timestamptz and started_at < ${iso(to)}::timestamptz
       and error_kind is distinct from ${IN_FLIGHT}`);
  return {
    started: row?.started ? new Date(row.started) : null,
    ended: row?.ended ? new Date(row.ended) : null,
  };
}
