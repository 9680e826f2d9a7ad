// C1: the inbound backlog as the console shows it: webhooks acknowledged vs reconciliations started vs posted to the
// ledger over the last hour and day, the oldest acknowledged webhook not yet started, and the manual-review queue.
import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';

export interface InboundWindow {
  acked: number;
  started: number;
  posted: number;
}

export interface InboundBacklog {
  lastHour: InboundWindow;
  lastDay: InboundWindow;
  unstarted: { count: number; oldestSeconds: number };
  manualReview: { count: number; oldestSeconds: number };
}

export async function inboundBacklog(db: Db): Promise<InboundBacklog> {
  const windows = await db.execute<{ hour: boolean | null; acked: string; started: string; posted: string }>(sql`
    select hour, count(*) as acked, count(*) filter (where started) as started, count(*) filter (where posted) as posted
      from (select r.received_at >= now() - interval '1 hour' as hour, r.workflow_started_at is not null as started,
                   c.ledger_transaction_id is not null as posted
              from webhook_receipts r
              left join reconciliations c on c.provider = r.provider and c.provider_event_id = r.provider_event_id
             where r.received_at >= now() - interval '1 day') t
     group by grouping sets ((hour), ())`);
  const zero = (): InboundWindow => ({ acked: 0, started: 0, posted: 0 });
  const result: InboundBacklog = {
    lastHour: zero(),
    lastDay: zero(),
    unstarted: { count: 0, oldestSeconds: 0 },
    manualReview: { count: 0, oldestSeconds: 0 },
  };
  for (const row of windows) {
    const w = { acked: Number(row.acked), started: Number(row.started), posted: Number(row.posted) };
    if (row.hour === null) result.lastDay = w;
    else if (row.hour) result.lastHour = w;
  }
  const [queues] = await db.execute<{
    unstarted: string;
    unstarted_oldest: string | null;
    review: string;
    review_oldest: string | null;
  }>(sql`
    select (select count(*) from webhook_receipts where workflow_started_at is null) as unstarted,
           (select extract(epoch from now() - min(received_at)) from webhook_receipts where workflow_started_at is null) as unstarted_oldest,
           (select count(*) from reconciliations where state = 'manual_review') as review,
           (select extract(epoch from now() - min(updated_at)) from reconciliations where state = 'manual_review') as review_oldest`);
  if (queues) {
    result.unstarted = { count: Number(queues.unstarted), oldestSeconds: Math.max(0, Number(queues.unstarted_oldest ?? 0)) };
    result.manualReview = { count: Number(queues.review), oldestSeconds: Math.max(0, Number(queues.review_oldest ?? 0)) };
  }
  return result;
}
