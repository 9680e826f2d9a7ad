// M3 on the real Kafka, PostgreSQL and Temporal dev server: an endpoint with ordering per_endpoint receives 50
// events of its merchant in the order they were produced, although every third request it gets answers 500 (so
// events wait for their predecessor's retry) and the worker is replaced halfway; an operator's skip lets the next
// event go ahead of one that keeps failing. (P11: 50 events rather than 100 — they go one at a time, about a second
// each; 50 still put some 25 answers of 500 and the worker's replacement between them.)
import { randomUUID } from 'node:crypto';
import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOTSTRAP_PRINCIPAL } from '../../src/access/roles.js';
import type { Database } from '../../src/db/client.js';
import { deliveries, webhookEndpoints } from '../../src/db/schema/index.js';
import { createOutboundBatchHandler } from '../../src/dispatcher/outbound-handler.js';
import { runDispatcher } from '../../src/dispatcher/run.js';
import { createBatchConsumer, createKafkaAdmin } from '../../src/kafka/kafkajs.js';
import type { Producer } from '../../src/kafka/types.js';
import { createDeliveryAdmin } from '../../src/outbound/delivery-admin.js';
import { KAFKA_BROKERS } from '../helpers/env.js';
import { expectNoMore } from '../helpers/wait.js';
import { envelope, insertEndpoint, startReceiver, uniqueMerchant, waitFor, type Reply } from '../helpers/outbound.js';
import { testProfile } from '../helpers/profile.js';
import { startWorkers, testActivities, testLogger, uniqueTaskQueues, terminateWorkflows } from '../helpers/temporal.js';
import { useWorld, type World } from '../helpers/world.js';

const profile = testProfile({ outbound: { retry_schedule: ['100ms', '100ms', '100ms', '100ms', '100ms'] } });

let database: Database;
let temporal: World['temporal'];
let producer: Producer;
const kafka = createKafkaAdmin({ brokers: KAFKA_BROKERS, clientId: 'ordering-test' });
const taskQueues = uniqueTaskQueues('ordering');
const stops: (() => Promise<unknown>)[] = [];
const workflowIds: string[] = [];
let workers: { stop: () => Promise<void> } | undefined;

const startWorkersHere = async () =>
  (workers = await startWorkers({
    connection: temporal.native,
    taskQueues,
    activities: testActivities(database.db, { profile }),
  }));

const world = useWorld({ label: 'outbound-ordering' });
beforeAll(async () => {
  database = world.database;
  temporal = world.temporal;
  producer = world.producer;
  await startWorkersHere();
});
afterAll(async () => {
  await terminateWorkflows(temporal.client, workflowIds);
  for (const stop of stops.reverse()) await stop().catch(() => {});
  await workers?.stop();
  await kafka.close();
});

/** A topic with one partition, a dispatcher on it, and an ordered endpoint of a fresh merchant. */
async function orderedSetup(label: string, reply: (index: number, eventId: string) => Reply, dispatcherProfile = profile) {
  const receiver = await startReceiver((request, index) =>
    reply(index, (JSON.parse(request.body.toString()) as { id: string }).id),
  );
  stops.push(() => receiver.close());
  const merchantAccount = uniqueMerchant(label);
  const endpoint = await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/ordered` });
  await database.db.update(webhookEndpoints).set({ ordering: 'per_endpoint' }).where(eq(webhookEndpoints.id, endpoint.id));
  const topic = `apipay.test.m3.${randomUUID().slice(0, 8)}`;
  await kafka.createTopic(topic, 1);
  const consumer = createBatchConsumer({ brokers: KAFKA_BROKERS, clientId: `test-${topic}`, topic, groupId: `g-${topic}` });
  await runDispatcher(
    consumer,
    createOutboundBatchHandler({
      db: database.db,
      temporal: temporal.client,
      taskQueue: taskQueues.delivery,
      profile: dispatcherProfile,
      logger: testLogger,
    }),
  );
  stops.push(() => consumer.stop());
  const produce = async (events: ReturnType<typeof envelope>[]) => {
    await producer.send(
      topic,
      events.map((e) => ({ key: merchantAccount, value: JSON.stringify(e) })),
    );
    return events.map((e) => e.id);
  };
  const eventIdsReceived = () => receiver.received.map((r) => (JSON.parse(r.body.toString()) as { id: string }).id);
  const events = (count: number) => Array.from({ length: count }, () => envelope({ merchantAccount }));
  return { receiver, endpoint, merchantAccount, produce, events, eventIdsReceived };
}

describe('M3 ordering per endpoint', () => {
  it('M3 50 events reach an ordered endpoint that fails every third request in event order, across a worker restart', async () => {
    const { endpoint, produce, events, eventIdsReceived } = await orderedSetup('m3order', (index) =>
      index % 3 === 2 ? { status: 500, body: 'every third' } : { status: 200 },
    );
    const ids = await produce(events(50));
    await waitFor(() => eventIdsReceived().length >= 20, 300_000, '20 requests');
    await workers!.stop(); // durable: the next worker continues every waiting delivery from its history
    await startWorkersHere();
    await waitFor(
      async () => {
        const rows = await database.db
          .select({ status: deliveries.status })
          .from(deliveries)
          .where(eq(deliveries.endpointId, endpoint.id));
        return rows.length === 50 && rows.every((r) => r.status === 'DELIVERED');
      },
      600_000,
      'all 50 DELIVERED',
    );
    const rows = await database.db.select({ id: deliveries.id }).from(deliveries).where(eq(deliveries.endpointId, endpoint.id));
    workflowIds.push(...rows.map((r) => r.id));

    // Every request (retries included) is for the same event as the one before it or the next one: never ahead.
    const received = eventIdsReceived();
    const positions = received.map((id) => ids.indexOf(id));
    expect(positions.every((p) => p >= 0)).toBe(true);
    for (let i = 1; i < positions.length; i++)
      expect(
        positions[i]! - positions[i - 1]!,
        `request ${i}: event #${positions[i]} after #${positions[i - 1]}`,
      ).toBeGreaterThanOrEqual(0);
    expect([...new Set(received)]).toEqual(ids);
    expect(received.length).toBeGreaterThan(50); // the 500s were retried
  }, 900_000); // one event at a time: slow when the machine is loaded

  it('M3 a delivery waiting behind one that keeps failing goes ahead once an operator skips the failing one', async () => {
    let failing = '';
    const setup = await orderedSetup(
      'm3skip',
      (_index, eventId) => (eventId === failing ? { status: 500 } : { status: 200 }),
      testProfile({ outbound: { retry_schedule: ['1h'] } }),
    );
    const [a, b] = setup.events(2);
    failing = a!.id;
    await setup.produce([a!, b!]);
    await waitFor(() => setup.eventIdsReceived().length >= 1, 30_000, 'the first request');
    const [rowA] = await database.db.select().from(deliveries).where(eq(deliveries.eventPublicId, a!.id));
    const [rowB] = await database.db.select().from(deliveries).where(eq(deliveries.eventPublicId, b!.id));
    workflowIds.push(rowA!.id, rowB!.id);
    expect([rowA!.sequence, rowB!.sequence]).toEqual([1, 2]);
    await waitFor(
      async () => (await database.db.select().from(deliveries).where(eq(deliveries.id, rowA!.id)))[0]!.status === 'RETRYING',
      10_000,
      'a RETRYING',
    );
    await expectNoMore(() => setup.eventIdsReceived().length, 1, 2_000, 'requests while b waits for a');

    const operator = createDeliveryAdmin({
      db: database.db,
      temporal: temporal.client,
      taskQueue: taskQueues.delivery,
      retryScheduleMs: [3_600_000],
    });
    const skipped = await operator.skip(BOOTSTRAP_PRINCIPAL, rowA!.id);
    expect(skipped?.orderSkippedAt).toBeInstanceOf(Date);
    await waitFor(() => setup.eventIdsReceived().includes(b!.id), 30_000, 'b after the skip');
    await waitFor(
      async () =>
        (
          await database.db
            .select()
            .from(deliveries)
            .where(inArray(deliveries.id, [rowB!.id]))
        )[0]!.status === 'DELIVERED',
      10_000,
      'b DELIVERED',
    );
    const [afterA] = await database.db.select().from(deliveries).where(eq(deliveries.id, rowA!.id));
    expect(afterA!.status).toBe('RETRYING'); // a keeps its own schedule
    await expect(operator.skip(BOOTSTRAP_PRINCIPAL, rowB!.id)).rejects.toThrow(/already DELIVERED/);
  });
});
