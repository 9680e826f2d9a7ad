// M7 for `apipay listen` and `apipay trigger`: a Server-Sent Events stream of one merchant account's events (the
// exact bodies its endpoints receive; never an endpoint, a secret or another account's event), resumable with
// Last-Event-ID, and a route that publishes a sample test-mode event for the account to the outbound topic.
import { z } from '@hono/zod-openapi';
import { streamSSE } from 'hono/streaming';
import { scopeOf, type Principal } from '../../access/roles.js';
import { createEventStreamSource } from '../../outbound/event-stream.js';
import {
  CursorError,
  decodeCursor,
  encodeCursor,
  TYPE_GLOB,
  typeMatcher,
  type StreamCursor,
} from '../../outbound/stream-cursor.js';
import { TRIGGER_TYPES, testEventEnvelope } from '../../outbound/test-events.js';
import type { ApiDeps } from '../deps.js';
import { ApiError, errorBody } from '../errors.js';
import { adminRoute } from './access.js';
import type { AdminApp } from './app.js';
import { errorResponses, json } from './outbound-schemas.js';

const tags = ['Events'];
const account = z
  .string()
  .min(1)
  .max(200)
  .optional()
  .openapi({ description: 'staff keys: the account (required); a merchant key: its own (default)' });
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

const triggerResult = z
  .object({
    id: z.string(),
    object: z.literal('event'),
    type: z.string(),
    merchant_account: z.string(),
    livemode: z.literal(false),
    test_event: z.literal(true),
  })
  .openapi('TriggeredEvent');
const triggerRoute = adminRoute(
  { role: 'operator', merchant: true },
  {
    method: 'post',
    path: '/events/trigger',
    tags,
    summary:
      'Publish a sample test-mode event for the account to the outbound topic; it is delivered like any event (M7, `apipay trigger`)',
    request: {
      body: {
        content: {
          'application/json': {
            schema: z
              .strictObject({
                type: z.string().min(1).max(200).openapi({ example: 'payment.succeeded' }),
                merchant_account: account,
              })
              .openapi('TriggerRequest'),
          },
        },
        required: true,
      },
    },
    responses: {
      202: json(triggerResult, 'Published; the dispatcher fans it out to the endpoints subscribed to it'),
      ...errorResponses,
      503: json(z.object({ error: z.object({ code: z.string(), message: z.string() }) }), 'Kafka is not reachable; try again'),
    },
  },
);

/** A merchant key: its own account (another one does not exist for it); a staff key must name one. */
function accountOf(principal: Principal, requested: string | undefined): string {
  const own = scopeOf(principal);
  if (own !== undefined) {
    if (requested !== undefined && requested !== own) throw new ApiError('not_found', 'merchant account does not exist');
    return own;
  }
  if (requested === undefined) {
    throw new ApiError('validation_failed', 'merchant_account: required with a staff key', {
      issues: [{ field: 'merchant_account', message: 'required with a staff key' }],
    });
  }
  return requested;
}

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
}

export function registerEventStream(admin: AdminApp, deps: ApiDeps, options: EventStreamOptions = {}): void {
  const source = createEventStreamSource({ db: deps.db });
  const pollMs = options.pollMs ?? 250;
  const heartbeatMs = options.heartbeatMs ?? 15_000;

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
        logger.debug({ merchant_account: filter.merchantAccount, ended: stream.aborted ? 'client' : 'max_seconds' }, 'event stream ended');
      } catch (error) {
        // The message is ours, never the database's (it could carry parameters); the client resumes from its last id.
        logger.warn({ err: { name: (error as Error).name }, requestId: c.get('requestId') }, 'event stream failed');
        await stream.writeSSE({
          event: 'error',
          data: JSON.stringify(errorBody('unavailable', 'the event stream failed; reconnect with Last-Event-ID')),
        });
      }
    }) as never;
  });

  admin.openapi(triggerRoute, async (c) => {
    const body = c.req.valid('json');
    const merchantAccount = accountOf(c.get('principal'), body.merchant_account);
    const envelope = testEventEnvelope(body.type, merchantAccount, deps.now?.() ?? new Date());
    if (!envelope) {
      const message = `must be one of ${TRIGGER_TYPES.join(', ')}`;
      throw new ApiError('validation_failed', `type: ${message}`, { issues: [{ field: 'type', message }] });
    }
    if (!deps.producer) throw new ApiError('unavailable', 'this API process publishes no events (no Kafka producer)');
    try {
      await deps.producer.send(deps.profile.outbound.kafka.topic, [{ key: merchantAccount, value: JSON.stringify(envelope) }]);
    } catch (error) {
      c.get('logger').warn(
        { err: { name: (error as Error).name, message: (error as Error).message } },
        'test event not published',
      );
      throw new ApiError('unavailable', 'the event could not be published to Kafka; try again', undefined, 5);
    }
    return c.json(
      {
        id: envelope.id,
        object: 'event' as const,
        type: envelope.type,
        merchant_account: merchantAccount,
        livemode: false as const,
        test_event: true as const,
      },
      202,
    );
  });
}
