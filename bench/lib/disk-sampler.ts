// P9: what the machine's disk was doing while a steady phase ran. Every 20 ms it reads /proc/diskstats (Linux) for
// the whole disks (vda, sda, nvme0n1 …): the weighted time of I/O in the queue (field 11, ms) and the time spent on
// flushes, the fsyncs of PostgreSQL's commits and Kafka's and SQLite's writes (field 17, ms; kernels ≥ 5.5). A
// steady phase's slowest events are then set beside the disk time of the 100 ms windows they spanned: a tail made of
// disk stalls shows there, one made in the process does not. Absent off Linux (no samples, no figures).
import { readFileSync } from 'node:fs';

const WHOLE_DISK = /^(vd[a-z]+|sd[a-z]+|xvd[a-z]+|nvme\d+n\d+)$/;

interface Sample {
  at: number;
  queueMs: number;
  flushMs: number;
}

function read(): Omit<Sample, 'at'> | null {
  let text: string;
  try {
    text = readFileSync('/proc/diskstats', 'utf8');
  } catch {
    return null;
  }
  let queueMs = 0;
  let flushMs = 0;
  for (const line of text.split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (!WHOLE_DISK.test(fields[2] ?? '')) continue;
    queueMs += Number(fields[13] ?? 0);
    flushMs += Number(fields[19] ?? 0);
  }
  return { queueMs, flushMs };
}

export interface DiskBeside {
  /** Median over the phase's 100 ms windows, and the mean over the windows the slowest events spanned (ms per 100 ms). */
  queueMedianMs: number;
  queueInTailMs: number;
  flushMedianMs: number;
  flushInTailMs: number;
}

export function startDiskSampler() {
  const samples: Sample[] = [];
  const take = () => {
    const now = read();
    if (now) samples.push({ at: Date.now(), ...now });
  };
  take();
  const timer = setInterval(take, 20);
  timer.unref();
  return {
    /** Stops sampling; the disk figures beside `slowest` (each event's due time and latency), or null without samples. */
    stop(slowest: { due: number; latency: number }[], from: number, to: number): DiskBeside | null {
      clearInterval(timer);
      take();
      if (samples.length < 3 || to <= from) return null;
      const at = (t: number, key: 'queueMs' | 'flushMs') => {
        // The counter's value at time t: the last sample at or before it.
        let value = samples[0]![key];
        for (const s of samples) {
          if (s.at > t) break;
          value = s[key];
        }
        return value;
      };
      const windows = Math.max(1, Math.ceil((to - from) / 100));
      const per = (key: 'queueMs' | 'flushMs') =>
        Array.from({ length: windows }, (_, w) => at(from + (w + 1) * 100, key) - at(from + w * 100, key));
      const queue = per('queueMs');
      const flush = per('flushMs');
      const spanned = new Set<number>();
      for (const e of slowest)
        for (let w = Math.floor((e.due - from) / 100); w <= Math.floor((e.due + e.latency - from) / 100); w++)
          if (w >= 0 && w < windows) spanned.add(w);
      const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
      const mean = (values: number[]) => (values.length ? Math.round(values.reduce((a, b) => a + b, 0) / values.length) : 0);
      return {
        queueMedianMs: median(queue),
        queueInTailMs: mean([...spanned].map((w) => queue[w]!)),
        flushMedianMs: median(flush),
        flushInTailMs: mean([...spanned].map((w) => flush[w]!)),
      };
    },
  };
}
