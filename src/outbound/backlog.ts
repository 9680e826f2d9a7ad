// C1: the outbound backlog as the console shows it: PENDING and RETRYING deliveries with the age of the oldest of
// each, and how many were delivered or failed in the last hour and day (the same figures as the C7 gauges).
import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';

export interface OutboundBacklog {
  open: Record<'PENDING' | 'RETRYING', { count: number; oldestSeconds: number }>;
  finished: { lastHour: { delivered: number; failed: number }; lastDay: { delivered: number; failed: number } };
}

export async function outboundBacklog(db: Db): Promise<OutboundBacklog> {
  const open = await db.execute<{ status: 'PENDING' | 'RETRYING'; n: string; oldest: string | null }>(sql`
    select status, count(*) as n, extract(epoch from now() - min(created_at)) as oldest
      from deliveries where status in ('PENDING', 'RETRYING') group by status`);
  const [done] = await db.execute<{ dh: string; fh: string; dd: string; fd: string }>(sql`
    select count(*) filter (where delivered_at >= now() - interval '1 hour') as dh,
           count(*) filter (where failed_at >= now() - interval '1 hour') as fh,
           count(*) filter (where delivered_at >= now() - interval '1 day') as dd,
           count(*) filter (where failed_at >= now() - interval '1 day') as fd
      from deliveries where delivered_at >= now() - interval '1 day' or failed_at >= now() - interval '1 day'`);
  const result: OutboundBacklog = {
    open: { PENDING: { count: 0, oldestSeconds: 0 }, RETRYING: { count: 0, oldestSeconds: 0 } },
    finished: {
      lastHour: { delivered: Number(done?.dh ?? 0), failed: Number(done?.fh ?? 0) },
      lastDay: { delivered: Number(done?.dd ?? 0), failed: Number(done?.fd ?? 0) },
    },
  };
  for (const row of open) result.open[row.status] = { count: Number(row.n), oldestSeconds: Math.max(0, Number(row.oldest ?? 0)) };
  return result;
}
