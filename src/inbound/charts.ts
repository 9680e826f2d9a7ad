// C12: the inbound ack → ledger lag the console charts: for the reconciliations acknowledged in each bucket of the
// window, p50 and p99 of the time from the 200 to the provider to the ledger posting, and how many are posted and
// how many not (yet). Bounded by the window on reconciliations (acknowledged_at), index of migration 0028; the
// posting is found by its primary key.
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
           count(t.id) as posted, count(*) - count(t.id) as unposted,
           percentile_cont(0.5) within group (order by extract(epoch from t.posted_at - r.acknowledged_at)) as p50,
           percentile_cont(0.99) within group (order by extract(epoch from t.posted_at - r.acknowledged_at)) as p99
      from reconciliations r left join ledger_transactions t on t.id = r.ledger_transaction_id
     where r.acknowledged_at >= ${w.from.toISOString()}::timestamptz and r.acknowledged_at < ${w.to.toISOString()}::timestamptz
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
