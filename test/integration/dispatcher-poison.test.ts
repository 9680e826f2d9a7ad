// R1 on the real Kafka, PostgreSQL and Temporal dev server: poison envelopes mixed with good ones on one partition.
// Every good event gets its deliveries, every poison one a quarantine row with a reason, the committed offset moves
// past all of them, the handler never throws (no consumer crash loop), and no log line carries body bytes.
// O21: envelopes whose data.object breaks its catalog schema (a float amount, no currency) or whose type or version is
// not in the catalog are quarantined with the schema path and message, and the good ones around them delivered.
import { randomUUID } from 'node:crypto';
import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { DatabaseError } from '../../src/db/errors.js';
import { deliveries, events, quarantinedMessages } from '../../src/db/schema/index.js';
import { createOutboundBatchHandler } from '../../src/dispatcher/outbound-handler.js';
import { runDispatcher } from '../../src/dispatcher/run.js';
import { createBatchConsumer, createKafkaAdmin } from '../../src/kafka/kafkajs.js';
import type { BatchConsumer, Producer } from '../../src/kafka/types.js';
import { KAFKA_BROKERS, TEST_SECRETS_KEY } from '../helpers/env.js';
import { envelope, insertEndpoint, startReceiver, uniqueMerchant, waitFor } from '../helpers/outbound.js';
import { testProfile } from '../helpers/profile.js';
import type { TaskQueues } from '../../src/shared/task-queues.js';
import { useWorld, type World } from '../helpers/world.js';
import { capturedLogger } from '../helpers/capture.js';

let database: Database;
let temporal: World['temporal'];
let producer: Producer;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const admin = createKafkaAdmin({ brokers: KAFKA_BROKERS, clientId: 'dispatcher-poison-test' });
let taskQueues: TaskQueues; // the shared workers' queues (test/helpers/world.ts)
const stops: (() => Promise<unknown>)[] = [];
/** Marks the merchant whose events a test trigger refuses: a body that passes validation and that the DB refuses. */
const REFUSED = `acct_refused_${randomUUID().slice(0, 8)}`;
const TRIGGER = `poison_refuse_${REFUSED.slice(-8)}`;

const { logger, lines: logLines } = capturedLogger('poison-test');

const world = useWorld({ label: 'dispatcher-poison', workers: true });
beforeAll(async () => {
  database = world.database;
  temporal = world.temporal;
  producer = world.producer;
  receiver = await startReceiver();
  taskQueues = world.taskQueues;
  await database.sql.unsafe(`
    create function ${TRIGGER}() returns trigger language plpgsql set search_path = pg_catalog, public, pg_temp as $$
    begin
      if new.merchant_account = '${REFUSED}' then
        raise exception 'refused by test: %', new.merchant_account using errcode = '23514', table = 'events', constraint = '${TRIGGER}';
      end if;
      return new;
    end $$;
    create trigger ${TRIGGER} before insert on events for each row execute function ${TRIGGER}();`);
});
afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => {});
  await database?.sql.unsafe(`drop trigger if exists ${TRIGGER} on events; drop function if exists ${TRIGGER}();`).catch(() => {});
  await receiver?.close();
  await admin.close();
});

/** A valid payment.succeeded of the refused account: only the database's trigger refuses it. */
function refusedByDatabase(marker: string) {
  const event = envelope({ merchantAccount: REFUSED });
  return { ...event, data: { object: { ...event.data.object, note: marker } } };
}

/** The envelope with data.object changed (a key set to undefined is left out of the JSON). */
function withObject(event: ReturnType<typeof envelope>, change: Record<string, unknown>) {
  return { ...event, data: { object: { ...event.data.object, ...change } } };
}

describe('R1 poison messages never stop a partition', () => {
  // P1: in both delivery modes (batched: the dispatcher sends the good ones itself).
  it.each(['per_delivery', 'batched'] as const)('R1 quarantines each poison envelope with a reason, delivers every good one, and commits past them all (%s)', async (mode) => {
    const merchantAccount = uniqueMerchant('r1');
    await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/r1/${merchantAccount}` });
    await insertEndpoint(database.db, { merchantAccount: REFUSED, url: `${receiver.url}/r1/refused` });
    const good = () => envelope({ merchantAccount });
    const secretMarker = `BODYSECRET${randomUUID().slice(0, 8)}`;
    const poison: [string, unknown][] = [
      ['nul in merchant_account', { ...good(), merchant_account: `${merchantAccount}\u0000` }],
      ['nul in type', { ...good(), type: 'payment.succeeded\u0000' }],
      ['lone surrogate in merchant_account', { ...good(), merchant_account: `${merchantAccount}\ud800` }],
      ['nul in a data key', { ...good(), data: { object: { [`note\u0000${secretMarker}`]: 1 } } }],
      ['nul in a data value', { ...good(), data: { object: { note: `x\u0000${secretMarker}` } } }],
      ['lone surrogate in a data value', { ...good(), data: { object: { note: `\udc00${secretMarker}` } } }],
      ['over-long merchant_account', { ...good(), merchant_account: 'a'.repeat(10_000) }],
      ['created beyond any timestamp', { ...good(), created: 9_007_199_254_740_000 }],
      ['a number that overflows a double', '__OVERFLOW__'],
      ['a body the database refuses', refusedByDatabase(secretMarker)],
      // O21: well-formed envelopes the catalog check refuses, never delivered.
      ['a float amount', withObject(good(), { amount: 10.5 })],
      ['no currency', withObject(good(), { currency: undefined })],
      ['a type not in the catalog', { ...good(), type: 'payment.nope' }],
      ['a version not in the catalog', { ...good(), version: 7 }],
    ];
    const serialize = (value: unknown) =>
      value === '__OVERFLOW__' ? JSON.stringify(good()).replace('"amount":1000', '"amount":1e400') : JSON.stringify(value);
    // good, poison, good, poison, … on one partition, then a final good one.
    const goods = poison.map(() => good()).concat([good()]);
    const values = goods.flatMap((g, i) => [JSON.stringify(g), ...(poison[i] ? [serialize(poison[i]![1])] : [])]);
    const name = `apipay.test.r1.${randomUUID().slice(0, 8)}`;
    const group = `g-${name}`;
    await admin.createTopic(name, 1);
    await producer.send(name, values.map((value) => ({ key: 'same-partition', value })));

    const profile = testProfile({ outbound: { delivery_mode: mode } });
    const real = createOutboundBatchHandler({ db: database.db, temporal: temporal.client, taskQueue: taskQueues.delivery, profile, logger, secretsKey: TEST_SECRETS_KEY });
    let failures = 0;
    const consumer: BatchConsumer = createBatchConsumer({ brokers: KAFKA_BROKERS, clientId: `test-${group}`, topic: name, groupId: group });
    await runDispatcher(consumer, async (batch) => {
      try {
        await real(batch);
      } catch (error) {
        failures++;
        throw error;
      }
    });
    stops.push(() => consumer.stop());

    await waitFor(async () => (await admin.committedOffsets(group, name)).get(0) === String(values.length), 60_000, 'the offset past every message');
    const ids = goods.map((g) => g.id);
    await waitFor(async () => {
      const rows = await database.db.select().from(deliveries).where(inArray(deliveries.eventPublicId, ids));
      return rows.length === goods.length && rows.every((d) => d.status === 'DELIVERED');
    }, 60_000, 'every good event delivered');
    expect(failures).toBe(0);

    const rows = await database.db.select().from(quarantinedMessages).where(eq(quarantinedMessages.topic, name)).orderBy(quarantinedMessages.id);
    const poisonOffsets = values.map((_, i) => i).filter((i) => i % 2 === 1);
    expect(rows.map((r) => Number(r.offset)).sort((a, b) => a - b)).toEqual(poisonOffsets);
    const reasonAt = new Map(rows.map((r) => [Number(r.offset), r.reason]));
    expect(poison.map(([label], i) => [label, reasonAt.get(poisonOffsets[i]!)])).toEqual([
      ['nul in merchant_account', 'malformed_merchant_account'],
      ['nul in type', 'malformed_type'],
      ['lone surrogate in merchant_account', 'malformed_merchant_account'],
      ['nul in a data key', 'malformed_data'],
      ['nul in a data value', 'malformed_data'],
      ['lone surrogate in a data value', 'malformed_data'],
      ['over-long merchant_account', 'malformed_merchant_account'],
      ['created beyond any timestamp', 'malformed_created'],
      ['a number that overflows a double', 'malformed_data'],
      ['a body the database refuses', 'database_refused_23514'],
      ['a float amount', 'schema_invalid'],
      ['no currency', 'schema_invalid'],
      ['a type not in the catalog', 'unknown_event_type'],
      ['a version not in the catalog', 'unknown_event_version'],
    ]);
    // O21: the schema error's path and message are kept in the row (and only for the catalog's refusals).
    const detailAt = new Map(rows.map((r) => [Number(r.offset), r.detail]));
    expect(poison.slice(-4).map(([label], i) => [label, detailAt.get(poisonOffsets[poison.length - 4 + i]!)])).toEqual([
      ['a float amount', 'data.object.amount must be integer'],
      ['no currency', "data.object must have required property 'currency'"],
      ['a type not in the catalog', 'payment.nope is not in the event catalog'],
      ['a version not in the catalog', 'payment.succeeded has no version 7 in the catalog'],
    ]);
    expect(detailAt.get(poisonOffsets[0]!)).toBeNull();
    expect(rows.every((r) => r.raw && r.raw.length > 0)).toBe(true);
    expect(received(`/r1/refused`)).toHaveLength(0);

    // Nothing of any body reached the log: neither the marker nor the refused merchant's event bodies.
    const log = logLines.join('');
    expect(log).toContain('database_refused_23514');
    expect(log).not.toContain(secretMarker);
    expect(log).not.toContain('"amount"');
  });
});

describe('R1 database errors in logs and retries', () => {
  it('R1 a failing insert on the real database logs SQLSTATE and table, no body bytes and no query', async () => {
    const marker = `BODYSECRET${randomUUID().slice(0, 8)}`;
    const error = await database.db
      .insert(events)
      .values({ eventPublicId: `evt_${randomUUID().replaceAll('-', '')}`, merchantAccount: `acct\u0000${marker}`, type: 't', livemode: false, createdUnix: 1, body: Buffer.from(marker) })
      .then(() => undefined, (e: unknown) => e);
    expect(error).toBeDefined();
    expect(String((error as Error).message)).toContain(marker); // drizzle's own message does carry the params
    const before = logLines.length;
    logger.error({ err: error }, 'insert failed');
    const line = logLines.slice(before).join('');
    expect(line).toContain('22021');
    expect(line).not.toContain(marker);
    expect(line).not.toContain('insert into');
  });

  it('R1 an unreachable database fails the batch (retried, offsets not committed), quarantines nothing, leaks no body', async () => {
    const down = createDatabase('postgres://postgres@127.0.0.1:1/nowhere', { max: 1 });
    const marker = `BODYSECRET${randomUUID().slice(0, 8)}`;
    const name = `apipay.test.r1-down.${randomUUID().slice(0, 8)}`;
    const handler = createOutboundBatchHandler({ db: down.db, temporal: temporal.client, taskQueue: taskQueues.delivery, profile: testProfile(), logger });
    const value = Buffer.from(JSON.stringify({ ...envelope({ merchantAccount: uniqueMerchant('down') }), data: { object: { note: marker } } }));
    const failure = await handler({ topic: name, partition: 0, lag: 0, messages: [{ topic: name, partition: 0, offset: '0', key: null, value, timestamp: '0', headers: {} }] }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    await down.close().catch(() => {});
    expect(failure).toBeInstanceOf(Error);
    expect(failure).not.toBeInstanceOf(DatabaseError); // a connection error, not a refusal of the data
    expect(`${failure!.message} ${failure!.stack}`).not.toContain(marker);
    expect(await database.db.select().from(quarantinedMessages).where(eq(quarantinedMessages.topic, name))).toHaveLength(0);
  });
});

const received = (path: string) => receiver.received.filter((r) => r.path === path);
