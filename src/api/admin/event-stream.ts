// M7 for `apipay listen`: a Server-Sent Events stream of one merchant account's events (the exact bodies its
// endpoints receive; never an endpoint, a secret or another account's event), resumable with Last-Event-ID. A18:
// each stream polls the database, so streams open at once are capped per key (429) and per process (503).
import { z } from '@hono/zod-openapi';
import { streamSSE } from 'hono/streaming';
import { createApiKeyService } from '../../access/api-keys.js';
import { createEventStreamSource } from '../../outbound/event-stream.js';
import {
  CursorError,
  decodeCursor,
  encodeCursor,
  TYPE_GLOB,
  typeMatcher,
  type StreamCursor,
} from '../../outbound/stream-cursor.js';
import type { ApiDeps } from '../deps.js';
import { ApiError, errorBody } from '../errors.js';
import { adminRoute } from './access.js';
import type { AdminApp } from './app.js';
import { accountOf, accountParam as account } from './merchant-scope.js';
import { errorResponses } from './outbound-schemas.js';

const tags = ['Events'];
const globs = (text: string | undefined) =>
  (text ?? '')
    .split(',')
    .map((g) => g.trim())
    .filter(Boolean);

const streamRoute = adminRoute(
  { role: 'operator', merchant: true },
  {
    method: 'get',
    path: '/events/stream',
    tags,
    summary: "Server-Sent Events: the account's events as they are written, each with a resume id (M7, `apipay listen`)",
    description:
      '`event: event` carries `{id, type, livemode, created, body}` (`body` is the exact text every delivery POSTs); `event: ping` ' +
      'only moves the cursor. Reconnect with the last `id:` as `Last-Event-ID` to resume after it: nothing is lost or repeated. ' +
      'The server ends the stream after `max_seconds`; a client reconnects.',
    request: {
      query: z.strictObject({
        merchant_account: account,
        events: z
          .string()
          .max(4000)
          .refine(
            (s) => globs(s).length <= 50 && globs(s).every((g) => TYPE_GLOB.test(g)),
            'must be comma-separated event types; * matches any run of characters',
          )
          .optional()
          .openapi({ description: 'e.g. `payment.*,refund.succeeded`; default every type' }),
        livemode: z
          .enum(['true', 'false'])
          .optional()
          .openapi({ description: 'live events instead of test events (default false)' }),
        max_seconds: z.coerce
          .number()
          .int()
          .min(1)
          .max(3600)
          .optional()
          .openapi({ description: 'the server ends the stream after this long (default 300)' }),
      }),
      headers: z.object({ 'last-event-id': z.string().max(16_384).optional() }),
    },
    responses: {
      200: { content: { 'text/event-stream': { schema: z.string() } }, description: 'The event stream' },
      ...errorResponses,
    },
  },
);

function resumeCursor(header: string | undefined): StreamCursor | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  try {
    return decodeCursor(header);
  } catch (error) {
    if (!(error instanceof CursorError)) throw error;
    throw new ApiError('validation_failed', `header.last-event-id: ${error.message}`, {
      issues: [{ field: 'header.last-event-id', message: error.message }],
    });
  }
}

export interface EventStreamOptions {
  pollMs?: number;
  heartbeatMs?: number;
  /** How often an open stream checks that its API key is still valid (A1: a revoked key stops within this). */
  recheckMs?: number;
  /** A18: streams open at once per key (or bootstrap token); another answers 429. */
  maxPerKey?: number;
  /** A18: streams open at once in this process; another answers 503. */
  maxOpen?: number;
}

class RevokedError extends Error {}

export function registerEventStream(admin: AdminApp, deps: ApiDeps, options: EventStreamOptions = {}): void {
  const source = createEventStreamSource({ db: deps.db });
  const pollMs = options.pollMs ?? 250;
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const recheckMs = options.recheckMs ?? 5_000;
  const keys = createApiKeyService({ db: deps.db, ...(deps.now ? { now: deps.now } : {}) });
  const maxPerKey = options.maxPerKey ?? 4;
  const maxOpen = options.maxOpen ?? 64;
  const open = new Map<string, number>();
  let total = 0;

  admin.openapi(streamRoute, async (c) => {
    const query = c.req.valid('query');
    const filter = {
      merchantAccount: accountOf(c.get('principal'), query.merchant_account),
      livemode: query.livemode === 'true',
      matches: typeMatcher(globs(query.events)),
    };
    const resumed = resumeCursor(c.req.valid('header')['last-event-id']);
    let cursor = resumed ?? (await source.now());
    const deadline = Date.now() + (query.max_seconds ?? 300) * 1000;
    const logger = c.get('logger');
    // The bootstrap token is not a key and cannot be revoked; a key is checked again while the stream is open.
    const token = /^Bearer (apk_\S+)$/i.exec(c.req.header('authorization') ?? '')?.[1];
    let checkedAt = Date.now();
    const stillValid = async () => {
      if (token === undefined || Date.now() - checkedAt < recheckMs) return;
      checkedAt = Date.now();
      if (!(await keys.authenticate(token))) throw new RevokedError();
    };
    const holder = c.get('principal').keyId;
    if (total >= maxOpen)
      throw new ApiError('unavailable', `this process serves ${maxOpen} event streams already; retry later`, undefined, 5);
    if ((open.get(holder) ?? 0) >= maxPerKey)
      throw new ApiError('rate_limited', `this key has ${maxPerKey} event streams open already; close one first`, undefined, 5);
    total += 1;
    open.set(holder, (open.get(holder) ?? 0) + 1);
    const release = () => {
      total -= 1;
      const left = (open.get(holder) ?? 1) - 1;
      if (left > 0) open.set(holder, left);
      else open.delete(holder);
    };
    return streamSSE(c, async (stream) => {
      try {
        await stream.writeSSE({
          event: 'ready',
          id: encodeCursor(cursor),
          retry: 1000,
          data: JSON.stringify({
            merchant_account: filter.merchantAccount,
            livemode: filter.livemode,
            resumed: resumed !== undefined,
          }),
        });
        let quietSince = Date.now();
        while (!stream.aborted && !stream.closed && Date.now() < deadline) {
          await stillValid();
          const batch = await source.next(filter, cursor);
          for (const e of batch.events) {
            await stream.writeSSE({
              event: 'event',
              id: e.cursor,
              data: JSON.stringify({ id: e.id, type: e.type, livemode: e.livemode, created: e.created, body: e.body }),
            });
          }
          cursor = batch.cursor;
          if (batch.events.length > 0) quietSince = Date.now();
          else if (Date.now() - quietSince >= heartbeatMs) {
            await stream.writeSSE({ event: 'ping', id: encodeCursor(cursor), data: '{}' });
            quietSince = Date.now();
          }
          if (!batch.more) await stream.sleep(Math.min(pollMs, Math.max(0, deadline - Date.now())));
        }
        if (!stream.aborted) await stream.writeSSE({ event: 'ping', id: encodeCursor(cursor), data: '{}' });
        logger.debug(
          { merchant_account: filter.merchantAccount, ended: stream.aborted ? 'client' : 'max_seconds' },
          'event stream ended',
        );
      } catch (error) {
        if (error instanceof RevokedError) {
          await stream.writeSSE({ event: 'error', data: JSON.stringify(errorBody('unauthorized', 'the API key was revoked')) });
          return;
        }
        // The message is ours, never the database's (it could carry parameters); the client resumes from its last id.
        logger.warn({ err: { name: (error as Error).name }, requestId: c.get('requestId') }, 'event stream failed');
        await stream.writeSSE({
          event: 'error',
          data: JSON.stringify(errorBody('unavailable', 'the event stream failed; reconnect with Last-Event-ID')),
        });
      } finally {
        release();
      }
    }) as never;
  });
}
