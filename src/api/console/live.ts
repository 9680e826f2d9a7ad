// C15 live pages: a console-session change stream per live page (Server-Sent Events). The backlog, the review queue
// and a delivery's page each name theirs (layout's `live`); the stream polls the same service the page reads, and
// says `change` when the page's version (a hash of what the page shows, ages left out) moves on. It carries no data:
// the page script re-reads the page, through the session and role checks of a reload. Bounds as the CLI's stream
// (A18): streams per session and per process are capped (429, 503), and a stream ends after `maxSeconds` (the browser
// reconnects with Last-Event-ID = the version it last saw, and the middleware checks the session again).
import { createHash } from 'node:crypto';
import type { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { InboundBacklog } from '../../inbound/backlog.js';
import type { Attempt, Delivery } from '../../outbound/delivery-admin.js';
import type { OutboundBacklog } from '../../outbound/backlog.js';
import { PageError, requireAccess, type ConsoleContext, type ConsoleEnv } from './context.js';
import type { View } from './html.js';
import type { ConsoleServices } from './services.js';

export interface LiveOptions {
  /** How often an open stream reads its page's figures. */
  pollMs?: number;
  /** A stream ends after this long; the browser reconnects (and the session is checked again). */
  maxSeconds?: number;
  /** A18: streams open at once per console session; another answers 429. */
  maxPerSession?: number;
  /** A18: streams open at once in this process (both surfaces); another answers 503. */
  maxOpen?: number;
  /** How long one read of the backlog's figures serves every backlog stream. */
  backlogMs?: number;
}

const hash = (value: unknown) =>
  createHash('sha256')
    .update(JSON.stringify(value, (key, v: unknown) => (key === 'oldestSeconds' ? undefined : v)))
    .digest('base64url')
    .slice(0, 16);

/** The version of each live page: what it shows that can change, without the ages that move every second. */
export const versions = {
  backlog: (b: { inbound: InboundBacklog; outbound: OutboundBacklog }) => hash(b),
  reviews: (rows: { id: string; updatedAt: Date }[]) => hash(rows.map((r) => [r.id, r.updatedAt.getTime()])),
  delivery: (found: { delivery: Delivery; attempts: Attempt[] }) =>
    hash([found.delivery.status, found.delivery.attemptCount, found.delivery.updatedAt.getTime(), found.attempts.length]),
};

/** The stream a page names in its <main data-live>: its path, and the version the page was rendered at. */
export const liveUrl = (view: View, path: string, version: string, query: Record<string, string> = {}) =>
  `${view.base}/live${path}?${new URLSearchParams({ ...query, v: version })}`;

const VERSION = /^[A-Za-z0-9_-]{1,64}$/;
const BACKLOG_MS = 5000;

/** One read at a time, reused for `ttlMs`, whoever asks: the streams of many pages cost the database one query. */
function shared<T>(read: () => Promise<T>, ttlMs: number): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | undefined;
  return () => {
    if (!last || Date.now() - last.at >= ttlMs) {
      const value = read();
      last = { at: Date.now(), value };
      value.catch(() => (last = undefined)); // a failed read is not reused
    }
    return last.value;
  };
}

export function registerLiveStreams(
  app: Hono<ConsoleEnv>,
  s: ConsoleServices,
  options: LiveOptions & { surface: 'console' | 'portal'; counter: LiveCounter },
): void {
  const pollMs = options.pollMs ?? 1000;
  const maxSeconds = options.maxSeconds ?? 60;
  const maxPerSession = options.maxPerSession ?? 6;

  const stream = (c: ConsoleContext, read: () => Promise<string | undefined>) => {
    const holder = c.get('session').sid;
    const release = options.counter.take(holder, maxPerSession);
    // The version the browser saw last: on a reconnect its Last-Event-ID, on the first connection the page's own.
    const seen = [c.req.header('last-event-id'), c.req.query('v')].find((v) => v !== undefined && VERSION.test(v));
    // A shorter life on request (?max_seconds=1..maxSeconds: tests, a client that polls), never a longer one.
    const asked = Number(c.req.query('max_seconds'));
    const lifetime = Number.isInteger(asked) && asked >= 1 ? Math.min(asked, maxSeconds) : maxSeconds;
    return streamSSE(c, async (sse) => {
      sse.onAbort(release); // the slot is free when the browser leaves, not at the loop's next poll
      try {
        let version = await read();
        await sse.writeSSE({ event: 'ready', id: version ?? '', retry: 2000, data: '{}' });
        if (version !== undefined && seen !== undefined && seen !== version)
          await sse.writeSSE({ event: 'change', id: version, data: '{}' });
        const deadline = Date.now() + lifetime * 1000;
        while (!sse.aborted && !sse.closed && Date.now() < deadline) {
          await sse.sleep(Math.min(pollMs, Math.max(0, deadline - Date.now())));
          const now = await read();
          if (now !== version) {
            version = now;
            await sse.writeSSE({ event: 'change', id: version ?? '', data: '{}' });
          }
        }
      } catch (error) {
        c.get('logger')?.warn(
          { err: { name: (error as Error).name }, requestId: c.get('requestId') },
          'console live stream failed',
        );
      } finally {
        release();
      }
    });
  };

  if (options.surface === 'console') {
    // The backlog's counts scan a day of deliveries: one read every BACKLOG_MS serves every open backlog page.
    const backlog = shared(async () => versions.backlog(await s.backlog()), options.backlogMs ?? BACKLOG_MS);
    app.get('/live/backlog', (c) => {
      requireAccess(c, s.rules, 'GET /reconciliations');
      return stream(c, backlog);
    });
    app.get('/live/reviews', (c) => {
      requireAccess(c, s.rules, 'GET /reconciliations');
      const provider = /^[a-z0-9-]{1,100}$/.test(c.req.query('provider') ?? '') ? c.req.query('provider') : undefined;
      return stream(c, async () =>
        versions.reviews(
          await s.reconciliations.list({ state: 'manual_review', order: 'asc', limit: 51, ...(provider ? { provider } : {}) }),
        ),
      );
    });
  }
  app.get('/live/deliveries/:id', async (c) => {
    const principal = requireAccess(c, s.rules, 'GET /webhook-deliveries/:id');
    const id = c.req.param('id');
    const found = /^whd_[0-9a-z]+$/.test(id) ? await s.deliveries.get(principal, id) : undefined;
    if (!found) throw new PageError(404, `webhook delivery ${id} does not exist`);
    return stream(c, async () => {
      const now = await s.deliveries.get(principal, id);
      return now ? versions.delivery(now) : undefined;
    });
  });
}

/** A18: the open streams of this process, per session; shared by both surfaces. */
export interface LiveCounter {
  take(holder: string, maxPerHolder: number): () => void;
}

export function liveCounter(maxOpen = 64): LiveCounter {
  const open = new Map<string, number>();
  let total = 0;
  return {
    take(holder, maxPerHolder) {
      if (total >= maxOpen) throw new PageError(503, `this process serves ${maxOpen} live pages already; reload later`);
      if ((open.get(holder) ?? 0) >= maxPerHolder)
        throw new PageError(429, `this session has ${maxPerHolder} live pages open already; close one first`);
      total += 1;
      open.set(holder, (open.get(holder) ?? 0) + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        total -= 1;
        const left = (open.get(holder) ?? 1) - 1;
        if (left > 0) open.set(holder, left);
        else open.delete(holder);
      };
    },
  };
}
