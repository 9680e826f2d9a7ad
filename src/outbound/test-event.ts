// M6: a test event on demand. A signed `ping` event for one endpoint, written as the dispatcher writes any event
// (an events row with the body serialized once, O4, and one PENDING delivery), so it is delivered, retried and
// recorded like every other delivery; the caller then starts its delivery workflow.
import { and, eq, isNull } from 'drizzle-orm';
import { scopeOf, type Principal } from '../access/roles.js';
import { actorOf, recordAuditEvent } from '../audit/record.js';
import type { Db } from '../db/client.js';
import { deliveries, events, webhookEndpoints } from '../db/schema/index.js';
import { parseEnvelope } from './envelope.js';
import { newId } from '../shared/ids.js';
import { DeliveryConflictError } from './delivery-admin.js';
import { EndpointNotFoundError } from './endpoints.js';

export const TEST_EVENT_TYPE = 'ping';

/** M8: the ping's data.object (src/catalog/events/ping.v1.json). */
export const pingObject = (endpointId: string) => ({
  id: endpointId,
  object: 'webhook_endpoint',
  message: 'A test event sent on request; answer 2xx once its signature verifies.',
});

export interface TestDelivery {
  deliveryId: string;
  eventId: string;
  endpointId: string;
  merchantAccount: string;
  eventType: string;
}

export async function createTestDelivery(
  db: Db,
  principal: Principal,
  endpointId: string,
  now = new Date(),
): Promise<TestDelivery> {
  const account = scopeOf(principal);
  const [endpoint] = await db
    .select()
    .from(webhookEndpoints)
    .where(
      and(
        eq(webhookEndpoints.id, endpointId),
        isNull(webhookEndpoints.deletedAt),
        account === undefined ? undefined : eq(webhookEndpoints.merchantAccount, account),
      ),
    );
  if (!endpoint) throw new EndpointNotFoundError(endpointId);
  if (endpoint.status !== 'enabled')
    throw new DeliveryConflictError(`endpoint ${endpointId} is disabled; enable it before sending a test event`);
  const eventId = newId('evt');
  // The same envelope → body path as a Kafka message, so a ping has exactly the shape of every other event.
  const parsed = parseEnvelope(
    Buffer.from(
      JSON.stringify({
        id: eventId,
        object: 'event',
        type: TEST_EVENT_TYPE,
        created: Math.floor(now.getTime() / 1000),
        livemode: endpoint.livemode,
        data: { object: pingObject(endpoint.id) },
        merchant_account: endpoint.merchantAccount,
      }),
    ),
  );
  if (!parsed.ok) throw new Error(`test event envelope refused: ${parsed.reason}`);
  const deliveryId = newId('whd');
  await db.transaction(async (tx) => {
    const event = parsed.event;
    await tx.insert(events).values({
      eventPublicId: eventId,
      merchantAccount: event.merchantAccount,
      type: event.type,
      livemode: event.livemode,
      createdUnix: event.createdUnix,
      body: event.body,
    });
    await tx
      .insert(deliveries)
      .values({ id: deliveryId, eventPublicId: eventId, endpointId: endpoint.id, merchantAccount: endpoint.merchantAccount });
    // A3: who asked for the test, in the transaction that creates it.
    await recordAuditEvent(tx, {
      actor: actorOf(principal),
      action: 'endpoint.test',
      target: { type: 'webhook_endpoint', id: endpoint.id },
      after: { delivery_id: deliveryId, event_id: eventId },
    });
  });
  return { deliveryId, eventId, endpointId: endpoint.id, merchantAccount: endpoint.merchantAccount, eventType: TEST_EVENT_TYPE };
}
