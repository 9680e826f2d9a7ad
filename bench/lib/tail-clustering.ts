// P9: where a steady phase's tail lies in time (bench/lib/outbound-run.ts prints it beside the disk figures of
// ./disk-sampler.ts): the slowest 1 % in a few 100 ms windows is a stall, spread over many it is queueing.
/**
 * P9: whether a steady phase's tail is a stall or queueing. The slowest 1 % of the events (by latency), placed by when
 * they fell due: in how many 100 ms windows of the phase they lie, and what share of them the busiest second holds.
 */
export function tailClustering(events: { due: number; latency: number }[]) {
  const sorted = [...events].sort((a, b) => b.latency - a.latency);
  const slowest = sorted.slice(0, Math.max(1, Math.ceil(events.length / 100)));
  const first = Math.min(...events.map((e) => e.due));
  const last = Math.max(...events.map((e) => e.due));
  const windows = new Set(slowest.map((e) => Math.floor((e.due - first) / 100)));
  let busiest = 0;
  for (const e of slowest) busiest = Math.max(busiest, slowest.filter((o) => o.due >= e.due && o.due < e.due + 1_000).length);
  return {
    slowest,
    from: first,
    to: last + Math.max(...slowest.map((e) => e.latency)),
    count: slowest.length,
    windows: windows.size,
    ofWindows: Math.floor((last - first) / 100) + 1,
    busiestSecondShare: Math.round((busiest / slowest.length) * 100),
  };
}
