// C12, C17: the time windows the console's charts read: a range the page offers (last 15 min, hour, 6 h, 24 h, 7 days,
// 30 days; the 15-minute and 6-hour ones so a 30-minute outage and a seconds-long recovery ramp are more than a bar), cut
// into fixed buckets aligned to the epoch, ending at the next bucket boundary after `now`, so every query of one
// minute asks the same question (and the per-minute cache answers it). Pure: `now` is passed in.
export const CHART_RANGES = {
  '15m': { label: 'last 15 min', seconds: 900, bucketSeconds: 15 },
  '1h': { label: 'last hour', seconds: 3600, bucketSeconds: 60 },
  '6h': { label: 'last 6 h', seconds: 6 * 3600, bucketSeconds: 300 },
  '24h': { label: 'last 24 h', seconds: 86_400, bucketSeconds: 900 },
  '7d': { label: 'last 7 days', seconds: 7 * 86_400, bucketSeconds: 7200 },
  '30d': { label: 'last 30 days', seconds: 30 * 86_400, bucketSeconds: 86_400 },
} as const;

export type ChartRange = keyof typeof CHART_RANGES;

export interface ChartWindow {
  range: ChartRange;
  /** Inclusive start of the first bucket. */
  from: Date;
  /** Exclusive end of the last bucket. */
  to: Date;
  bucketSeconds: number;
  /** Bucket starts, oldest first. */
  buckets: Date[];
}

/** A range from a query parameter, or the fallback when it is missing or not one of `allowed`. */
export function parseRange<R extends ChartRange>(raw: string | undefined, allowed: readonly R[], fallback: R): R {
  return allowed.includes(raw as R) ? (raw as R) : fallback;
}

/** `bucketSeconds` overrides the range's own (a sparkline's coarser buckets); it should divide the range. */
export function chartWindow(
  range: ChartRange,
  now: Date,
  bucketSeconds: number = CHART_RANGES[range].bucketSeconds,
): ChartWindow {
  const { seconds } = CHART_RANGES[range];
  const step = bucketSeconds * 1000;
  const to = Math.floor(now.getTime() / step) * step + step;
  const from = to - seconds * 1000;
  const buckets: Date[] = [];
  for (let t = from; t < to; t += step) buckets.push(new Date(t));
  return { range, from: new Date(from), to: new Date(to), bucketSeconds, buckets };
}

/** The index of the bucket `at` falls in, or -1 outside the window. */
export function bucketIndex(w: ChartWindow, at: Date): number {
  const i = Math.floor((at.getTime() - w.from.getTime()) / (w.bucketSeconds * 1000));
  return i >= 0 && i < w.buckets.length ? i : -1;
}

/** A bucket's label on the x axis: HH:MM:SS for buckets under a minute, HH:MM (UTC) within a day, "MM-DD HH:MM" within a week, "MM-DD" beyond. */
export function bucketLabel(w: ChartWindow, at: Date): string {
  const iso = at.toISOString();
  if (w.bucketSeconds >= 86_400) return iso.slice(5, 10);
  if (w.bucketSeconds < 60) return iso.slice(11, 19);
  if (w.range === '7d') return `${iso.slice(5, 10)} ${iso.slice(11, 16)}`;
  return iso.slice(11, 16);
}

/** The part of a window from `from` (a bucket start) to `to`: the same buckets, fewer of them. */
export function subWindow(w: ChartWindow, from: Date, to: Date): ChartWindow {
  const buckets = w.buckets.filter((b) => b.getTime() >= from.getTime() && b.getTime() < to.getTime());
  return { range: w.range, from, to, bucketSeconds: w.bucketSeconds, buckets };
}
