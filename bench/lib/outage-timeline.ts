// P12 (issue 33), `bench:outage --timeline`: the outage's first seconds in 100 ms steps, to tell where a healthy
// delivery waits while the down merchant's circuit is still closed. Per step (by time since the outage began): the
// healthy deliveries produced in it and their p50/p99/max produce-to-receive, and the dispatcher's stage calls that
// ended in it (count and total ms, and the record stage's longest call); and the cores each process used in it.
import type { StageName } from './stages.js';
import { pidCpuMs, stackCpuMs } from './stack-cpu.js';
import { percentile } from './stats.js';

interface Call {
  at: number;
  stage: StageName;
  ms: number;
  count: number;
}

/** `pids`: other processes to follow (the delivery worker, the load). Samples CPU every 100 ms until `stop`. */
export function stageTimeline(pids: Record<string, number | undefined>) {
  const calls: Call[] = [];
  const cpu: { at: number; ms: Record<string, number> }[] = [];
  const sample = () => {
    const ms: Record<string, number> = {
      ...stackCpuMs(),
      app: process.cpuUsage().user / 1000 + process.cpuUsage().system / 1000,
    };
    for (const [name, pid] of Object.entries(pids))
      if (pid) {
        ms[name] = pidCpuMs(pid);
        ms[`${name}.main`] = pidCpuMs(`${pid}/task/${pid}`); // its main thread alone (the rest: workflow and libuv threads)
      }
    cpu.push({ at: Date.now(), ms });
    if (cpu.length > 20_000) cpu.splice(0, 10_000);
  };
  const timer = setInterval(sample, 100);
  timer.unref();
  /** Cores each process used over [a, b): from the samples nearest its ends. */
  const cores = (a: number, b: number): string => {
    const first = [...cpu].reverse().find((c) => c.at <= a);
    const last = cpu.find((c) => c.at >= b);
    if (!first || !last || last.at <= first.at) return '';
    const s = (last.at - first.at) / 1000;
    return Object.keys(last.ms)
      .map((k) => `${k} ${((last.ms[k]! - (first.ms[k] ?? 0)) / 1000 / s).toFixed(1)}`)
      .join(' ');
  };
  return {
    stop: () => clearInterval(timer),
    observe(stage: StageName, ms: number, count: number) {
      calls.push({ at: Date.now(), stage, ms, count });
      if (calls.length > 200_000) calls.splice(0, 100_000); // a long run keeps its last calls
    },
    /** Lines for [from + fromMs, from + toMs) in steps of `stepMs`; `healthy` as [produced, received]. */
    report(healthy: [number, number][], from: number, fromMs = -500, toMs = 7500, stepMs = 100): string[] {
      const lines: string[] = [];
      for (let t = fromMs; t < toMs; t += stepMs) {
        const a = from + t;
        const b = a + stepMs;
        const lat = healthy.filter(([p]) => p >= a && p < b).map(([p, r]) => r - p);
        const ended = calls.filter((c) => c.at >= a && c.at < b);
        const byStage = new Map<StageName, { n: number; ms: number; max: number; items: number }>();
        for (const c of ended) {
          const s = byStage.get(c.stage) ?? { n: 0, ms: 0, max: 0, items: 0 };
          s.n += 1;
          s.ms += c.ms;
          s.max = Math.max(s.max, c.ms);
          s.items += c.count;
          byStage.set(c.stage, s);
        }
        const stages = [...byStage]
          .map(([name, s]) => `${name} ${s.n}×/${s.items} ${s.ms.toFixed(0)} ms (max ${s.max.toFixed(0)})`)
          .join(', ');
        lines.push(
          `timeline  ${(t / 1000).toFixed(1).padStart(5)} s: healthy ${String(lat.length).padStart(3)} p50 ${percentile(lat, 0.5)} p99 ${percentile(lat, 0.99)} max ${Math.max(0, ...lat).toFixed(0)} ms | ${stages} | cores ${cores(a, b)}`,
        );
      }
      return lines;
    },
  };
}
