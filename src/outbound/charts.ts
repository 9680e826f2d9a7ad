// C12, C13: what the console's endpoint charts and the portal's home read from delivery_attempts and deliveries:
// attempts per bucket by outcome with p50/p99 latency, success-rate sparklines, the last day's failures grouped by
// answer, and the deliveries waiting for their next attempt. Every query is bounded by endpoint ids (which the caller
// found for its principal: the endpoint service scopes them) or by one merchant account, and by a time window, and
// runs on an index of migration 0028 (delivery_attempts (endpoint_id, started_at) with the figures it aggregates;
// the open deliveries by merchant and next attempt). An attempt still in flight (its reservation row, O7) is not
// counted until it has an outcome. Measured in docs/benchmarks.md.
import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { bucketIndex, type ChartWindow } from '../shared/chart-window.js';
import { IN_FLIGHT } from './attempt-store.js';

export interface AttemptBucket {
  ok: number;
  clientError: number;
  serverError: number;
  timeout: number;
  /** Connection refused, redirects, unsafe URLs: no HTTP answer that is not a timeout. */
  other: number;
  p50Ms: number | null;
  p99Ms: number | null;
}

const bucketOf = (w: ChartWindow) =>
  sql.raw(`date_bin('${Math.floor(w.bucketSeconds)} seconds'::interval, started_at, 'epoch'::timestamptz)`);
const idList = (ids: string[]) =>
  sql.join(
    ids.map((id) => sql`${id}`),
    sql`, `,
  );

/** One endpoint's attempts in the window, one entry per bucket (zeros where none). */
export async function attemptSeries(db: Db, endpointId: string, w: ChartWindow): Promise<AttemptBucket[]> {
  const out: AttemptBucket[] = w.buckets.map(() => ({
    ok: 0,
    clientError: 0,
    serverError: 0,
    timeout: 0,
    other: 0,
    p50Ms: null,
    p99Ms: null,
  }));
  const rows = await db.execute<{
    b: string;
    n: string;
    ok: string;
    c4: string;
    c5: string;
    t: string;
    p50: number | null;
    p99: number | null;
  }>(sql`
    select extract(epoch from ${bucketOf(w)})::bigint as b, count(*) as n,
           count(*) filter (where succeeded) as ok,
           count(*) filter (where not succeeded and error_kind = 'timeout') as t,
           count(*) filter (where not succeeded and error_kind is distinct from 'timeout' and response_status between 400 and 499) as c4,
           count(*) filter (where not succeeded and error_kind is distinct from 'timeout' and response_status >= 500) as c5,
           percentile_cont(0.5) within group (order by latency_ms) as p50,
           percentile_cont(0.99) within group (order by latency_ms) as p99
      from delivery_attempts
     where endpoint_id = ${endpointId} and started_at >= ${w.from.toISOString()}::timestamptz and started_at < ${w.to.toISOString()}::timestamptz
       and error_kind is distinct from ${IN_FLIGHT}
     group by 1`);
  for (const r of rows) {
    const i = bucketIndex(w, new Date(Number(r.b) * 1000));
    if (i < 0) continue;
    const [n, ok, c4, c5, t] = [r.n, r.ok, r.c4, r.c5, r.t].map(Number) as [number, number, number, number, number];
    out[i] = {
      ok,
      clientError: c4,
      serverError: c5,
      timeout: t,
      other: Math.max(0, n - ok - c4 - c5 - t),
      p50Ms: r.p50 === null ? null : Math.round(Number(r.p50)),
      p99Ms: r.p99 === null ? null : Math.round(Number(r.p99)),
    };
  }
  return out;
}

/** Success rate (0–100) per bucket for each endpoint; null where a bucket had no attempt. */
export async function successSparklines(db: Db, endpointIds: string[], w: ChartWindow): Promise<Map<string, (number | null)[]>> {
  const out = new Map<string, (number | null)[]>(endpointIds.map((id) => [id, w.buckets.map(() => null)]));
  if (endpointIds.length === 0) return out;
  const rows = await db.execute<{ endpoint_id: string; b: string; n: string; ok: string }>(sql`
    select endpoint_id, extract(epoch from ${bucketOf(w)})::bigint as b, count(*) as n, count(*) filter (where succeeded) as ok
      from delivery_attempts
     where endpoint_id in (${idList(endpointIds)}) and started_at >= ${w.from.toISOString()}::timestamptz and started_at < ${w.to.toISOString()}::timestamptz
       and error_kind is distinct from ${IN_FLIGHT}
     group by 1, 2`);
  for (const r of rows) {
    const series = out.get(r.endpoint_id);
    const i = bucketIndex(w, new Date(Number(r.b) * 1000));
    if (series && i >= 0 && Number(r.n) > 0) series[i] = (100 * Number(r.ok)) / Number(r.n);
  }
  return out;
}

export interface FailureGroup {
  endpointId: string;
  /** The HTTP status, or null when there was no answer (then `kind` says why). */
  status: number | null;
  kind: string | null;
  count: number;
  lastAt: Date;
}

/** Failed attempts since `since`, grouped by endpoint and answer, the largest groups first (at most `limit`). */
export async function failureGroups(db: Db, endpointIds: string[], since: Date, limit = 50): Promise<FailureGroup[]> {
  if (endpointIds.length === 0) return [];
  const rows = await db.execute<{
    endpoint_id: string;
    response_status: number | null;
    error_kind: string | null;
    n: string;
    last: string;
  }>(sql`
    select endpoint_id, response_status, error_kind, count(*) as n, max(started_at) as last
      from delivery_attempts
     where endpoint_id in (${idList(endpointIds)}) and started_at >= ${since.toISOString()}::timestamptz and not succeeded
       and error_kind is distinct from ${IN_FLIGHT}
     group by 1, 2, 3
     order by n desc, last desc
     limit ${limit}`);
  return rows.map((r) => ({
    endpointId: r.endpoint_id,
    status: r.response_status === null ? null : Number(r.response_status),
    kind: r.error_kind,
    count: Number(r.n),
    lastAt: new Date(r.last),
  }));
}

export interface WaitingDelivery {
  id: string;
  endpointId: string;
  eventId: string;
  status: 'PENDING' | 'RETRYING';
  attemptCount: number;
  nextAttemptAt: Date | null;
}

/** A merchant's deliveries still to be sent, the soonest next attempt first, and how many there are in all. */
export async function waitingDeliveries(
  db: Db,
  merchantAccount: string,
  limit = 20,
): Promise<{ count: number; rows: WaitingDelivery[] }> {
  const rows = await db.execute<{
    id: string;
    endpoint_id: string;
    event_public_id: string;
    status: 'PENDING' | 'RETRYING';
    attempt_count: number;
    next_attempt_at: string | null;
  }>(sql`
    select id, endpoint_id, event_public_id, status, attempt_count, next_attempt_at
      from deliveries
     where merchant_account = ${merchantAccount} and status in ('PENDING', 'RETRYING')
     order by next_attempt_at nulls last
     limit ${limit}`);
  const [total] = await db.execute<{ n: string }>(sql`
    select count(*) as n from (select 1 from deliveries
     where merchant_account = ${merchantAccount} and status in ('PENDING', 'RETRYING') limit 10000) t`);
  return {
    count: Number(total?.n ?? 0),
    rows: rows.map((r) => ({
      id: r.id,
      endpointId: r.endpoint_id,
      eventId: r.event_public_id,
      status: r.status,
      attemptCount: Number(r.attempt_count),
      nextAttemptAt: r.next_attempt_at ? new Date(r.next_attempt_at) : null,
    })),
  };
}
