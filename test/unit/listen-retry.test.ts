// C11: `apipay listen` sends a failed local POST again with backoff and says so on stderr: against a fake local HTTP
// peer (a real server on a loopback port), and the backoff schedule as a fast-check property.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { forwardWithRetries, retryable, retryDelays } from '../../src/cli/forward.js';
import { verify, SIGNATURE_HEADER } from '../../src/signing/index.js';

const secret = 'whsec_unit_listen_retry_0123456789';
const event = { id: 'evt_retry_1', type: 'payment.succeeded', body: '{"id":"evt_retry_1","object":"event"}' };
let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** A local webhook handler answering `statuses` in turn (then the last one); records each POST. */
async function peer(statuses: number[]) {
  const posts: { body: string; signature: string }[] = [];
  server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      posts.push({ body, signature: String(req.headers[SIGNATURE_HEADER.toLowerCase()]) });
      res.writeHead(statuses[Math.min(posts.length - 1, statuses.length - 1)]!).end('ok');
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', () => resolve()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, posts };
}

describe('C11 apipay listen retries a failed local POST', () => {
  it('C11 a 503 and a 500 are sent again after each wait, said on stderr, until the handler answers 200', async () => {
    const local = await peer([503, 500, 200]);
    const said: string[] = [];
    const waits: number[] = [];
    const outcome = await forwardWithRetries(fetch, local.url, event, secret, {
      delays: [500, 1000, 2000],
      say: (line) => void said.push(line),
      sleep: async (ms) => void waits.push(ms),
    });
    expect(outcome).toMatchObject({ status: 200, attempts: 3 });
    expect(waits).toEqual([500, 1000]);
    expect(local.posts.map((p) => p.body)).toEqual([event.body, event.body, event.body]); // the exact body each time
    for (const p of local.posts) expect(() => verify(p.body, p.signature, secret)).not.toThrow();
    expect(said).toEqual([
      'evt_retry_1: the local POST failed (HTTP 503); retry 1 of 3 in 0.5 s\n',
      'evt_retry_1: the local POST failed (HTTP 500); retry 2 of 3 in 1 s\n',
    ]);
  });

  it('C11 a handler that is down is retried, then given up on with a line; a 400 is its verdict and not retried', async () => {
    const local = await peer([400]);
    const spare = createServer();
    await new Promise<void>((resolve) => spare.listen(0, '127.0.0.1', () => resolve()));
    const freed = (spare.address() as AddressInfo).port;
    await new Promise((resolve) => spare.close(resolve));
    const closed = `http://127.0.0.1:${freed}/hooks`; // nothing listens there any more
    const said: string[] = [];
    const down = await forwardWithRetries(fetch, closed, event, secret, { delays: [1, 1], say: (l) => void said.push(l) });
    expect(down).toMatchObject({ status: null, error: 'ECONNREFUSED', attempts: 3 });
    expect(said).toHaveLength(3);
    expect(said[2]).toBe('evt_retry_1: gave up after 3 attempts; on to the next event\n');

    said.length = 0;
    const refused = await forwardWithRetries(fetch, local.url, event, secret, { delays: [1, 1], say: (l) => void said.push(l) });
    expect(refused).toMatchObject({ status: 400, attempts: 1 });
    expect(local.posts).toHaveLength(1);
    expect(said).toEqual([]);
  });

  it('C11 Ctrl-C during the wait stops the retries at once', async () => {
    const local = await peer([503]);
    const stop = new AbortController();
    const outcome = await forwardWithRetries(fetch, local.url, event, secret, {
      signal: stop.signal,
      delays: [60_000, 60_000],
      say: () => stop.abort(),
    });
    expect(outcome.attempts).toBe(1);
    expect(local.posts).toHaveLength(1);
  });

  it('C11 what is retried: no answer, 408, 429 and 5xx; not 2xx, 3xx or another 4xx', () => {
    expect([null, 408, 429, 500, 503, 599].every((status) => retryable({ status, latencyMs: 0 }))).toBe(true);
    expect([200, 204, 301, 400, 401, 404, 410, 422].some((status) => retryable({ status, latencyMs: 0 }))).toBe(false);
  });

  it('C11 the backoff schedule: as many waits as retries, starting at the initial wait, doubling, never above the cap', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 12 }),
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 120_000 }),
        (retries, initial, cap) => {
          const delays = retryDelays(retries, initial, cap);
          expect(delays).toHaveLength(retries);
          if (retries > 0) expect(delays[0]).toBe(Math.min(initial, cap));
          for (const [i, d] of delays.entries()) {
            expect(d).toBeLessThanOrEqual(cap);
            expect(d).toBeGreaterThan(0);
            if (i > 0) {
              expect(d).toBeGreaterThanOrEqual(delays[i - 1]!);
              expect(d).toBeLessThanOrEqual(2 * delays[i - 1]!);
            }
          }
          // The listener never waits longer in all than retries × cap (the stream's watchdog is fed between waits).
          expect(delays.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(retries * cap);
        },
      ),
      { seed: 20_261_202, numRuns: 300 },
    );
    expect(retryDelays()).toEqual([500, 1000, 2000, 4000]);
  });
});
