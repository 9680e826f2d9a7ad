// C12: the inbound ack → ledger lag the console charts: for the reconciliations acknowledged in each bucket of the
// window, p50 and p99 of the time from the 200 to the provider to the ledger posting, and how many are posted and
// how many not (yet). Bounded by the window on reconciliations (acknowledged_at), index of migration 0028; each
// posting is looked up by its primary key (a scalar subquery, so the work follows the window, never a scan of the
// whole ledger; `offset 0` keeps the planner from copying the lookup into each aggregate).
import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { bucketIndex, type ChartWindow } from '../shared/chart-window.js';

export interface LagBucket {
  posted: number;
  unposted: number;
  p50Seconds: number | null;
  p99Seconds: number | null;
}

export async function ackToLedgerLag(db: Db, w: ChartWindow): Promise<LagBucket[]> {
  const out: LagBucket[] = w.buckets.map(() => ({ posted: 0, unposted: 0, p50Seconds: null, p99Seconds: null }));
  const rows = await db.execute<{ b: string; posted: string; unposted: string; p50: number | null; p99: number | null }>(sql`
    select extract(epoch from date_bin(${`${w.bucketSeconds} seconds`}::interval, r.acknowledged_at, 'epoch'::timestamptz))::bigint as b,
           count(lag) as posted, count(*) - count(lag) as unposted,
           percentile_cont(0.5) within group (order by lag) as p50,
           percentile_cont(0.99) within group (order by lag) as p99
      from (select acknowledged_at, extract(epoch from posted_at - acknowledged_at) as lag
              from (select r.acknowledged_at,
                           (select t.posted_at from ledger_transactions t where t.id = r.ledger_transaction_id) as posted_at
                      from reconciliations r
                     where r.acknowledged_at >= ${w.from.toISOString()}::timestamptz and r.acknowledged_at < ${w.to.toISOString()}::timestamptz
                    offset 0) fenced) r
     group by 1`);
  for (const r of rows) {
    const i = bucketIndex(w, new Date(Number(r.b) * 1000));
    if (i < 0) continue;
    out[i] = {
      posted: Number(r.posted),
      unposted: Number(r.unposted),
      p50Seconds: r.p50 === null ? null : Math.max(0, Number(r.p50)),
      p99Seconds: r.p99 === null ? null : Math.max(0, Number(r.p99)),
    };
  }
  return out;
}
