// An open-loop HTTP load generator (loopback only): request i is due at start + i / rate whatever the answers do,
// and its latency runs from that scheduled time, not from when it was sent, so a stalled server or a late sender
// shows up in the tail (no coordinated omission). Answers of requests scheduled in the warm-up are not counted.
import { Agent, request } from 'node:http';

export interface OpenLoopOptions {
  url: string;
  /** Offered requests per second. */
  rate: number;
  durationMs: number;
  warmupMs: number;
  /** Sockets the agent may open; requests past it queue in the agent, and that wait counts as latency. */
  maxSockets?: number;
  next: () => { path: string; headers: Record<string, string>; body: string };
}

export interface OpenLoopResult {
  rate: number;
  scheduled: number;
  ok: number;
  failed: number;
  /** 200s answered inside the measured window, per second of it. */
  achievedPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
  /** How late the generator itself sent, p99 (its own event loop under load): a bound on what it can measure. */
  sendLagP99Ms: number;
  maxInFlight: number;
  /** The measured answers that were not 200, by status or by the socket error's code (what a non-200 was). */
  failures: Record<string, number>;
}

export function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

export async function runOpenLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  const target = new URL(options.url);
  if (!['127.0.0.1', 'localhost', '::1'].includes(target.hostname)) throw new Error('the load generator only targets loopback');
  if (!(options.rate > 0)) throw new Error('rate must be a positive number of requests per second');
  const agent = new Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 512 });
  const latencies: number[] = [];
  const sendLags: number[] = [];
  let ok = 0;
  let failed = 0;
  let okInWindow = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  const failures: Record<string, number> = {};
  const start = performance.now();
  const measureFrom = start + options.warmupMs;
  const end = measureFrom + options.durationMs;
  const interval = 1000 / options.rate;
  const total = Math.floor(((end - start) / 1000) * options.rate);
  const pending: Promise<void>[] = [];

  const send = (scheduledAt: number) => {
    const { path, headers, body } = options.next();
    const measured = scheduledAt >= measureFrom;
    if (measured) sendLags.push(performance.now() - scheduledAt);
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    return new Promise<void>((resolve) => {
      const done = (status: number, error?: string) => {
        inFlight -= 1;
        const answered = performance.now();
        if (status === 200 && answered >= measureFrom && answered <= end) okInWindow += 1;
        if (measured) {
          latencies.push(answered - scheduledAt);
          if (status === 200) ok += 1;
          else {
            failed += 1;
            const key = status === 0 ? (error ?? 'error') : String(status);
            failures[key] = (failures[key] ?? 0) + 1;
          }
        }
        resolve();
      };
      const req = request(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path,
          method: 'POST',
          headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        },
        (res) => {
          res.resume();
          res.on('end', () => done(res.statusCode ?? 0));
          res.on('error', (e: NodeJS.ErrnoException) => done(0, e.code ?? e.message));
        },
      );
      req.on('error', (e: NodeJS.ErrnoException) => done(0, e.code ?? e.message));
      req.end(body);
    });
  };

  // The clock: every tick sends everything that has fallen due, each stamped with its own scheduled time.
  let sent = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (sent < total && start + sent * interval <= now) {
        pending.push(send(start + sent * interval));
        sent += 1;
      }
      if (sent >= total) resolve();
      else setTimeout(tick, 1); // ~1 ms ticks: a few requests per tick, without spinning a core the server needs
    };
    tick();
  });
  await Promise.all(pending);
  agent.destroy();
  const sorted = Float64Array.from(latencies).sort();
  const lags = Float64Array.from(sendLags).sort();
  return {
    rate: options.rate,
    scheduled: latencies.length,
    ok,
    failed,
    achievedPerSecond: okInWindow / (options.durationMs / 1000),
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    p999Ms: percentile(sorted, 0.999),
    maxMs: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
    sendLagP99Ms: percentile(lags, 0.99),
    maxInFlight,
    failures,
  };
}
