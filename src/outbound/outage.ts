// C17: an endpoint's outage and backlog as the console's endpoint page draws them, as pure rules (no I/O, no clock):
// the outage spans found in its attempt buckets (every attempt failed, bridging the quiet buckets between retries,
// until the first success), and the backlog at each bucket's end: the deliveries created before that instant and
// DELIVERED or FAILED only after it. outage-queries.ts computes the backlog in SQL by the same coverage rule
// (`coveredPoints`); test/unit/outage-charts.test.ts checks the rules against a brute-force count.
import type { ChartWindow } from '../shared/chart-window.js';
import type { AttemptBucket } from './charts.js';

export interface OutageSpan {
  /** Index of the first bucket in which every attempt failed. */
  from: number;
  /** Index (exclusive) of the bucket holding the first success after it; the window's length when still ongoing. */
  to: number;
  ongoing: boolean;
  /** Failed attempts in the span's buckets. */
  failed: number;
}

/** Spans with fewer failed attempts than this are one unlucky attempt, not an outage. */
export const MIN_FAILED = 2;

const failedIn = (b: AttemptBucket) => b.clientError + b.serverError + b.timeout + b.other;

/**
 * The periods in which every attempt failed: a span opens at a bucket with failures and no success, runs on through
 * buckets with no attempt (the waits between retries), and closes at the first bucket with a success.
 */
export function outageSpans(buckets: readonly AttemptBucket[], minFailed = MIN_FAILED): OutageSpan[] {
  const spans: OutageSpan[] = [];
  let open: OutageSpan | null = null;
  for (let i = 0; i < buckets.length; i++) {
    const b = buckets[i]!;
    const failed = failedIn(b);
    if (b.ok > 0) {
      if (open) spans.push({ ...open, to: i });
      open = null;
    } else if (failed > 0) {
      open ??= { from: i, to: i + 1, ongoing: false, failed: 0 };
      open.failed += failed;
    }
  }
  if (open) spans.push({ ...open, to: buckets.length, ongoing: true });
  return spans.filter((s) => s.failed >= minFailed);
}

/** The instant each bucket's backlog is read at: the bucket's end, the last one `now` when it is still open. */
export function backlogPoints(w: ChartWindow, now: Date): Date[] {
  const step = w.bucketSeconds * 1000;
  return w.buckets.map((b, i) =>
    i === w.buckets.length - 1 ? new Date(Math.min(b.getTime() + step, now.getTime())) : new Date(b.getTime() + step),
  );
}

/**
 * The points (indexes) at which a delivery created at `created` and final (DELIVERED or FAILED) at `final` (null:
 * still waiting) is waiting: point i, at from + (i + 1) × step, counts it when created < point < final. Empty when it
 * waits at none. The SQL in outage-queries.ts is this arithmetic. The last point is `now`, which no final time passes.
 */
export function coveredPoints(w: ChartWindow, created: Date, final: Date | null): [number, number] | null {
  const step = w.bucketSeconds * 1000;
  const n = w.buckets.length;
  const first = Math.max(0, Math.floor((created.getTime() - w.from.getTime()) / step));
  const last = final === null ? n - 1 : Math.min(n - 1, Math.ceil((final.getTime() - w.from.getTime()) / step) - 2);
  return first <= last && first < n ? [first, last] : null;
}

export interface BacklogSeries {
  /** Deliveries waiting at each bucket's end (the last bucket: now). */
  waiting: number[];
  /** Seconds the oldest of them had waited; null when none waited. */
  oldestS: (number | null)[];
}

/** The backlog from each point's waiting count and the oldest waiting delivery's creation time (absent: none). */
export function backlogSeries(
  w: ChartWindow,
  now: Date,
  perPoint: ReadonlyMap<number, { waiting: number; oldest: Date }>,
): BacklogSeries {
  const points = backlogPoints(w, now);
  return {
    waiting: points.map((_, i) => Math.max(0, perPoint.get(i)?.waiting ?? 0)),
    oldestS: points.map((p, i) => {
      const got = perPoint.get(i);
      return got && got.waiting > 0 ? Math.max(0, Math.round((p.getTime() - got.oldest.getTime()) / 1000)) : null;
    }),
  };
}

/** The same figures from the deliveries themselves (what the SQL aggregates; the tests' reference). */
export function backlogFromRows(
  w: ChartWindow,
  now: Date,
  rows: readonly { created: Date; final: Date | null }[],
): BacklogSeries {
  const perPoint = new Map<number, { waiting: number; oldest: Date }>();
  for (const r of rows) {
    const span = coveredPoints(w, r.created, r.final);
    if (!span) continue;
    for (let i = span[0]; i <= span[1]; i++) {
      const got = perPoint.get(i);
      if (!got) perPoint.set(i, { waiting: 1, oldest: r.created });
      else {
        got.waiting += 1;
        if (r.created < got.oldest) got.oldest = r.created;
      }
    }
  }
  return backlogSeries(w, now, perPoint);
}

/** The first point at or after `from` where nothing waits (the backlog drained), or -1. */
export function drainedAt(waiting: readonly number[], from: number): number {
  for (let i = Math.max(0, from); i < waiting.length; i++) if (waiting[i] === 0) return i;
  return -1;
}
