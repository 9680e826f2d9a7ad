// C12, C13, C17: the chart queries as the console and portal pages call them, behind the per-minute cache keyed by
// (query, range, scope). Pages pass only endpoint ids they already found for the signed-in principal, or the
// merchant account of a portal session, so the scope of a cached answer is what its caller may read.
import type { Db } from '../../../db/client.js';
import { backlogHistory, type BacklogSample } from '../../../inbound/backlog-history.js';
import { ackToLedgerLag, type LagBucket } from '../../../inbound/charts.js';
import { postingsByKind } from '../../../ledger/charts.js';
import {
  attemptSeries,
  failureGroups,
  successSparklines,
  waitingDeliveries,
  type AttemptBucket,
  type FailureGroup,
  type WaitingDelivery,
} from '../../../outbound/charts.js';
import { chartWindow, subWindow, type ChartRange, type ChartWindow } from '../../../shared/chart-window.js';
import type { Endpoint } from '../../../outbound/endpoints.js';
import type { RecoverySettings } from '../../../outbound/recovery.js';
import { createMinuteCache, type MinuteCache } from './cache.js';
import { loadOutage, type OutageData } from './outage-data.js';

export interface ChartServices {
  window: (range: ChartRange) => ChartWindow;
  attempts: (endpointId: string, range: ChartRange) => Promise<{ window: ChartWindow; buckets: AttemptBucket[] }>;
  sparklines: (
    endpointIds: string[],
    range: ChartRange,
  ) => Promise<{ window: ChartWindow; series: Map<string, (number | null)[]> }>;
  failures: (endpointIds: string[], scope: string) => Promise<FailureGroup[]>;
  waiting: (merchantAccount: string) => Promise<{ count: number; rows: WaitingDelivery[] }>;
  backlog: (range: ChartRange) => Promise<{ window: ChartWindow; samples: (BacklogSample | null)[] }>;
  lag: (range: ChartRange) => Promise<{ window: ChartWindow; buckets: LagBucket[] }>;
  postings: (range: ChartRange) => Promise<{ window: ChartWindow; series: Map<string, number[]> }>;
  /** C17: the endpoint's outage, backlog and recovery ramp (the endpoint found for the signed-in principal). */
  outage: (endpoint: Endpoint, range: ChartRange) => Promise<OutageData>;
  cache: MinuteCache;
}

export function createChartServices(db: Db, now: () => Date = () => new Date(), recovery?: RecoverySettings): ChartServices {
  const cache = createMinuteCache(now);
  const window = (range: ChartRange) => chartWindow(range, now());
  const ids = (list: string[]) => [...new Set(list)].sort().join(',');
  const closedDays = new Map<number, Map<string, number>>();
  const attempts = (endpointId: string, range: ChartRange) =>
    cache.get(`attempts|${range}|${endpointId}`, async () => {
      const w = window(range);
      return { window: w, buckets: await attemptSeries(db, endpointId, w) };
    });
  return {
    window,
    cache,
    attempts,
    outage: (endpoint, range) => loadOutage({ db, cache, now, recovery, attempts }, endpoint, range),
    sparklines: (endpointIds, range) =>
      cache.get(`sparklines|${range}|${ids(endpointIds)}`, async () => {
        const w = chartWindow(range, now(), range === '24h' ? 3600 : undefined); // one column an hour
        return { window: w, series: await successSparklines(db, endpointIds, w) };
      }),
    failures: (endpointIds, scope) =>
      cache.get(`failures|24h|${scope}|${ids(endpointIds)}`, () =>
        failureGroups(db, endpointIds, new Date(now().getTime() - 86_400_000)),
      ),
    waiting: (merchantAccount) => cache.get(`waiting|now|${merchantAccount}`, () => waitingDeliveries(db, merchantAccount)),
    backlog: (range) =>
      cache.get(`backlog|${range}|all`, async () => {
        const w = window(range);
        return { window: w, samples: await backlogHistory(db, w) };
      }),
    lag: (range) =>
      cache.get(`lag|${range}|all`, async () => {
        const w = window(range);
        return { window: w, buckets: await ackToLedgerLag(db, w) };
      }),
    postings: (range) =>
      cache.get(`postings|${range}|all`, async () => {
        const w = window(range);
        return { window: w, series: await postingsWithClosedDays(db, w, now(), closedDays) };
      }),
  };
}

/** A day is closed (its postings can no longer change: the ledger is append-only, posted_at the insert's time) this long after it ended. */
const SETTLE_MS = 5 * 60_000;
const MAX_CLOSED_DAYS = 400;

/**
 * Postings per day, each closed day read once per process and kept (they cannot change), so a cache miss reads only
 * the days not yet kept and the open ones (today, or yesterday in its first minutes) from PostgreSQL.
 */
async function postingsWithClosedDays(db: Db, w: ChartWindow, now: Date, closed: Map<number, Map<string, number>>) {
  const step = w.bucketSeconds * 1000;
  const settled = now.getTime() - SETTLE_MS;
  const isClosed = (b: Date) => b.getTime() + step <= settled;
  const missing = w.buckets.filter((b) => isClosed(b) && !closed.has(b.getTime()));
  if (missing.length) {
    const sub = subWindow(w, missing[0]!, new Date(missing.at(-1)!.getTime() + step));
    const got = await postingsByKind(db, sub);
    sub.buckets.forEach((b, i) => closed.set(b.getTime(), new Map([...got].map(([k, v]) => [k, v[i] ?? 0]))));
    for (const k of closed.keys()) if (closed.size > MAX_CLOSED_DAYS) closed.delete(k);
  }
  const open = w.buckets.filter((b) => !isClosed(b));
  const fresh = open.length ? await postingsByKind(db, subWindow(w, open[0]!, w.to)) : new Map<string, number[]>();
  const series = new Map<string, number[]>();
  const put = (key: string, i: number, n: number) => {
    if (!n) return;
    const s = series.get(key) ?? w.buckets.map(() => 0);
    s[i] = n;
    series.set(key, s);
  };
  w.buckets.forEach((b, i) => {
    for (const [k, n] of closed.get(b.getTime()) ?? []) put(k, i, n);
  });
  for (const [k, v] of fresh) v.forEach((n, j) => put(k, w.buckets.length - open.length + j, n));
  return new Map([...series.entries()].sort(([a], [b]) => a.localeCompare(b)));
}
