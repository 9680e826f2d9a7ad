// A bounded closed-loop HTTP load generator (loopback only): N keep-alive connections, each sending its next
// request when the previous answer arrived, for a fixed time; latencies of answers after the warm-up.
import { Agent, request } from 'node:http';
import { percentile } from './stats.js';

export interface LoadOptions {
  url: string;
  connections: number;
  durationMs: number;
  warmupMs: number;
  next: () => { path: string; headers: Record<string, string>; body: string };
}

export interface LoadResult {
  connections: number;
  requests: number;
  ok: number;
  failed: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  statuses: Record<string, number>;
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const target = new URL(options.url);
  if (!['127.0.0.1', 'localhost', '::1'].includes(target.hostname)) throw new Error('the load generator only targets loopback');
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let ok = 0;
  let failed = 0;
  const start = performance.now();
  const measureFrom = start + options.warmupMs;
  const end = measureFrom + options.durationMs;

  const once = () =>
    new Promise<number>((resolve) => {
      const { path, headers, body } = options.next();
      const req = request(
        { agent, host: target.hostname, port: target.port, path, method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
          res.on('error', () => resolve(0));
        },
      );
      req.on('error', () => resolve(0));
      req.end(body);
    });

  await Promise.all(
    Array.from({ length: options.connections }, async () => {
      while (performance.now() < end) {
        const sent = performance.now();
        const status = await once();
        const answered = performance.now();
        if (sent < measureFrom || answered > end) continue;
        latencies.push(answered - sent);
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (status === 200) ok += 1;
        else failed += 1;
      }
    }),
  );
  agent.destroy();
  const sorted = Float64Array.from(latencies).sort();
  return {
    connections: options.connections,
    requests: latencies.length,
    ok,
    failed,
    perSecond: ok / (options.durationMs / 1000),
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    maxMs: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
    statuses,
  };
}
