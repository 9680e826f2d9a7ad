// P4: the open-loop generator keeps offering its rate while the peer stalls and measures from the scheduled
// time, so a stall shows in the tail (a closed loop would have sent nothing during it and hidden it).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runOpenLoop } from '../../bench/lib/open-loop.js';

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** A peer that answers at once, except that it holds every answer between stallFrom and stallTo (ms after start). */
async function stallingPeer(stallFrom: number, stallTo: number): Promise<{ url: string; received: () => number }> {
  const start = performance.now();
  let received = 0;
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received += 1;
      const now = performance.now() - start;
      const wait = now >= stallFrom && now < stallTo ? stallTo - now : 0;
      setTimeout(() => res.writeHead(200).end('{}'), wait);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received: () => received };
}

const next = () => ({ path: '/webhooks/x', headers: { 'content-type': 'application/json' }, body: '{}' });

describe('open-loop load (P4)', () => {
  it('offers the rate through a stall and counts the stall from each scheduled time', async () => {
    const peer = await stallingPeer(300, 600);
    const result = await runOpenLoop({ url: peer.url, rate: 200, durationMs: 1000, warmupMs: 0, next });
    // Every scheduled request was sent and answered, stall or not: 200/s for 1 s.
    expect(result.scheduled).toBeGreaterThanOrEqual(199);
    expect(peer.received()).toBe(result.scheduled);
    expect(result.ok).toBe(result.scheduled);
    // About 60 of the 200 fell in the 300 ms stall: the median stays fast, the p99 carries the stall.
    // Most requests missed the stall: the median sits well below the tail the stall made (a loaded machine delays both).
    expect(result.p99Ms - result.p50Ms).toBeGreaterThan(150);
    expect(result.p99Ms).toBeGreaterThan(200);
    expect(result.maxInFlight).toBeGreaterThan(30);
  });

  it('refuses a non-loopback target and a rate that is not positive', async () => {
    await expect(runOpenLoop({ url: 'http://10.0.0.7:80', rate: 10, durationMs: 10, warmupMs: 0, next })).rejects.toThrow(
      /loopback/,
    );
    await expect(runOpenLoop({ url: 'http://127.0.0.1:1', rate: 0, durationMs: 10, warmupMs: 0, next })).rejects.toThrow(/rate/);
  });
});
