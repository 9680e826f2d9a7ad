// R3: a merchant's 2xx that reached us before the deadline is a 2xx even when our event loop stalled past the
// deadline before reading it. Soak seed 5150 (6 Dec 2026, load ~25): a /slow merchant answered 2xx at once, the
// attempt was recorded `timeout` at exactly 2000 ms, and the delivery was POSTed four more times and ended FAILED.
// Node runs expired timers before it reads sockets, so a deadline timer that aborts at once wins over an answer that
// is already waiting. A fake HTTP peer (unit tests may fake one): a local server in this process.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exchange } from '../../src/outbound/exchange.js';

const STALL_MS = 400;
const TIMEOUT_MS = 150;
let server: Server;
let url = '';
let mode: 'stall-after-answer' | 'never-answer' = 'stall-after-answer';

/** Blocks this thread, as a long GC pause or a starved CPU would. */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    /* busy */
  }
}

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (mode === 'never-answer') return; // held open: the deadline must still end it
      // The answer is on the wire (handed to the kernel) before the client has read it; then the process stalls.
      res.on('finish', () => stall(STALL_MS));
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('R3 the deadline of one exchange', () => {
  it('R3 an answer that arrived before a stall longer than the deadline is recorded as that answer, not a timeout', async () => {
    mode = 'stall-after-answer';
    const outcome = await exchange({ url, body: Buffer.from('{}'), headers: {} }, { timeoutMs: TIMEOUT_MS, excerptBytes: 64 });
    expect(outcome.errorKind, JSON.stringify(outcome)).toBeNull();
    expect(outcome.succeeded).toBe(true);
    expect(outcome.responseStatus).toBe(200);
  });

  it('R3 a merchant that never answers is still a timeout at the deadline', async () => {
    mode = 'never-answer';
    const started = performance.now();
    const outcome = await exchange({ url, body: Buffer.from('{}'), headers: {} }, { timeoutMs: TIMEOUT_MS, excerptBytes: 64 });
    expect(outcome.errorKind).toBe('timeout');
    expect(outcome.succeeded).toBe(false);
    expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + 1_000);
  });
});
