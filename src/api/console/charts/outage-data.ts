// C17: the figures of an endpoint's outage and recovery for one range, as its page (console, and the merchant's own in
// the portal) draws them: the attempts by outcome (C12), the outage spans in them with the latest one's exact start and
// end, the backlog at each bucket's end, the recovery ramp (P12: recovering_since and the profile's ramp) and what it
// allowed per bucket. The endpoint row was found for the signed-in principal; only its id reaches a query or a key.
import type { Endpoint } from '../../../outbound/endpoints.js';
import type { AttemptBucket } from '../../../outbound/charts.js';
import { backlogPoints, drainedAt, outageSpans, type BacklogSeries, type OutageSpan } from '../../../outbound/outage.js';
import { endpointBacklog, outageBounds, type OutageBounds } from '../../../outbound/outage-queries.js';
import { rampAllowance, rampBand, type RampBand } from '../../../outbound/ramp-allowance.js';
import type { RecoverySettings } from '../../../outbound/recovery.js';
import type { Db } from '../../../db/client.js';
import type { ChartRange, ChartWindow } from '../../../shared/chart-window.js';
import type { MinuteCache } from './cache.js';

export interface LatestOutage extends OutageSpan, OutageBounds {
  /** It spans the range's first bucket: it may have begun before the range (`started` is the first failure in it). */
  startsBeforeRange: boolean;
  /** The highest backlog from the outage's start until it drained (or the window's end). */
  peak: number;
  /** When the backlog was next seen empty after the outage ended (a bucket's end); null: not yet, or ongoing. */
  drainedAt: Date | null;
}

export interface OutageData {
  window: ChartWindow;
  attempts: AttemptBucket[];
  backlog: BacklogSeries;
  spans: OutageSpan[];
  latest: LatestOutage | null;
  ramp: RampBand | null;
  /** POSTs the ramp allowed per bucket; null outside the ramp. */
  allowance: (number | null)[];
}

export interface OutageDeps {
  db: Db;
  cache: MinuteCache;
  now: () => Date;
  recovery: RecoverySettings | undefined;
  attempts: (endpointId: string, range: ChartRange) => Promise<{ window: ChartWindow; buckets: AttemptBucket[] }>;
}

export async function loadOutage(d: OutageDeps, e: Endpoint, range: ChartRange): Promise<OutageData> {
  const { window: w, buckets } = await d.attempts(e.id, range);
  const backlog = await d.cache.get(`endpoint-backlog|${range}|${e.id}`, () => endpointBacklog(d.db, e.id, w, d.now()));
  const spans = outageSpans(buckets);
  const step = w.bucketSeconds * 1000;
  const at = (i: number) => new Date(w.from.getTime() + i * step);
  let latest: LatestOutage | null = null;
  const last = spans.at(-1);
  if (last) {
    const until = at(last.to);
    const bounds = await d.cache.get(`outage-bounds|${range}|${e.id}|${last.from}|${last.to}`, () =>
      outageBounds(d.db, e.id, at(last.from), until, last.ongoing ? until : new Date(until.getTime() + step)),
    );
    const drained = last.ongoing ? -1 : drainedAt(backlog.waiting, last.to);
    const end = drained < 0 ? backlog.waiting.length : drained + 1;
    latest = {
      ...last,
      ...bounds,
      // O13: an ongoing outage's streak start is on the endpoint row, exact even when it began before the range.
      ...(last.ongoing && e.failingSince ? { started: e.failingSince } : {}),
      startsBeforeRange: last.from === 0 && !(last.ongoing && e.failingSince),
      peak: Math.max(0, ...backlog.waiting.slice(last.from, end)),
      drainedAt: drained < 0 ? null : backlogPoints(w, d.now())[drained]!,
    };
  }
  const ramp = d.recovery ? rampBand(e.recoveringSince, d.recovery, e.rateLimitPerSecond) : null;
  const inWindow = ramp && ramp.end > w.from && ramp.start < w.to ? ramp : null;
  const allowance =
    inWindow && d.recovery ? rampAllowance(w, inWindow, d.recovery, e.rateLimitPerSecond) : w.buckets.map(() => null);
  return { window: w, attempts: buckets, backlog, spans, latest, ramp: inWindow, allowance };
}
