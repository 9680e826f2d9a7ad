// M7 `apipay trigger`: publishes a sample test-mode event for the account to the outbound topic as a normal
// envelope (src/outbound/test-events.ts), so the dispatcher fans it out like any other event.
import { z } from '@hono/zod-openapi';
import { actorOf, recordAuditEvent } from '../../audit/record.js';
import { TRIGGER_TYPES, testEventEnvelope } from '../../outbound/test-events.js';
import type { ApiDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import { adminRoute } from './access.js';
import type { AdminApp } from './app.js';
import { accountOf, accountParam as account } from './merchant-scope.js';
import { errorResponses, json } from './outbound-schemas.js';

const tags = ['Events'];

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

export function registerEventTrigger(admin: AdminApp, deps: ApiDeps): void {
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
    // A3: after Kafka acknowledged it (a publish that failed changed nothing); the event itself is in the topic.
    await recordAuditEvent(deps.db, {
      actor: actorOf(c.get('principal')),
      action: 'event.trigger',
      target: { type: 'event', id: envelope.id },
      after: { type: envelope.type, merchant_account: merchantAccount, livemode: false, test_event: true },
    });
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
