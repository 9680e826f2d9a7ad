// P8: the tail figures of one process of a benchmark — event-loop delay (perf_hooks.monitorEventLoopDelay: p99 and
// max) and garbage-collection pauses (a PerformanceObserver on 'gc': count, total, longest, the major ones' total),
// taken per phase (`reset()` at its start, `snapshot()` at its end). Every process of a bench run (the app, the load
// generator, the bench itself) keeps one and reports it, so a stall shows up where it happened. In production the same
// two figures are the default metrics of src/metrics/registry.ts (nodejs_eventloop_lag_p99_seconds,
// nodejs_gc_duration_seconds), on each process's private /metrics listener.
import { readdirSync, readFileSync } from 'node:fs';
import { constants, monitorEventLoopDelay, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';

export interface ProcessStats {
  process: string;
  /** Event-loop delay beyond the 10 ms sampling timer, p99 and max, in ms. */
  loopP99Ms: number;
  loopMaxMs: number;
  gcCount: number;
  gcMs: number;
  gcMaxMs: number;
  gcMajorMs: number;
  /** CPU time of the process during the phase (user + system), ms. */
  cpuMs: number;
  /**
   * The same CPU split by thread (Linux /proc/self/task, 10 ms ticks): the main JavaScript thread, Temporal's core
   * (its tokio threads) and every other thread (V8's GC and compiler helpers, libuv's pool). Absent off Linux.
   */
  threads?: ThreadCpu;
}

export interface ThreadCpu {
  mainMs: number;
  temporalCoreMs: number;
  otherMs: number;
}

type ThreadTicks = Map<string, { comm: string; ticks: number }>;

/** Per-thread CPU ticks of this process; an empty map where /proc is not there. */
function threadTicks(): ThreadTicks {
  const out: ThreadTicks = new Map();
  let tasks: string[];
  try {
    tasks = readdirSync('/proc/self/task');
  } catch {
    return out;
  }
  for (const tid of tasks) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(tid, { comm, ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}

function threadCpu(before: ThreadTicks, after: ThreadTicks): ThreadCpu | undefined {
  if (after.size === 0) return undefined;
  const split = { mainMs: 0, temporalCoreMs: 0, otherMs: 0 };
  for (const [tid, now] of after) {
    const ms = (now.ticks - (before.get(tid)?.ticks ?? 0)) * 10;
    if (tid === String(process.pid)) split.mainMs += ms;
    else if (now.comm.startsWith('tokio')) split.temporalCoreMs += ms;
    else split.otherMs += ms;
  }
  return split;
}

export interface ProcessStatsRecorder {
  reset(): void;
  snapshot(): ProcessStats;
  /** Major (mark-compact) collections since the recorder began, whatever the resets. */
  majorGcs(): number;
}

export function recordProcessStats(name: string): ProcessStatsRecorder {
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  let gc = { count: 0, ms: 0, maxMs: 0, majorMs: 0 };
  let majors = 0;
  let cpu = process.cpuUsage();
  let ticks = threadTicks();
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[]) {
      gc.count += 1;
      gc.ms += entry.duration;
      gc.maxMs = Math.max(gc.maxMs, entry.duration);
      if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        gc.majorMs += entry.duration;
        majors += 1;
      }
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  const ms = (ns: number) => Math.round((ns / 1e6) * 10) / 10;
  return {
    majorGcs: () => majors,
    reset() {
      loop.reset();
      gc = { count: 0, ms: 0, maxMs: 0, majorMs: 0 };
      cpu = process.cpuUsage();
      ticks = threadTicks();
    },
    snapshot() {
      const used = process.cpuUsage(cpu);
      return {
        process: name,
        // The histogram records the whole interval between timer runs; what exceeds the 10 ms resolution is delay.
        loopP99Ms: Math.max(0, Math.round((ms(loop.percentile(99)) - 10) * 10) / 10),
        loopMaxMs: Math.max(0, Math.round((ms(loop.max) - 10) * 10) / 10),
        gcCount: gc.count,
        gcMs: Math.round(gc.ms),
        gcMaxMs: Math.round(gc.maxMs * 10) / 10,
        gcMajorMs: Math.round(gc.majorMs),
        cpuMs: Math.round((used.user + used.system) / 1000),
        threads: threadCpu(ticks, threadTicks()),
      };
    },
  };
}

/**
 * One line per process: `name: loop p99 X ms, max Y ms; GC n pauses, T ms (longest L ms, major M ms); CPU C ms
 * (main A, Temporal core B, other threads O)`.
 */
export function describeProcessStats(stats: ProcessStats[]): string {
  return stats
    .map(
      (s) =>
        `${s.process}: loop p99 ${s.loopP99Ms} ms, max ${s.loopMaxMs} ms; GC ${s.gcCount} pauses, ${s.gcMs} ms (longest ${s.gcMaxMs} ms, major ${s.gcMajorMs} ms); CPU ${s.cpuMs} ms${
          s.threads
            ? ` (main ${s.threads.mainMs}, Temporal core ${s.threads.temporalCoreMs}, other threads ${s.threads.otherMs})`
            : ''
        }`,
    )
    .join(' | ');
}
