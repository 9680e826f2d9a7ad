// C7: the outbound backlog (PENDING and RETRYING counts, oldest age) and per-endpoint health, read from PostgreSQL.
// They describe the whole system, so only the API process binds them (one figure per metric, docs/operations.md).
// R6: a scrape never waits on more than one query per refresh interval; concurrent scrapes share it.
import { sql } from 'drizzle-orm';
import { Gauge } from 'prom-client';
import type { Db } from '../db/client.js';
import { registry } from './registry.js';

const REFRESH_MS = 15_000;
const BACKLOG = ['PENDING', 'RETRYING'] as const;

interface EndpointHealth {
  id: string;
  disabled: boolean;
  failingSeconds: number;
  attempts1h: number;
  succeeded1h: number;
}
interface Snapshot {
  backlog: Record<(typeof BACKLOG)[number], { count: number; oldestSeconds: number }>;
  endpoints: EndpointHealth[];
}

let source: Db | undefined;
let cached: { at: number; value: Snapshot } | undefined;
let inFlight: Promise<void> | undefined;

/** Called once by the API process (see api/admin/webhook-deliveries.ts). */
export function bindOutboundBacklogGauges(db: Db): void {
  if (source === db) return;
  source = db;
  cached = undefined;
}

async function query(db: Db): Promise<Snapshot> {
  const rows = await db.execute<{ status: string; n: string; oldest: string | null }>(sql`
    select status, count(*) as n, extract(epoch from now() - min(created_at)) as oldest
      from deliveries where status in ('PENDING', 'RETRYING') group by status`);
  const backlog = Object.fromEntries(BACKLOG.map((s) => [s, { count: 0, oldestSeconds: 0 }])) as Snapshot['backlog'];
  for (const r of rows)
    backlog[r.status as (typeof BACKLOG)[number]] = { count: Number(r.n), oldestSeconds: Math.max(0, Number(r.oldest ?? 0)) };
  const endpoints = await db.execute<{ id: string; status: string; failing: string | null; attempts: string; ok: string }>(sql`
    select e.id, e.status, extract(epoch from now() - e.failing_since) as failing,
           count(a.id) as attempts, count(a.id) filter (where a.succeeded) as ok
      from webhook_endpoints e
      left join deliveries d on d.endpoint_id = e.id and d.updated_at > now() - interval '1 hour'
      left join delivery_attempts a on a.delivery_id = d.id and a.started_at > now() - interval '1 hour'
     where e.deleted_at is null
     group by e.id, e.status, e.failing_since`);
  return {
    backlog,
    endpoints: endpoints.map((e) => ({
      id: e.id,
      disabled: e.status !== 'enabled',
      failingSeconds: Math.max(0, Number(e.failing ?? 0)),
      attempts1h: Number(e.attempts),
      succeeded1h: Number(e.ok),
    })),
  };
}

async function snapshot(): Promise<Snapshot | undefined> {
  const db = source;
  if (!db) return undefined;
  if (!cached || Date.now() - cached.at > REFRESH_MS) {
    inFlight ??= query(db)
      .then((value) => {
        if (source === db) cached = { at: Date.now(), value };
      })
      .catch(() => {}) // a failed refresh keeps the last snapshot
      .finally(() => (inFlight = undefined));
    await inFlight;
  }
  return cached?.value;
}

const gauge = (name: string, help: string, labelNames: string[], fill: (g: Gauge, s: Snapshot) => void) =>
  new Gauge({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      const s = await snapshot();
      if (!s) return;
      this.reset(); // an endpoint deleted since the last scrape disappears
      fill(this, s);
    },
  });

export const backlogDeliveries = gauge(
  'apipay_outbound_backlog_deliveries',
  'Deliveries not finished, by status (PENDING, RETRYING)',
  ['status'],
  (g, s) => {
    for (const status of BACKLOG) g.set({ status }, s.backlog[status].count);
  },
);
export const backlogOldest = gauge(
  'apipay_outbound_backlog_oldest_age_seconds',
  'Age of the oldest delivery in each unfinished status (0 when none)',
  ['status'],
  (g, s) => {
    for (const status of BACKLOG) g.set({ status }, s.backlog[status].oldestSeconds);
  },
);
export const endpointDisabled = gauge(
  'apipay_outbound_endpoint_disabled',
  'Per endpoint: 1 when disabled (by an operator or automatically, O13), else 0',
  ['endpoint_id'],
  (g, s) => {
    for (const e of s.endpoints) g.set({ endpoint_id: e.id }, e.disabled ? 1 : 0);
  },
);
export const endpointFailing = gauge(
  'apipay_outbound_endpoint_failing_seconds',
  'Per endpoint: how long its current failure streak has lasted (0 after any 2xx)',
  ['endpoint_id'],
  (g, s) => {
    for (const e of s.endpoints) g.set({ endpoint_id: e.id }, e.failingSeconds);
  },
);
export const endpointAttempts = gauge(
  'apipay_outbound_endpoint_attempts_1h',
  'Per endpoint: attempts in the last hour, by result (succeeded | failed)',
  ['endpoint_id', 'result'],
  (g, s) => {
    for (const e of s.endpoints) {
      g.set({ endpoint_id: e.id, result: 'succeeded' }, e.succeeded1h);
      g.set({ endpoint_id: e.id, result: 'failed' }, e.attempts1h - e.succeeded1h);
    }
  },
);
