// C12: ledger postings per bucket (a day on the console's ledger page) by kind and currency: how many transactions
// of each kind were posted in each currency. Bounded by the window on ledger_transactions.posted_at (index of
// migration 0028); the entries are read by their transaction index.
import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { bucketIndex, type ChartWindow } from '../shared/chart-window.js';

/** Keyed by "<kind> <currency>" (e.g. "payment EUR"); one count per bucket. */
export async function postingsByKind(db: Db, w: ChartWindow): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>();
  const rows = await db.execute<{ b: string; kind: string; currency: string; n: string }>(sql`
    select extract(epoch from date_bin(${`${w.bucketSeconds} seconds`}::interval, t.posted_at, 'epoch'::timestamptz))::bigint as b,
           t.kind, e.currency, count(distinct t.id) as n
      from ledger_transactions t join ledger_entries e on e.transaction_id = t.id
     where t.posted_at >= ${w.from.toISOString()}::timestamptz and t.posted_at < ${w.to.toISOString()}::timestamptz
     group by 1, 2, 3`);
  for (const r of rows) {
    const i = bucketIndex(w, new Date(Number(r.b) * 1000));
    if (i < 0) continue;
    const key = `${r.kind} ${r.currency}`;
    const series = out.get(key) ?? w.buckets.map(() => 0);
    series[i] = Number(r.n);
    out.set(key, series);
  }
  return new Map([...out.entries()].sort(([a], [b]) => a.localeCompare(b)));
}
