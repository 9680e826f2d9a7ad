// I13: ledger success measured apart from acknowledgement (the ingress counts acks): ledger mutations, the ack-to-ledger
// lag, reconciliation queue depth, manual-review count and rate (refreshed in the background, R6), terminal rejections.
import { Counter, Gauge, Histogram } from 'prom-client';
import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { registry } from './registry.js';

export const ledgerMutations = new Counter({
  name: 'apipay_ledger_mutations_total',
  help: 'Ledger postings by kind and result: posted (new rows), replayed (same key and content), conflict, awaiting_capture',
  labelNames: ['kind', 'result'] as const,
  registers: [registry],
});

export const ackToLedgerLag = new Histogram({
  name: 'apipay_inbound_ack_to_ledger_seconds',
  help: 'From the 200 to the provider (acknowledgedAt) to the ledger posting of the event',
  labelNames: ['kind'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21_600, 86_400],
  registers: [registry],
});

export const reconciliationTransitions = new Counter({
  name: 'apipay_reconciliation_transitions_total',
  help: 'Reconciliation state changes recorded, by target state and actor (system | operator)',
  labelNames: ['to', 'actor'] as const,
  registers: [registry],
});

export const terminalRejected = new Counter({
  name: 'apipay_reconciliation_rejected_total',
  help: 'Reconciliations that ended rejected (declined, stale, or rejected by an operator)',
  labelNames: ['actor'] as const,
  registers: [registry],
});

export const manualReviewEntered = new Counter({
  name: 'apipay_reconciliation_manual_review_total',
  help: 'Reconciliations moved to manual_review (timeout, amount or currency conflict, reversal over the settled amount)',
  registers: [registry],
});

// R6: these gauges count rows, so a scrape never runs the query itself. The first scrape waits for one refresh
// (concurrent scrapes share it), then a background timer refreshes the snapshot every interval and scrapes read it.
const DEFAULT_REFRESH_MS = 15_000;
let depthSource: Db | undefined;
let refreshMs = DEFAULT_REFRESH_MS;
let cached: Snapshot | undefined;
let refreshing: Promise<void> | undefined;
let timer: NodeJS.Timeout | undefined;

interface Snapshot {
  depth: number;
  inReview: number;
  reviewRate: number;
  oldestReviewSeconds: number;
}

/** Gauges read from PostgreSQL that describe the whole system: C7, only the API process binds them. */
export function bindReconciliationGauges(db: Db): void {
  if (depthSource === db) return;
  depthSource = db;
  cached = undefined;
}

/** How often the snapshot is refreshed once the gauges are scraped (METRICS_REFRESH_INTERVAL_MS). */
export function setGaugeRefreshInterval(ms: number): void {
  refreshMs = ms;
  if (timer) {
    clearInterval(timer);
    timer = undefined;
    startTimer();
  }
}

function startTimer(): void {
  timer ??= setInterval(() => void refresh(), refreshMs);
  timer.unref(); // never keeps a process alive
}

async function query(db: Db): Promise<Snapshot> {
  const [row] = await db.execute<{ depth: string; in_review: string; oldest_review: string | null; ever_review: string; decided: string }>(sql`
    select count(*) filter (where state not in ('applied', 'rejected')) as depth,
           count(*) filter (where state = 'manual_review') as in_review,
           extract(epoch from now() - min(updated_at) filter (where state = 'manual_review')) as oldest_review,
           (select count(*) from reconciliation_transitions where to_state = 'manual_review') as ever_review,
           (select count(*) from reconciliation_transitions where from_state = 'reconciling') as decided
      from reconciliations`);
  const decided = Number(row?.decided ?? 0);
  return {
    depth: Number(row?.depth ?? 0),
    inReview: Number(row?.in_review ?? 0),
    reviewRate: decided === 0 ? 0 : Number(row?.ever_review ?? 0) / decided,
    oldestReviewSeconds: Math.max(0, Number(row?.oldest_review ?? 0)),
  };
}

/** One refresh at a time: callers arriving meanwhile share it. A failure keeps the last snapshot. */
function refresh(): Promise<void> {
  const db = depthSource;
  if (!db) return Promise.resolve();
  refreshing ??= query(db)
    .then((value) => {
      if (depthSource === db) cached = value;
    })
    .catch(() => {})
    .finally(() => {
      refreshing = undefined;
    });
  return refreshing;
}

async function snapshot(): Promise<Snapshot | undefined> {
  if (!depthSource) return undefined;
  startTimer();
  if (!cached) await refresh();
  return cached;
}

const gauge = (name: string, help: string, pick: (s: Snapshot) => number) =>
  new Gauge({
    name,
    help,
    registers: [registry],
    async collect() {
      const s = await snapshot();
      if (s) this.set(pick(s));
    },
  });

export const queueDepth = gauge('apipay_reconciliation_queue_depth', 'Reconciliations not yet applied or rejected (received, reconciling, manual_review)', (s) => s.depth);
export const manualReviewOpen = gauge('apipay_reconciliation_manual_review_open', 'Reconciliations waiting in manual_review now', (s) => s.inReview);
export const manualReviewOldest = gauge(
  'apipay_reconciliation_manual_review_oldest_age_seconds',
  'How long the oldest reconciliation in manual_review has waited (0 when none)',
  (s) => s.oldestReviewSeconds,
);
export const manualReviewRate = gauge(
  'apipay_reconciliation_manual_review_rate',
  'Share of reconciliations decided by the workflow that went to manual_review (0–1)',
  (s) => s.reviewRate,
);
