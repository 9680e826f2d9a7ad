// bench:outbound scenarios of issue 12 (M2, M5), called from bench/lib/outbound-run.ts with its producer and receiver:
//   --slow-endpoints K  the steady phase twice more with K more endpoints of the same merchant: answering at once,
//                       then hanging past the 10 s request timeout; the healthy endpoint's produce-to-receive p99s
//                       and their ratio.
//   --throttle R        --throttle-count N events to an endpoint limited to R/s; the achieved rate and busiest second.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BOOTSTRAP_PRINCIPAL } from '../../src/access/roles.js';
import type { EndpointService } from '../../src/outbound/endpoints.js';
import { percentile } from './stats.js';

/** What the scenarios need of the bench's own steady phase (bench/lib/outbound-run.ts lends the healthy receiver of its load generator). */
export interface SteadyHarness {
  rate: number;
  seconds: number;
  /** Produces one event of the healthy merchant (its receipt lands in `latencies`). */
  sendOne(): Promise<void>;
  latencies(): number[];
  reset(): void;
  waitForReceived(n: number, timeoutMs: number): Promise<void>;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function steady(h: SteadyHarness): Promise<{ p50: number; p99: number }> {
  h.reset();
  const count = h.rate * h.seconds;
  const start = Date.now();
  for (let i = 0; i < count; i++) {
    const wait = start + (i * 1000) / h.rate - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    await h.sendOne();
  }
  await h.waitForReceived(count, 120_000);
  return { p50: percentile(h.latencies(), 0.5), p99: percentile(h.latencies(), 0.99) };
}

/**
 * M2: the healthy endpoint's steady p99 beside `k` more endpoints of the same merchant (each event fans out to all of
 * them), first answering at once (the control: the same fan-out, the same load on Temporal), then `k` fresh ones that
 * hang past the request timeout. The ratio of the two p99s is the isolation; the p99 without extra endpoints (the
 * bench's own steady phase) is printed beside it. Each set is disabled after its phase.
 */
export async function measureIsolation(options: {
  k: number;
  merchant: string;
  endpoints: EndpointService;
  harness: SteadyHarness;
  baselineP99: number;
}): Promise<string> {
  const held = new Set<import('node:http').ServerResponse>();
  const server = createServer((req, res) => {
    req.resume();
    if (req.url?.startsWith('/hang/'))
      held.add(res); // never answered: the attempt ends at outbound.request_timeout
    else req.on('end', () => res.writeHead(200).end('ok'));
  });
  const url = await listen(server);
  const phase = async (path: 'fast' | 'hang') => {
    const ids: string[] = [];
    try {
      for (let i = 0; i < options.k; i++) {
        const { endpoint } = await options.endpoints.create(BOOTSTRAP_PRINCIPAL, {
          merchantAccount: options.merchant,
          url: `${url}/${path}/${i}`,
          eventTypes: ['*'],
          livemode: false,
        });
        ids.push(endpoint.id);
      }
      return await steady(options.harness).catch((error: Error) => ({ p50: NaN, p99: NaN, error }));
    } finally {
      for (const id of ids)
        await options.endpoints.disable(BOOTSTRAP_PRINCIPAL, id, 'bench:outbound --slow-endpoints phase done').catch(() => {});
    }
  };
  try {
    const control = await phase('fast');
    const hanging = await phase('hang');
    const failed = [control, hanging].find((p): p is typeof p & { error: Error } => 'error' in p);
    if (failed) return `isolation ${options.k} extra endpoints: FAILED, ${failed.error.message}`;
    return (
      `isolation healthy endpoint beside ${options.k} more of its merchant's endpoints (every event fans out to all): ` +
      `p99 ${hanging.p99} ms (p50 ${hanging.p50}) with them hanging past the request timeout vs ${control.p99} ms (p50 ${control.p50}) with them ` +
      `answering at once: ratio ${(hanging.p99 / control.p99).toFixed(2)} (goal ≤ 1.20); without extra endpoints p99 ${options.baselineP99} ms`
    );
  } finally {
    for (const res of held) res.destroy();
    server.close();
  }
}

/** M5: `count` events at once to an endpoint limited to `rate`/s; the rate they arrived at (first to last). */
export async function measureThrottle(options: {
  rate: number;
  count: number;
  merchant: string;
  endpoints: EndpointService;
  produce: (account: string, count: number) => Promise<void>;
}): Promise<string> {
  const arrivals: number[] = [];
  const seen = new Set<string>();
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const { id } = JSON.parse(Buffer.concat(chunks).toString()) as { id: string };
      if (!seen.has(id)) {
        seen.add(id);
        arrivals.push(Date.now());
      }
      res.writeHead(200).end('ok');
    });
  });
  const url = await listen(receiver);
  try {
    await options.endpoints.create(BOOTSTRAP_PRINCIPAL, {
      merchantAccount: options.merchant,
      url: `${url}/throttled`,
      eventTypes: ['*'],
      livemode: false,
      rateLimitPerSecond: options.rate,
    });
    await options.produce(options.merchant, options.count);
    const deadline = Date.now() + (options.count / options.rate) * 2000 + 60_000;
    while (arrivals.length < options.count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    if (arrivals.length < options.count) throw new Error(`throttle: only ${arrivals.length}/${options.count} arrived`);
    const spanS = (arrivals.at(-1)! - arrivals[0]!) / 1000;
    const achieved = (options.count - 1) / spanS;
    let busiest = 0;
    for (let i = 0, j = 0; i < arrivals.length; i++) {
      while (arrivals[i]! - arrivals[j]! >= 1000) j++;
      busiest = Math.max(busiest, i - j + 1);
    }
    const off = ((achieved - options.rate) / options.rate) * 100;
    return (
      `throttle  ${options.count} events at once to an endpoint limited to ${options.rate}/s: arrived over ${spanS.toFixed(1)} s at ` +
      `${achieved.toFixed(2)}/s (${off >= 0 ? '+' : ''}${off.toFixed(1)} %, goal ±10 %); busiest second ${busiest}`
    );
  } finally {
    receiver.close();
  }
}
