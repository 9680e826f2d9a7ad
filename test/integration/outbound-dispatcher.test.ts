// The dispatcher on the real Kafka, PostgreSQL and Temporal dev server: fan-out (O4), quarantine (O2), dedupe and
// ack-after-commit across a restart (O3/O5), and two dispatchers + two workers delivering each exactly once (O14),
// in both delivery modes (P1: per_delivery, the default, and batched).
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { deliveries, events, quarantinedMessages } from '../../src/db/schema/index.js';
import { createOutboundBatchHandler, type OutboundHandlerDeps } from '../../src/dispatcher/outbound-handler.js';
import { runDispatcher } from '../../src/dispatcher/run.js';
import { createBatchConsumer, createKafkaAdmin } from '../../src/kafka/kafkajs.js';
import type { BatchConsumer, BatchHandler, Producer } from '../../src/kafka/types.js';
import { KAFKA_BROKERS, TEST_SECRETS_KEY } from '../helpers/env.js';
import { envelope, insertEndpoint, startReceiver, uniqueEventId, uniqueMerchant, waitFor } from '../helpers/outbound.js';
import { expectNoMore } from '../helpers/wait.js';
import { testProfile } from '../helpers/profile.js';
import { testLogger, uniqueTaskQueues } from '../helpers/temporal.js';
import type { TaskQueues } from '../../src/shared/task-queues.js';
import { useWorld, type World } from '../helpers/world.js';

let database: Database;
let temporal: World['temporal'];
let producer: Producer;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const admin = createKafkaAdmin({ brokers: KAFKA_BROKERS, clientId: 'outbound-dispatcher-test' });
let taskQueues: TaskQueues; // the shared workers' queues (test/helpers/world.ts)
const MODES = ['per_delivery', 'batched'] as const;
type Mode = (typeof MODES)[number];
const profileOf = (mode: Mode) => testProfile({ outbound: { delivery_mode: mode } });
const stops: (() => Promise<unknown>)[] = [];

const world = useWorld({ label: 'outbound-dispatcher', workers: true });
beforeAll(async () => {
  database = world.database;
  temporal = world.temporal;
  producer = world.producer;
  receiver = await startReceiver();
  taskQueues = world.taskQueues;
});
afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => {});
  await receiver?.close();
  await admin.close();
});

async function topic(label: string, partitions = 1): Promise<string> {
  const name = `apipay.test.${label}.${randomUUID().slice(0, 8)}`;
  await admin.createTopic(name, partitions);
  return name;
}

const handler = (mode: Mode, observe?: OutboundHandlerDeps['observe']) =>
  createOutboundBatchHandler({
    db: database.db,
    temporal: temporal.client,
    taskQueue: taskQueues.delivery,
    profile: profileOf(mode),
    logger: testLogger,
    secretsKey: TEST_SECRETS_KEY,
    ...(observe ? { observe } : {}),
  });

async function consume(topicName: string, group: string, batchHandler: BatchHandler): Promise<BatchConsumer> {
  const consumer = createBatchConsumer({ brokers: KAFKA_BROKERS, clientId: `test-${group}`, topic: topicName, groupId: group });
  await runDispatcher(consumer, batchHandler);
  stops.push(() => consumer.stop());
  return consumer;
}

const deliveriesOf = (eventIds: string[]) => database.db.select().from(deliveries).where(inArray(deliveries.eventPublicId, eventIds));
/** A replica in its own process (two Temporal workers on one task queue cannot share a process's runtime). */
async function replica(mode: Mode, ...args: string[]): Promise<void> {
  const env = { ...process.env, REPLICA_PROFILE: JSON.stringify({ outbound: { delivery_mode: mode } }) };
  const child = spawn(process.execPath, ['--import', 'tsx', REPLICA, ...args], { stdio: ['ignore', 'pipe', 'inherit'], env });
  stops.push(async () => {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`replica ${args.join(' ')} exited with ${code}`)));
  });
}
const REPLICA = new URL('../helpers/outbound-replica.ts', import.meta.url).pathname;

const received = (path: string) => receiver.received.filter((r) => r.path === path);

describe.each(MODES)('outbound dispatcher, delivery_mode %s', (mode) => {
  it('O4 one PENDING delivery per enabled endpoint of the merchant subscribed to the type, same livemode; body stored once', async () => {
    const merchantAccount = uniqueMerchant('o4');
    const url = (name: string) => `${receiver.url}/o4/${merchantAccount}/${name}`;
    const all = await insertEndpoint(database.db, { merchantAccount, url: url('all') });
    const typed = await insertEndpoint(database.db, { merchantAccount, url: url('typed'), eventTypes: ['payment.succeeded', 'payment.failed'] });
    await insertEndpoint(database.db, { merchantAccount, url: url('other-type'), eventTypes: ['refund.created'] });
    await insertEndpoint(database.db, { merchantAccount, url: url('disabled'), status: 'disabled' });
    await insertEndpoint(database.db, { merchantAccount, url: url('live'), livemode: true });
    await insertEndpoint(database.db, { merchantAccount: uniqueMerchant('o4other'), url: url('other-merchant') });

    const name = await topic('o4');
    await consume(name, `g-${name}`, handler(mode));
    const event = envelope({ merchantAccount });
    await producer.send(name, [{ key: merchantAccount, value: JSON.stringify(event) }]);

    const rows = await waitFor(async () => {
      const r = await deliveriesOf([event.id]);
      return r.length === 2 && r.every((d) => d.status === 'DELIVERED') ? r : undefined;
    }, 30_000, 'two DELIVERED deliveries');
    expect(rows.map((d) => d.endpointId).sort()).toEqual([all.id, typed.id].sort());
    const [stored] = await database.db.select().from(events).where(eq(events.eventPublicId, event.id));
    for (const endpoint of ['all', 'typed']) {
      const [request] = received(`/o4/${merchantAccount}/${endpoint}`);
      expect(request!.body.equals(stored!.body!)).toBe(true);
      expect(JSON.parse(request!.body.toString())).toMatchObject({ id: event.id, type: 'payment.succeeded', data: event.data });
    }
    expect(receiver.received.filter((r) => r.path.startsWith(`/o4/${merchantAccount}/`))).toHaveLength(2);
  });

  it('P9 the partition batches of one fetch share one fan-out transaction (outbound.coalesce_batches), and each is delivered', async () => {
    const merchantAccount = uniqueMerchant('p9');
    await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/p9/${merchantAccount}` });
    const name = await topic('p9', 4);
    const sent = Array.from({ length: 8 }, () => envelope({ merchantAccount }));
    // Eight keys over four partitions, all produced before the consumer joins: its first fetch holds them all.
    await producer.send(name, sent.map((e, i) => ({ key: `k${i}`, value: JSON.stringify(e) })));
    const fanOuts: number[] = [];
    const partitions = new Set<number>();
    const coalesced = handler(mode, (stage, _ms, count) => void (stage === 'fan_out' && fanOuts.push(count)));
    await consume(name, `g-${name}`, async (batch) => {
      partitions.add(batch.partition);
      await coalesced(batch);
    });
    await waitFor(async () => received(`/p9/${merchantAccount}`).length === 8, 30_000, 'eight POSTs');
    expect(partitions.size).toBeGreaterThan(1);
    expect(fanOuts.length, `fan-outs of ${fanOuts.join(', ')} events for ${partitions.size} partitions`).toBeLessThan(partitions.size);
    expect(fanOuts.reduce((a, b) => a + b, 0)).toBe(8);
    // Batched: the merchant has its POST before the DELIVERED row is written.
    await waitFor(async () => (await deliveriesOf(sent.map((e) => e.id))).every((d) => d.status === 'DELIVERED'), 30_000, 'DELIVERED');
  });

  it('O2 a corpus of bad envelopes is quarantined with reasons while the partition keeps flowing', async () => {
    const merchantAccount = uniqueMerchant('o2');
    await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/o2/${merchantAccount}` });
    const good = envelope({ merchantAccount });
    const { id: _id, ...noId } = good;
    const { type: _type, ...noType } = good;
    const { created: _created, ...noCreated } = good;
    const { livemode: _livemode, ...noLivemode } = good;
    const { merchant_account: _merchant, ...noMerchant } = good;
    const corpus: [Buffer | string, string][] = [
      ['{"id": "evt_1", oops', 'invalid_json'],
      [Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), 'invalid_utf8'],
      ['[1,2,3]', 'not_an_object'],
      [JSON.stringify(noId), 'missing_id'],
      [JSON.stringify({ ...good, id: 'ch_123' }), 'malformed_id'],
      [JSON.stringify(noType), 'missing_type'],
      [JSON.stringify(noCreated), 'missing_created'],
      [JSON.stringify({ ...good, created: 'yesterday' }), 'malformed_created'],
      [JSON.stringify(noLivemode), 'missing_livemode'],
      [JSON.stringify({ ...good, data: {} }), 'missing_data_object'],
      [JSON.stringify({ ...good, object: 'charge' }), 'malformed_object'],
      [JSON.stringify(noMerchant), 'missing_merchant_account'],
    ];
    const name = await topic('o2');
    await producer.send(name, [...corpus.map(([value]) => ({ value })), { value: JSON.stringify(good) }]);
    await consume(name, `g-${name}`, handler(mode));

    // The good message after twelve bad ones on the same partition is delivered.
    await waitFor(async () => received(`/o2/${merchantAccount}`).length === 1, 30_000, 'the good event delivered');
    const rows = await database.db.select().from(quarantinedMessages).where(eq(quarantinedMessages.topic, name)).orderBy(quarantinedMessages.id);
    expect(rows.map((r) => [Number(r.offset), r.reason])).toEqual(corpus.map(([, reason], i) => [i, reason]));
    expect(rows[1]!.raw!.equals(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]))).toBe(true);
    expect(rows.every((r) => r.partition === 0)).toBe(true);

    // A redelivered bad message is quarantined once (idempotent on topic/partition/offset).
    await handler(mode)({
      topic: name,
      partition: 0,
      lag: 0,
      messages: [{ topic: name, partition: 0, offset: '0', key: null, value: Buffer.from(String(corpus[0]![0])), timestamp: '0', headers: {} }],
    });
    expect(await database.db.select().from(quarantinedMessages).where(eq(quarantinedMessages.topic, name))).toHaveLength(corpus.length);
  });

  it('O3/O5 the same event twice, redelivered after a restart before its commit: one set of deliveries, one workflow and one POST each', async () => {
    const merchantAccount = uniqueMerchant('o3');
    const first = await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/o3/${merchantAccount}/a` });
    const second = await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/o3/${merchantAccount}/b` });
    const event = envelope({ merchantAccount });
    const name = await topic('o3');
    const group = `g-${name}`;

    // First dispatcher: commits its transaction and starts the workflows, then dies before the offset commit.
    const real = handler(mode);
    let crashes = 0;
    const crashing = await consume(name, group, async (batch) => {
      await real(batch);
      crashes++;
      throw new Error('simulated crash after the transaction, before the offset commit');
    });
    await producer.send(name, [{ value: JSON.stringify(event) }, { value: JSON.stringify(event) }]);
    await waitFor(async () => crashes > 0, 30_000, 'the first dispatcher to handle the batch');
    await crashing.stop();

    // Restart: the same group gets both messages again (nothing was committed) and absorbs them (O3).
    const seen: string[] = [];
    await consume(name, group, async (batch) => {
      await real(batch);
      seen.push(...batch.messages.map((m) => m.offset));
    });
    await waitFor(async () => seen.includes('1'), 60_000, 'redelivery to the restarted dispatcher');

    const rows = await waitFor(async () => {
      const r = await deliveriesOf([event.id]);
      return r.every((d) => d.status === 'DELIVERED') ? r : undefined;
    }, 30_000, 'DELIVERED');
    expect(rows.map((d) => d.endpointId).sort()).toEqual([first.id, second.id].sort());
    await expectNoMore(() => received(`/o3/${merchantAccount}/a`).length, 1, 1000, 'POSTs to a');
    await expectNoMore(() => received(`/o3/${merchantAccount}/b`).length, 1, 1000, 'POSTs to b');
    for (const row of rows) {
      if (mode === 'per_delivery') {
        // Workflow id = delivery id and REJECT_DUPLICATE: the one run that exists is the one that delivered.
        expect((await temporal.client.workflow.getHandle(row.id).describe()).status.name).toBe('COMPLETED');
      } else {
        // P1: delivered by the dispatcher at attempt 1, handed off, and no workflow at all.
        expect(row).toMatchObject({ attemptCount: 1, handoffSince: null });
        await expect(temporal.client.workflow.getHandle(row.id).describe()).rejects.toThrow(/not found/i);
      }
    }
  });

  it('O14 two dispatcher processes and two worker processes on the same topic and group: every delivery happens, none twice', async () => {
    const merchantAccount = uniqueMerchant('o14');
    await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/o14/${merchantAccount}/a` });
    await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/o14/${merchantAccount}/b` });
    const name = await topic('o14', 4);
    const group = `g-${name}`;
    const taskQueue = uniqueTaskQueues('o14').delivery; // served only by the two worker processes
    await Promise.all([
      replica(mode, 'worker', taskQueue),
      replica(mode, 'worker', taskQueue),
      replica(mode, 'dispatcher', name, group, taskQueue),
      replica(mode, 'dispatcher', name, group, taskQueue),
    ]);

    const ids = Array.from({ length: 40 }, () => uniqueEventId());
    // At-least-once upstream: every event is produced twice, under different keys so copies land on different partitions.
    const messages = ids.flatMap((id, i) => [
      { key: `k${i}`, value: JSON.stringify(envelope({ id, merchantAccount })) },
      { key: `k${i + 1}`, value: JSON.stringify(envelope({ id, merchantAccount })) },
    ]);
    await producer.send(name, messages.slice(0, 40));
    await producer.send(name, messages.slice(40));

    await waitFor(async () => {
      const rows = await deliveriesOf(ids);
      return rows.length === 80 && rows.every((d) => d.status === 'DELIVERED');
    }, 90_000, '80 DELIVERED deliveries');
    const o14Posts = () => receiver.received.filter((r) => r.path.startsWith(`/o14/${merchantAccount}/`));
    await waitFor(() => o14Posts().length >= 80, 30_000, '80 POSTs');
    await expectNoMore(() => o14Posts().length, 80, 1000, 'POSTs');
    const posts = o14Posts();
    const keys = posts.map((r) => `${r.path} ${JSON.parse(r.body.toString()).id}`);
    expect(keys).toHaveLength(80);
    expect(new Set(keys).size).toBe(80);
    const partitionsUsed = new Set((await database.db.select().from(events).where(inArray(events.eventPublicId, ids))).map((e) => e.sourcePartition));
    expect(partitionsUsed.size).toBeGreaterThan(1);
  });
});
