// C12, C13: the chart queries as the console and portal pages call them, behind the per-minute cache keyed by
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
import { chartWindow, type ChartRange, type ChartWindow } from '../../../shared/chart-window.js';
import { createMinuteCache, type MinuteCache } from './cache.js';

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
  cache: MinuteCache;
}

export function createChartServices(db: Db, now: () => Date = () => new Date()): ChartServices {
  const cache = createMinuteCache(now);
  const window = (range: ChartRange) => chartWindow(range, now());
  const ids = (list: string[]) => [...new Set(list)].sort().join(',');
  return {
    window,
    cache,
    attempts: (endpointId, range) =>
      cache.get(`attempts|${range}|${endpointId}`, async () => {
        const w = window(range);
        return { window: w, buckets: await attemptSeries(db, endpointId, w) };
      }),
    sparklines: (endpointIds, range) =>
      cache.get(`sparklines|${range}|${ids(endpointIds)}`, async () => {
        const w = window(range);
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
        return { window: w, series: await postingsByKind(db, w) };
      }),
  };
}
