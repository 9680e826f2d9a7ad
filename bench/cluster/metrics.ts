// Issue 34 (R22): the cluster drill's figures per kill: deliveries/s (2xx answers the merchants gave, per second)
// and the p99 latency from an event's produce to its first 2xx, before (the 20 s up to the kill), during (kill to
// recovery) and after (20 s from the recovery); the recovery time is from the kill until a trailing 5 s rate of
// deliveries, all of it after the kill, is back at 80% of the before rate (so 5 s is the shortest it can report,
// whether the node is back by then or not: the survivors may carry the load alone).
import type { MerchantPost } from '../soak/merchants.js';

export interface Window {
  deliveriesPerS: number;
  p99Ms: number | null;
  count: number;
}

export interface KillFigures {
  node: string;
  killedAt: number;
  backAt: number;
  recoveredAt: number | null;
  before: Window;
  during: Window;
  after: Window;
}

export const percentile = (values: number[], p: number): number | null => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};

/** First 2xx per event (the delivery of /ok, /flaky, /slow): its time and its latency from the produce. */
export function firstDeliveries(posts: MerchantPost[], sentAt: Map<string, number>): { at: number; latencyMs: number | null }[] {
  const first = new Map<string, number>();
  for (const p of posts) {
    if (!p.answered2xx) continue;
    const key = `${p.path} ${p.eventId}`;
    if (!first.has(key) || first.get(key)! > p.at) first.set(key, p.at);
  }
  return [...first].map(([key, at]) => {
    const sent = sentAt.get(key.slice(key.indexOf(' ') + 1));
    return { at, latencyMs: sent === undefined ? null : at - sent };
  });
}

export function windowOf(deliveries: { at: number; latencyMs: number | null }[], from: number, to: number): Window {
  const inside = deliveries.filter((d) => d.at >= from && d.at < to);
  const seconds = Math.max(1, (to - from) / 1000);
  return {
    deliveriesPerS: inside.length / seconds,
    p99Ms: percentile(
      inside.map((d) => d.latencyMs).filter((l): l is number => l !== null),
      99,
    ),
    count: inside.length,
  };
}

/** The first time at or after `from` whose trailing 5 s rate is at least `share` of `baseline` per second. */
export function recoveredAt(
  deliveries: { at: number }[],
  from: number,
  until: number,
  baseline: number,
  share = 0.8,
): number | null {
  if (baseline <= 0) return from;
  const times = deliveries.map((d) => d.at).sort((a, b) => a - b);
  for (let t = from; t <= until; t += 250) {
    const n = times.filter((x) => x > t - 5_000 && x <= t).length;
    if (n / 5 >= baseline * share) return t;
  }
  return null;
}

export function figures(
  node: string,
  killedAt: number,
  backAt: number,
  nextAt: number,
  deliveries: { at: number; latencyMs: number | null }[],
): KillFigures {
  const before = windowOf(deliveries, killedAt - 20_000, killedAt);
  const recovered = recoveredAt(deliveries, killedAt + 5_000, nextAt, before.deliveriesPerS);
  const end = recovered ?? nextAt;
  return {
    node,
    killedAt,
    backAt,
    recoveredAt: recovered,
    before,
    during: windowOf(deliveries, killedAt, end),
    after: windowOf(deliveries, end, Math.min(nextAt, end + 20_000)),
  };
}

const fmt = (w: Window) => `${w.deliveriesPerS.toFixed(1)}/s p99 ${w.p99Ms === null ? '—' : `${(w.p99Ms / 1000).toFixed(1)}s`}`;
export function figureLine(f: KillFigures): string {
  const recovery =
    f.recoveredAt === null
      ? 'not recovered before the next step'
      : `recovered in ${((f.recoveredAt - f.killedAt) / 1000).toFixed(1)}s`;
  return `${f.node}: back after ${((f.backAt - f.killedAt) / 1000).toFixed(1)}s, ${recovery}; before ${fmt(f.before)}, during ${fmt(f.during)}, after ${fmt(f.after)}`;
}
