// C1: an endpoint's health as the console shows it: success rate and p95 latency of its attempts over the last hour
// and day, its last failed attempt (within 30 days), and (P13) how many of its deliveries are parked. The caller passes endpoint ids it already found for its principal (the
// endpoint service scopes them), so this never widens what a merchant key sees.
import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';

export interface WindowStats {
  attempts: number;
  succeeded: number;
  /** null when there was no attempt in the window. */
  p95LatencyMs: number | null;
}

export interface EndpointStats {
  lastHour: WindowStats;
  lastDay: WindowStats;
  lastError: { at: Date; kind: string | null; status: number | null; message: string | null } | null;
  /** P13: deliveries parked for it (its circuit open, or queued behind a backlog the probe is releasing). */
  parked: number;
}

const empty = (): WindowStats => ({ attempts: 0, succeeded: 0, p95LatencyMs: null });

export async function endpointStats(db: Db, endpointIds: string[], now: Date = new Date()): Promise<Map<string, EndpointStats>> {
  const result = new Map<string, EndpointStats>(
    endpointIds.map((id) => [id, { lastHour: empty(), lastDay: empty(), lastError: null, parked: 0 }]),
  );
  if (endpointIds.length === 0) return result;
  const ids = sql.join(
    endpointIds.map((id) => sql`${id}`),
    sql`, `,
  );
  const dayAgo = new Date(now.getTime() - 86_400_000);
  const hourAgo = new Date(now.getTime() - 3_600_000);
  const windows = await db.execute<{
    endpoint_id: string;
    hour: boolean | null;
    attempts: string;
    ok: string;
    p95: string | null;
  }>(sql`
    select endpoint_id, hour, count(*) as attempts, count(*) filter (where succeeded) as ok,
           percentile_cont(0.95) within group (order by latency_ms) as p95
      from (select d.endpoint_id, a.succeeded, a.latency_ms, a.started_at >= ${hourAgo.toISOString()}::timestamptz as hour
              from delivery_attempts a join deliveries d on d.id = a.delivery_id
             where d.endpoint_id in (${ids}) and a.started_at >= ${dayAgo.toISOString()}::timestamptz) t
     group by grouping sets ((endpoint_id, hour), (endpoint_id))`);
  // Rows: one per (endpoint, in the last hour or not) and one per endpoint over the day (hour is null there).
  for (const row of windows) {
    const stats = result.get(row.endpoint_id);
    if (!stats) continue;
    const w: WindowStats = {
      attempts: Number(row.attempts),
      succeeded: Number(row.ok),
      p95LatencyMs: row.p95 === null ? null : Math.round(Number(row.p95)),
    };
    if (row.hour === null) stats.lastDay = w;
    else if (row.hour) stats.lastHour = w;
  }
  const errors = await db.execute<{
    endpoint_id: string;
    started_at: string;
    error_kind: string | null;
    response_status: number | null;
    error_message: string | null;
  }>(sql`
    select distinct on (d.endpoint_id) d.endpoint_id, a.started_at, a.error_kind, a.response_status, a.error_message
      from delivery_attempts a join deliveries d on d.id = a.delivery_id
     where d.endpoint_id in (${ids}) and not a.succeeded and a.started_at >= ${new Date(now.getTime() - 30 * 86_400_000).toISOString()}::timestamptz
     order by d.endpoint_id, a.started_at desc`);
  for (const row of errors) {
    const stats = result.get(row.endpoint_id);
    if (stats)
      stats.lastError = {
        at: new Date(row.started_at),
        kind: row.error_kind,
        status: row.response_status,
        message: row.error_message,
      };
  }
  const parked = await db.execute<{ endpoint_id: string; parked: number }>(sql`
    select endpoint_id, count(*)::int as parked from deliveries
     where endpoint_id in (${ids}) and parked_since is not null group by endpoint_id`);
  for (const row of parked) result.get(row.endpoint_id)!.parked = row.parked;
  return result;
}

/** 0.953 → "95.3 %", no attempts → "—". */
export const successRate = (w: WindowStats) => (w.attempts === 0 ? '—' : `${((100 * w.succeeded) / w.attempts).toFixed(1)} %`);
