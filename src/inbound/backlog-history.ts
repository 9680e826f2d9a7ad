// C12: the history of the open queues for the console's backlog and review-queue charts. Once a minute the API
// process samples the outbound PENDING and RETRYING deliveries, the manual-review queue and the acknowledged
// webhooks not yet started (count and oldest age of each) into backlog_samples, one row per minute whichever API
// replica writes first, and deletes samples older than RETENTION_DAYS. The charts read the window's samples, the
// largest per bucket. Each sample is four index-backed counts (the status and state indexes, the unstarted one).
import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { bucketIndex, type ChartWindow } from '../shared/chart-window.js';

export const RETENTION_DAYS = 8;
export const SAMPLE_EVERY_MS = 60_000;

export interface BacklogSample {
  outboundPending: number;
  outboundPendingOldestS: number;
  outboundRetrying: number;
  outboundRetryingOldestS: number;
  manualReview: number;
  manualReviewOldestS: number;
  inboundUnstarted: number;
  inboundUnstartedOldestS: number;
}

/** Writes this minute's sample (once: another replica's wins) and prunes old ones. Answers whether it wrote. */
export async function sampleBacklog(db: Db, now: Date = new Date()): Promise<boolean> {
  const minute = new Date(Math.floor(now.getTime() / 60_000) * 60_000).toISOString();
  const at = now.toISOString();
  const written = await db.execute<{ minute: string }>(sql`
    insert into backlog_samples
    select ${minute}::timestamptz,
           count(*) filter (where d.status = 'PENDING'),
           coalesce(extract(epoch from ${at}::timestamptz - min(d.created_at) filter (where d.status = 'PENDING')), 0)::int,
           count(*) filter (where d.status = 'RETRYING'),
           coalesce(extract(epoch from ${at}::timestamptz - min(d.created_at) filter (where d.status = 'RETRYING')), 0)::int,
           (select count(*) from reconciliations where state = 'manual_review'),
           coalesce((select extract(epoch from ${at}::timestamptz - min(updated_at)) from reconciliations where state = 'manual_review'), 0)::int,
           (select count(*) from webhook_receipts where workflow_started_at is null),
           coalesce((select extract(epoch from ${at}::timestamptz - min(received_at)) from webhook_receipts where workflow_started_at is null), 0)::int
      from deliveries d where d.status in ('PENDING', 'RETRYING')
    on conflict (minute) do nothing
    returning minute`);
  await db.execute(sql`delete from backlog_samples where minute < ${at}::timestamptz - ${`${RETENTION_DAYS} days`}::interval`);
  return written.length > 0;
}

/** The samples in the window: per bucket the largest of each figure; null where no sample was taken. */
export async function backlogHistory(db: Db, w: ChartWindow): Promise<(BacklogSample | null)[]> {
  const out: (BacklogSample | null)[] = w.buckets.map(() => null);
  const rows = await db.execute<Record<string, string>>(sql`
    select extract(epoch from date_bin(${`${w.bucketSeconds} seconds`}::interval, minute, 'epoch'::timestamptz))::bigint as b,
           max(outbound_pending) as op, max(outbound_pending_oldest_s) as opo,
           max(outbound_retrying) as orr, max(outbound_retrying_oldest_s) as oro,
           max(manual_review) as mr, max(manual_review_oldest_s) as mro,
           max(inbound_unstarted) as iu, max(inbound_unstarted_oldest_s) as iuo
      from backlog_samples
     where minute >= ${w.from.toISOString()}::timestamptz and minute < ${w.to.toISOString()}::timestamptz
     group by 1`);
  for (const r of rows) {
    const i = bucketIndex(w, new Date(Number(r.b) * 1000));
    if (i < 0) continue;
    out[i] = {
      outboundPending: Number(r.op),
      outboundPendingOldestS: Number(r.opo),
      outboundRetrying: Number(r.orr),
      outboundRetryingOldestS: Number(r.oro),
      manualReview: Number(r.mr),
      manualReviewOldestS: Number(r.mro),
      inboundUnstarted: Number(r.iu),
      inboundUnstartedOldestS: Number(r.iuo),
    };
  }
  return out;
}

/** Samples once now and then every minute until stopped (the API process; errors are logged, never thrown). */
export function startBacklogSampler(db: Db, onError: (error: unknown) => void, everyMs = SAMPLE_EVERY_MS): () => void {
  const run = () => void sampleBacklog(db).catch(onError);
  run();
  const timer = setInterval(run, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
