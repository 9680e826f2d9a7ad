// P1 batched delivery mode on the real Kafka, PostgreSQL and Temporal dev server: a failed first attempt continues in
// a deliveryWorkflow (RETRYING, search attributes, status query, retryNow); the hand-off sweep takes over what a
// killed dispatcher left (attempt 1 never POSTed twice, recorded `interrupted`); and a small kill drill — the
// dispatcher and the worker processes killed with SIGKILL mid-burst — loses nothing and every duplicate POST is an
// attempt recorded `interrupted`.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { deliveries, deliveryAttempts } from '../../src/db/schema/index.js';
import { sweepHandoffs } from '../../src/dispatcher/handoff-sweep.js';
import { createOutboundBatchHandler } from '../../src/dispatcher/outbound-handler.js';
import { runDispatcher } from '../../src/dispatcher/run.js';
import { createBatchConsumer, createKafkaAdmin, createProducer } from '../../src/kafka/kafkajs.js';
import type { Producer } from '../../src/kafka/types.js';
import { requestDeliveryRetry } from '../../src/outbound/operator-retry.js';
import { rotateEndpointSecret } from '../../src/outbound/secrets.js';
import { deliveryStatusQuery, retryNowSignal } from '../../src/shared/outbound.js';
import { verify } from '../../src/signing/index.js';
import { KAFKA_BROKERS, TEST_DATABASE_URL, TEST_SECRETS_KEY } from '../helpers/env.js';
import {
  envelope,
  insertDelivery,
  insertEndpoint,
  startReceiver,
  uniqueEventId,
  uniqueMerchant,
  waitFor,
} from '../helpers/outbound.js';
import { testProfile } from '../helpers/profile.js';
import { connectDevServer, startWorkers, testActivities, testLogger, uniqueTaskQueues } from '../helpers/temporal.js';
import { expectNoMore } from '../helpers/wait.js';

let database: Database;
let temporal: Awaited<ReturnType<typeof connectDevServer>>;
let producer: Producer;
const failFirst = new Set<string>(); // event ids whose first POST gets a 503
const failTimes = new Map<string, number>(); // event ids whose next N POSTs get a 503
const slow = new Set<string>(); // event ids answered after SLOW_MS
const SLOW_MS = 1500;
const receiver = await startReceiver((request) => {
  const id = (JSON.parse(request.body.toString()) as { id: string }).id;
  if (failFirst.delete(id)) return { status: 503 };
  const left = failTimes.get(id) ?? 0;
  if (left > 0) {
    failTimes.set(id, left - 1);
    return { status: 503 };
  }
  if (slow.has(id)) return { status: 200, delayMs: SLOW_MS };
  return { status: 200 };
});
const admin = createKafkaAdmin({ brokers: KAFKA_BROKERS, clientId: 'outbound-batched-test' });
const taskQueues = uniqueTaskQueues('batched');
// Short waits so that retries and the sweep happen inside a test; handoff_grace must exceed request_timeout.
const fast = { retry_schedule: ['1s', '2s'], request_timeout: '2s', batched: { handoff_grace: '3s', sweep_interval: '1s' } };
const batched = testProfile({ outbound: { delivery_mode: 'batched', ...fast } });
const stops: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 8 });
  temporal = await connectDevServer();
  producer = await createProducer({ brokers: KAFKA_BROKERS, clientId: 'outbound-batched-producer' });
  const workers = await startWorkers({
    connection: temporal.native,
    taskQueues,
    activities: testActivities(database.db, { profile: batched }),
  });
  stops.push(() => workers.stop());
});
afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => {});
  await producer?.close();
  await receiver.close();
  await admin.close();
  await temporal?.close();
  await database?.close();
});

async function topic(label: string, partitions = 1): Promise<string> {
  const name = `apipay.test.${label}.${randomUUID().slice(0, 8)}`;
  await admin.createTopic(name, partitions);
  return name;
}
/** The batch handler over this file's database, dev server and delivery queue, with `profile`. */
const batchedHandler = (profile: ReturnType<typeof testProfile>, client = temporal.client) =>
  createOutboundBatchHandler({
    db: database.db,
    temporal: client,
    taskQueue: taskQueues.delivery,
    profile,
    logger: testLogger,
    secretsKey: TEST_SECRETS_KEY,
  });
const posts = (prefix: string) => receiver.received.filter((r) => r.path.startsWith(prefix));
/** The dev server's client, each workflow start answered `ms` late (a Temporal server slow to start them). */
const slowStarts = (ms: number): typeof temporal.client => {
  const bound = <T extends object>(target: T, key: string | symbol) => {
    const value = Reflect.get(target, key) as unknown;
    return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
  };
  const { workflow } = temporal.client;
  const late = new Proxy(workflow, {
    get: (target, key) =>
      key === 'start'
        ? async (...args: Parameters<typeof workflow.start>) => {
            await new Promise((r) => setTimeout(r, ms));
            return target.start(...args);
          }
        : bound(target, key),
  });
  return new Proxy(temporal.client, { get: (target, key) => (key === 'workflow' ? late : bound(target, key)) });
};
const batchOf = (event: object) => ({
  topic: 't',
  partition: 0,
  lag: 0,
  messages: [
    { topic: 't', partition: 0, offset: '0', key: null, value: Buffer.from(JSON.stringify(event)), timestamp: '0', headers: {} },
  ],
});
const attemptsOf = (deliveryId: string) =>
  database.db
    .select()
    .from(deliveryAttempts)
    .where(eq(deliveryAttempts.deliveryId, deliveryId))
    .orderBy(deliveryAttempts.attemptNumber);

describe('batched delivery mode (P1)', () => {
  it('a failed first attempt is recorded by the dispatcher and continues in a workflow: RETRYING, status query, retryNow', async () => {
    const merchantAccount = uniqueMerchant('p1retry');
    await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/p1retry/${merchantAccount}` });
    // Only retryNow moves it. A first wait under MIN_START_DELAY_MS: the run begins at once (P20), so that it answers
    // the query and a plain signal; the 1 h wait after it is a timer.
    const profile = testProfile({ outbound: { delivery_mode: 'batched', retry_schedule: ['500ms', '1h'] } });
    const name = await topic('p1retry');
    const consumer = createBatchConsumer({ brokers: KAFKA_BROKERS, clientId: 'p1retry', topic: name, groupId: `g-${name}` });
    await runDispatcher(consumer, batchedHandler(profile));
    stops.push(() => consumer.stop());
    const event = envelope({ merchantAccount });
    failTimes.set(event.id, 2); // the dispatcher's attempt 1 and the workflow's attempt 2
    await producer.send(name, [{ value: JSON.stringify(event) }]);

    const [row] = await waitFor(
      async () => {
        const r = await database.db.select().from(deliveries).where(eq(deliveries.eventPublicId, event.id));
        return r[0]?.status === 'RETRYING' && r[0].handoffSince === null && r[0].attemptCount === 2 ? r : undefined;
      },
      30_000,
      'RETRYING after two attempts, handed off',
    );
    expect((await attemptsOf(row!.id)).map((a) => [a.attemptNumber, a.responseStatus, a.errorKind])).toEqual([
      [1, 503, 'server_error'],
      [2, 503, 'server_error'],
    ]);
    const handle = temporal.client.workflow.getHandle(row!.id);
    expect(await handle.query(deliveryStatusQuery)).toMatchObject({ status: 'RETRYING', attemptCount: 2 });
    const described = await handle.describe();
    expect(described.searchAttributes.DeliveryStatus).toEqual(['RETRYING']);

    await handle.signal(retryNowSignal, { operator: 'test' });
    await waitFor(
      async () => (await handle.query(deliveryStatusQuery)).status === 'DELIVERED',
      30_000,
      'DELIVERED after retryNow',
    );
    expect((await attemptsOf(row!.id)).map((a) => [a.attemptNumber, a.succeeded])).toEqual([
      [1, false],
      [2, false],
      [3, true],
    ]);
    await expectNoMore(() => posts(`/p1retry/${merchantAccount}`).length, 3, 1000, 'POSTs');
  });

  it("P20 a failed first attempt waits for its retry in its workflow's start delay: one history event and no worker until due, then the retry at once; an operator's retry ends the delay", async () => {
    const merchantAccount = uniqueMerchant('p20delay');
    await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/p20delay/${merchantAccount}` });
    const WAIT_MS = 4000;
    const handler = batchedHandler(
      testProfile({ outbound: { delivery_mode: 'batched', retry_schedule: [`${WAIT_MS}ms`, '1h'] } }),
    );
    const [waiting, retried] = [envelope({ merchantAccount }), envelope({ merchantAccount })];
    failFirst.add(waiting.id);
    failFirst.add(retried.id);
    await handler(batchOf(waiting));
    await handler(batchOf(retried));
    await handler.drain();
    const rowOf = async (id: string) => (await database.db.select().from(deliveries).where(eq(deliveries.eventPublicId, id)))[0]!;
    const [w, r] = [await rowOf(waiting.id), await rowOf(retried.id)];
    expect([w.status, w.handoffSince, r.status, r.handoffSince]).toEqual(['RETRYING', null, 'RETRYING', null]);
    const handle = temporal.client.workflow.getHandle(w.id);
    const started = (await handle.fetchHistory()).events ?? [];
    // The execution exists (its id, search attributes) with the wait as its first workflow task's backoff; nothing ran.
    expect(started).toHaveLength(1);
    const backoff = started[0]!.workflowExecutionStartedEventAttributes!.firstWorkflowTaskBackoff!;
    const backoffMs = Number(backoff.seconds ?? 0) * 1000 + (backoff.nanos ?? 0) / 1e6;
    expect(backoffMs).toBeGreaterThan(WAIT_MS - 2000);
    expect(backoffMs).toBeLessThanOrEqual(WAIT_MS);
    expect((await handle.describe()).searchAttributes.DeliveryStatus).toEqual(['RETRYING']);

    // An operator's retry (signalWithStart, as the admin API and the CLI send it) ends the other one's delay at once.
    await requestDeliveryRetry({
      client: temporal.client,
      taskQueue: taskQueues.delivery,
      deliveryId: r.id,
      retryScheduleMs: [WAIT_MS, 3_600_000],
      request: { operator: 'test' },
    });
    await waitFor(
      async () => (await rowOf(retried.id)).status === 'DELIVERED',
      WAIT_MS - 1000,
      'the operator retry, before the wait',
    );

    // The other one attempts when its wait is over, without a timer first.
    await waitFor(async () => (await rowOf(waiting.id)).status === 'DELIVERED', 20_000, 'the retry when due');
    const attempts = await attemptsOf(w.id);
    expect(attempts.map((a) => [a.attemptNumber, a.succeeded])).toEqual([
      [1, false],
      [2, true],
    ]);
    expect(attempts[1]!.startedAt.getTime() - attempts[0]!.startedAt.getTime()).toBeGreaterThanOrEqual(WAIT_MS - 200);
    const events = (await handle.fetchHistory()).events ?? [];
    expect(events.filter((e) => e.timerStartedEventAttributes)).toHaveLength(0);
  });

  it('P9 the first attempts reuse an endpoint signer for outbound.batched.signer_ttl; a rotation signs within it', async () => {
    const merchantAccount = uniqueMerchant('p9signer');
    const endpoint = await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/p9signer/${merchantAccount}` });
    const profile = testProfile({ outbound: { delivery_mode: 'batched', batched: { pipeline_depth: 0, signer_ttl: '4s' } } });
    const handler = batchedHandler(profile);
    const deliver = async () => {
      const event = envelope({ merchantAccount });
      const value = Buffer.from(JSON.stringify(event));
      await handler({
        topic: 't',
        partition: 0,
        lag: 0,
        messages: [{ topic: 't', partition: 0, offset: '0', key: null, value, timestamp: '0', headers: {} }],
      });
      const [post] = posts(`/p9signer/${merchantAccount}`).filter(
        (r) => (JSON.parse(r.body.toString()) as { id: string }).id === event.id,
      );
      const [t, ...v1] = String(post!.headers['apipay-signature']).split(',');
      return { body: post!.body, t: t!, v1 };
    };
    const first = await deliver();
    const rotated = await rotateEndpointSecret(database.db, endpoint.id, TEST_SECRETS_KEY, 60_000, new Date());
    const within = await deliver(); // inside the TTL: the signer of the first, with its lookup's time
    expect(within.t).toBe(first.t);
    expect(within.v1).toHaveLength(1);
    expect(() => verify(within.body, `${within.t},${within.v1[0]}`, endpoint.secret)).not.toThrow(); // valid in the grace
    await new Promise((r) => setTimeout(r, 4_100)); // 4 s: the second delivery stays inside it on a busy machine
    const after = await deliver(); // past the TTL: looked up again, the new secret first, the old one in its grace
    expect(after.v1).toHaveLength(2);
    expect(() => verify(after.body, `${after.t},${after.v1[0]}`, rotated)).not.toThrow();
    expect(() => verify(after.body, `${after.t},${after.v1[1]}`, endpoint.secret)).not.toThrow();
  });

  it.each([
    [512, 'returns before the POST is answered, and drain() waits for it'],
    [0, 'waits for the POST before the offsets (pipeline_depth 0)'],
  ] as const)('P2 with pipeline_depth %i the batch handler %s; DELIVERED either way, POSTed once', async (depth, _what) => {
    const merchantAccount = uniqueMerchant(`p2pipe${depth}`);
    await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/p2pipe/${merchantAccount}` });
    const profile = testProfile({ outbound: { delivery_mode: 'batched', batched: { pipeline_depth: depth } } });
    const handler = batchedHandler(profile);
    const event = envelope({ merchantAccount });
    slow.add(event.id);
    const message = {
      topic: 't',
      partition: 0,
      offset: '0',
      key: null,
      value: Buffer.from(JSON.stringify(event)),
      timestamp: '0',
      headers: {},
    };
    const began = performance.now();
    await handler({ topic: 't', partition: 0, lag: 0, messages: [message] });
    const handlerMs = performance.now() - began;
    const statusOf = async () => (await database.db.select().from(deliveries).where(eq(deliveries.eventPublicId, event.id)))[0];
    if (depth > 0) {
      expect(handlerMs).toBeLessThan(SLOW_MS); // the offsets may be committed while the POST is in flight
      expect((await statusOf())?.handoffSince).not.toBeNull(); // the sweep's responsibility until DELIVERED
      await handler.drain();
    } else {
      expect(handlerMs).toBeGreaterThanOrEqual(SLOW_MS);
    }
    const row = await statusOf();
    expect([row?.status, row?.handoffSince]).toEqual(['DELIVERED', null]);
    expect(posts(`/p2pipe/${merchantAccount}`)).toHaveLength(1);
    slow.delete(event.id);
  });

  it('P17 pipelined, the workflow start of a failed first attempt holds no send: the next batch is POSTed while it is starting, and it is started', async () => {
    const [down, up] = [uniqueMerchant('p17down'), uniqueMerchant('p17up')];
    await insertEndpoint(database.db, { merchantAccount: down, url: `${receiver.url}/p17down/${down}` });
    await insertEndpoint(database.db, { merchantAccount: up, url: `${receiver.url}/p17up/${up}` });
    const START_MS = 3000;
    // One send at a time: before P17 the second batch's POST waited for the first send's workflow start.
    const profile = testProfile({ outbound: { delivery_mode: 'batched', batched: { pipeline_sends: 1 } } });
    const handler = batchedHandler(profile, slowStarts(START_MS));
    const [failing, healthy] = [envelope({ merchantAccount: down }), envelope({ merchantAccount: up })];
    failFirst.add(failing.id);
    await handler(batchOf(failing));
    await waitFor(() => posts(`/p17down/${down}`).length === 1, 10_000, 'the failing POST');
    const from = performance.now();
    await handler(batchOf(healthy));
    await waitFor(() => posts(`/p17up/${up}`).length === 1, 10_000, 'the healthy POST');
    expect(performance.now() - from, 'the healthy POST waited for the start').toBeLessThan(START_MS * 0.66);
    await handler.drain(); // waits for the start behind the send
    const [row] = await database.db.select().from(deliveries).where(eq(deliveries.eventPublicId, failing.id));
    expect([row?.status, row?.handoffSince]).toEqual(['RETRYING', null]);
    expect((await temporal.client.workflow.getHandle(row!.id).describe()).status.name).toBe('RUNNING');
    await temporal.client.workflow.getHandle(row!.id).terminate('test done');
  });

  it('P13 a POST past outbound.batched.patience holds no chunk: the fast delivery of the same batch is DELIVERED first, the slow one when it answers, each POSTed once', async () => {
    const merchantAccount = uniqueMerchant('p13patience');
    await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/p13patience/${merchantAccount}` });
    const handler = batchedHandler(
      testProfile({ outbound: { delivery_mode: 'batched', batched: { patience: '200ms', pipeline_sends: 1 } } }),
    );
    const [hanging, fast, next] = [envelope({ merchantAccount }), envelope({ merchantAccount }), envelope({ merchantAccount })];
    slow.add(hanging.id);
    const message = (event: typeof fast, offset: number) => ({
      topic: 't',
      partition: 0,
      offset: String(offset),
      key: null,
      value: Buffer.from(JSON.stringify(event)),
      timestamp: '0',
      headers: {},
    });
    const statusOf = async (id: string) =>
      (await database.db.select().from(deliveries).where(eq(deliveries.eventPublicId, id)))[0];
    await handler({ topic: 't', partition: 0, lag: 0, messages: [message(hanging, 0), message(fast, 1)] });
    // The only send slot is free again long before the hanging POST (1.5 s) answers: the next batch goes out at once.
    await handler({ topic: 't', partition: 0, lag: 0, messages: [message(next, 2)] });
    await waitFor(
      async () => (await statusOf(next.id))?.status === 'DELIVERED',
      SLOW_MS - 300,
      'the next batch delivered while the slow POST hangs',
    );
    expect((await statusOf(fast.id))?.status).toBe('DELIVERED');
    expect((await statusOf(hanging.id))?.status).toBe('PENDING'); // in flight, still the dispatcher's (hand-off marker)
    await handler.drain();
    expect((await statusOf(hanging.id))?.status).toBe('DELIVERED');
    expect(posts(`/p13patience/${merchantAccount}`)).toHaveLength(3);
    slow.delete(hanging.id);
  });

  it('the sweep hands off what a killed dispatcher left: attempt 1 in flight is recorded interrupted and never re-sent', async () => {
    const merchantAccount = uniqueMerchant('p1sweep');
    const endpoint = await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/p1sweep/${merchantAccount}` });
    const long = new Date(Date.now() - 60_000);
    const inFlight = await insertDelivery(database.db, { endpointId: endpoint.id, merchantAccount }); // killed mid-POST
    const untouched = await insertDelivery(database.db, { endpointId: endpoint.id, merchantAccount }); // killed before its chunk
    const young = await insertDelivery(database.db, { endpointId: endpoint.id, merchantAccount }); // a live dispatcher sends it
    await database.db
      .update(deliveries)
      .set({ handoffSince: long })
      .where(inArray(deliveries.id, [inFlight.deliveryId, untouched.deliveryId, young.deliveryId]));
    const reserve = (deliveryId: string, startedAt: Date) =>
      database.db
        .insert(deliveryAttempts)
        .values({ deliveryId, attemptNumber: 1, startedAt, latencyMs: 0, succeeded: false, errorKind: 'in_flight' });
    await reserve(inFlight.deliveryId, long);
    await reserve(young.deliveryId, new Date());

    await sweepHandoffs({
      db: database.db,
      logger: testLogger,
      start: { temporal: temporal.client, taskQueue: taskQueues.delivery, profile: batched },
      graceMs: 3000,
    });
    const delivered = await waitFor(
      async () => {
        const r = await database.db
          .select()
          .from(deliveries)
          .where(inArray(deliveries.id, [inFlight.deliveryId, untouched.deliveryId]));
        return r.every((d) => d.status === 'DELIVERED') ? r : undefined;
      },
      30_000,
      'both DELIVERED through their workflows',
    );
    expect(delivered.every((d) => d.handoffSince === null)).toBe(true);
    expect((await attemptsOf(inFlight.deliveryId)).map((a) => [a.attemptNumber, a.errorKind])).toEqual([
      [1, 'interrupted'],
      [2, null],
    ]);
    expect((await attemptsOf(untouched.deliveryId)).map((a) => [a.attemptNumber, a.errorKind])).toEqual([[1, null]]);
    // One POST each: attempt 2 for the interrupted one (its attempt 1 is the killed dispatcher's), attempt 1 for the other.
    await expectNoMore(() => posts(`/p1sweep/${merchantAccount}`).length, 2, 1000, 'POSTs');
    // The young in-flight attempt belongs to a live dispatcher: left alone, still owned.
    const [left] = await database.db.select().from(deliveries).where(eq(deliveries.id, young.deliveryId));
    expect(left).toMatchObject({ status: 'PENDING', handoffSince: long });
    await expect(temporal.client.workflow.getHandle(young.deliveryId).describe()).rejects.toThrow(/not found/i);
    await database.db.update(deliveries).set({ handoffSince: null }).where(eq(deliveries.id, young.deliveryId)); // no later sweep takes it
  });

  it(
    'R14 a dispatcher killed right after its batched first attempts were recorded: none is POSTed again, the failed ones go on in their workflow',
    { timeout: 180_000 },
    async () => {
      const merchantAccount = uniqueMerchant('p1fault');
      await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/p1fault/${merchantAccount}` });
      const name = await topic('p1fault');
      const group = `g-${name}`;
      const taskQueue = uniqueTaskQueues('p1fault').delivery;
      const replicaProfile = { outbound: { delivery_mode: 'batched', ...fast, batched: { ...fast.batched, concurrency: 64 } } };
      const ids = Array.from({ length: 20 }, () => uniqueEventId());
      const refused = new Set(ids.filter((_, i) => i % 2 === 0));
      for (const id of refused) failFirst.add(id); // attempt 1 of these gets a 503; any later POST a 200
      await replica(replicaProfile, 'worker', taskQueue);
      const doomed = await replica(replicaProfile, 'dispatcher', name, group, taskQueue, {
        APIPAY_FAULT_AFTER_STEP: 'batchedRecord',
      });
      const killed = new Promise((resolve) => doomed.once('exit', (_code, signal) => resolve(signal)));
      await producer.send(
        name,
        ids.map((id, i) => ({ key: `k${i}`, value: JSON.stringify(envelope({ id, merchantAccount })) })),
      );
      expect(await killed).toBe('SIGKILL');
      const path = `/p1fault/${merchantAccount}`;
      expect(posts(path)).toHaveLength(ids.length); // every attempt 1 was sent and recorded before the kill
      await replica(replicaProfile, 'dispatcher', name, group, taskQueue);

      const rows = await waitFor(
        async () => {
          const r = await database.db.select().from(deliveries).where(eq(deliveries.merchantAccount, merchantAccount));
          return r.length === ids.length && r.every((d) => d.status === 'DELIVERED' && d.handoffSince === null) ? r : undefined;
        },
        120_000,
        'every delivery DELIVERED and handed off',
      );
      const sent = new Map<string, number>();
      for (const r of posts(path)) {
        const id = (JSON.parse(r.body.toString()) as { id: string }).id;
        sent.set(id, (sent.get(id) ?? 0) + 1);
      }
      for (const id of ids) expect(sent.get(id), id).toBe(refused.has(id) ? 2 : 1);
      for (const row of rows) {
        const attempts = await attemptsOf(row.id);
        const expected = refused.has(row.eventPublicId)
          ? [
              [1, 503],
              [2, 200],
            ]
          : [[1, 200]];
        expect(attempts.map((a) => [a.attemptNumber, a.responseStatus])).toEqual(expected);
        if (refused.has(row.eventPublicId)) {
          // The durable history agrees with the rows: the workflow the sweep started counted both attempts.
          const progress = await temporal.client.workflow.getHandle(row.id).query(deliveryStatusQuery);
          expect(progress).toMatchObject({ status: 'DELIVERED', attemptCount: 2 });
        }
      }
    },
  );

  it(
    'kill drill: dispatcher and worker processes SIGKILLed mid-burst; every event delivered, each duplicate an interrupted attempt',
    { timeout: 420_000 },
    async () => {
      const merchantAccount = uniqueMerchant('p1kill');
      await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/p1kill/${merchantAccount}` });
      const name = await topic('p1kill', 2);
      const group = `g-${name}`;
      const taskQueue = uniqueTaskQueues('p1kill').delivery;
      const replicaProfile = { outbound: { delivery_mode: 'batched', ...fast, batched: { ...fast.batched, concurrency: 16 } } };
      const ids = Array.from({ length: 300 }, () => uniqueEventId());
      for (const id of ids.filter((_, i) => i % 10 === 0)) failFirst.add(id); // some need their workflow
      const worker = await replica(replicaProfile, 'worker', taskQueue);
      const dispatcher = await replica(replicaProfile, 'dispatcher', name, group, taskQueue);
      const killPath = `/p1kill/${merchantAccount}`;
      await producer.send(
        name,
        ids.map((id, i) => ({ key: `k${i}`, value: JSON.stringify(envelope({ id, merchantAccount })) })),
      );

      await waitFor(() => posts(killPath).length >= 60, 60_000, 'the burst under way');
      dispatcher.kill('SIGKILL');
      worker.kill('SIGKILL');
      await replica(replicaProfile, 'dispatcher', name, group, taskQueue); // restarted; stopped by afterAll
      await replica(replicaProfile, 'worker', taskQueue);

      // A killed consumer's partitions move only after its session timeout (10 s in the replicas). 240 s of the test's
      // 420: a CI run (7 Dec) spent 80 s of a 300 s budget before the restarts and timed out with no word on what was
      // left, so a miss now ends here, with the rows that were not done.
      let left: Record<string, number> = {};
      const rows = await waitFor(
        async () => {
          const r = await database.db.select().from(deliveries).where(eq(deliveries.merchantAccount, merchantAccount));
          left = undone(r, ids.length);
          return Object.keys(left).length === 0 ? r : undefined;
        },
        240_000,
        'every delivery DELIVERED and handed off',
      ).catch(async (error: Error) => {
        const attempts = await database.sql<{ n: string; kind: string | null; status: number | null }[]>`
          select count(*)::text as n, a.error_kind as kind, a.response_status as status
            from delivery_attempts a join deliveries d on d.id = a.delivery_id
           where d.merchant_account = ${merchantAccount} group by 2, 3`;
        throw new Error(`${error.message}; not done: ${JSON.stringify(left)}; attempts: ${JSON.stringify(attempts)}`);
      });
      const received = new Map<string, number>();
      for (const r of posts(killPath)) {
        const id = (JSON.parse(r.body.toString()) as { id: string }).id;
        received.set(id, (received.get(id) ?? 0) + 1);
      }
      const all = await database.db
        .select()
        .from(deliveryAttempts)
        .where(
          inArray(
            deliveryAttempts.deliveryId,
            rows.map((d) => d.id),
          ),
        );
      const interrupted = all.filter((a) => a.errorKind === 'interrupted').length;
      const failedFirst = all.filter((a) => a.responseStatus === 503).length;
      const duplicates = [...received.values()].reduce((n, c) => n + c - 1, 0);
      expect(ids.filter((id) => !received.has(id))).toEqual([]); // 0 lost
      expect(all.filter((a) => a.errorKind === 'in_flight')).toEqual([]); // every attempt recorded
      // Every POST beyond one per event is a 503'd first attempt or an attempt recorded interrupted (killed mid-POST).
      expect(duplicates).toBeLessThanOrEqual(failedFirst + interrupted);
      expect(posts(killPath).length).toBeLessThanOrEqual(all.length); // at most one POST per recorded attempt number
      console.info('P1 kill drill', {
        duplicates,
        interrupted,
        failedFirst,
        posts: posts(killPath).length,
        attempts: all.length,
      });
    },
  );
});

/** The kill drill's rows that are not yet done, counted by what they wait for (all there, DELIVERED, handed off). */
function undone(rows: (typeof deliveries.$inferSelect)[], expected: number): Record<string, number> {
  const left: Record<string, number> = {};
  if (rows.length < expected) left['no row yet'] = expected - rows.length;
  for (const d of rows) {
    const key =
      d.status !== 'DELIVERED'
        ? `${d.status}${d.handoffSince ? ' (hand-off pending)' : ''}`
        : d.handoffSince
          ? 'DELIVERED, hand-off pending'
          : '';
    if (key) left[key] = (left[key] ?? 0) + 1;
  }
  return left;
}

/** A replica in its own process (test/helpers/outbound-replica.ts), killed with SIGKILL by the drill. */
async function replica(profile: Record<string, unknown>, ...given: (string | Record<string, string>)[]): Promise<ChildProcess> {
  const extra = given.find((a): a is Record<string, string> => typeof a === 'object') ?? {};
  const args = given.filter((a): a is string => typeof a === 'string');
  const env = { ...process.env, REPLICA_PROFILE: JSON.stringify(profile), ...extra };
  const child = spawn(process.execPath, ['--import', 'tsx', REPLICA, ...args], { stdio: ['ignore', 'pipe', 'inherit'], env });
  stops.push(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`replica ${args.join(' ')} exited with ${code}`)));
  });
  return child;
}
const REPLICA = new URL('../helpers/outbound-replica.ts', import.meta.url).pathname;
