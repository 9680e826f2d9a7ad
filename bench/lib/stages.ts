// P2: where the batched dispatcher's time goes — the handler's observe hook (src/dispatcher/outbound-handler.ts)
// summed per stage. Partitions run concurrently, so a stage's total is handler time spent in it, not wall time.
import { loadavg } from 'node:os';

export type StageName = 'fan_out' | 'sign' | 'reserve' | 'post' | 'record' | 'handoff';
const ORDER: StageName[] = ['fan_out', 'sign', 'reserve', 'post', 'record', 'handoff'];

export function stageTimer() {
  const totals = new Map<StageName, { ms: number; items: number; calls: number }>();
  return {
    observe(stage: StageName, ms: number, items: number) {
      const t = totals.get(stage) ?? { ms: 0, items: 0, calls: 0 };
      t.ms += ms;
      t.items += items;
      t.calls += 1;
      totals.set(stage, t);
    },
    reset() {
      totals.clear();
    },
    /** Per stage that ran: handler ms per 1,000 deliveries. */
    perThousand(deliveries: number): [StageName, number][] {
      return ORDER.filter((s) => totals.has(s)).map((s) => [s, Math.round((totals.get(s)!.ms / deliveries) * 1000)]);
    },
    /** One line: per stage, ms per 1,000 deliveries and its share of the handler's time, and the average chunk size. */
    report(deliveries: number): string {
      const all = ORDER.reduce((n, s) => n + (totals.get(s)?.ms ?? 0), 0);
      const parts = ORDER.filter((s) => totals.has(s)).map((s) => {
        const t = totals.get(s)!;
        return `${s} ${((t.ms / deliveries) * 1000).toFixed(0)} ms/1k (${((t.ms / all) * 100).toFixed(0)} %, ${t.calls} calls, ${(t.items / t.calls).toFixed(0)} per call)`;
      });
      return parts.join('; ');
    },
  };
}

/** The 1/5/15-minute load averages, for figures measured on a shared machine. */
export const loadAverage = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' / ');
