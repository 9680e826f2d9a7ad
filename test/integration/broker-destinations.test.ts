// M11 with O7, O15, P1, A3: endpoints whose destination is a RabbitMQ queue or a Kafka topic, created through the admin
// API, delivered to in both delivery modes (the per-delivery attempt activity and the batched dispatcher's first
// attempts) through the one attempt path; a consumer on the real broker verifies every message with the
// `standardwebhooks` package from its headers. A broker that is down is a failed attempt on the retry schedule, and the
// next attempt delivers once it is back; a broker that refuses (unroutable, wrong password) is `broker_refused`. The
// destination's password is never in an API response, a log line or an audit row. Real PostgreSQL, Temporal dev server,
// RabbitMQ (RABBITMQ_URL: the stack's; skipped without it) and the stack's Kafka.
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import amqp, { type Channel, type ChannelModel } from 'amqplib';
import { eq } from 'drizzle-orm';
import kafkajs from 'kafkajs';
import { pino } from 'pino';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeliveryActivities } from '../../src/activities/delivery.js';
import { createApp } from '../../src/api/app.js';
import { auditEvents, deliveries, webhookEndpoints } from '../../src/db/schema/index.js';
import { REDACT_PATHS } from '../../src/lib/logger.js';
import { brokerConnections } from '../../src/outbound/destinations/publish.js';
import { randomUUID } from 'node:crypto';
import { attemptsOf as attemptsOfDelivery, batchedFirstAttempt } from '../helpers/attempts.js';
import { KAFKA_BROKERS, TEST_ADMIN_TOKEN, TEST_SECRETS_KEY } from '../helpers/env.js';
import { insertDelivery } from '../helpers/outbound.js';
import { testProfile } from '../helpers/profile.js';
import { uniqueTaskQueues, terminateWorkflows } from '../helpers/temporal.js';
import { waitFor } from '../helpers/wait.js';
import { useWorld } from '../helpers/world.js';

const RABBITMQ_URL = process.env.RABBITMQ_URL;
const world = useWorld({ label: 'brokers' });
const profile = testProfile({ outbound: { request_timeout: '3s', retry_schedule: ['1m', '5m'], auto_disable_after: '1d' } });
const UNPOLLED = uniqueTaskQueues('brokers').delivery; // the batched hand-off: nobody runs those workflows

// Every log line of the API and both delivery modes, as text: the password must be in none of them.
const logText: string[] = [];
const sink = new Writable({
  write(chunk, _enc, done) {
    logText.push(String(chunk));
    done();
  },
});
const logger = pino({ level: 'debug', redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, sink);

let app: ReturnType<typeof createApp>;
let rabbit: ChannelModel;
let channel: Channel;
let rabbitUrl: URL;
const started: string[] = [];

beforeAll(async () => {
  app = createApp({
    db: world.db,
    temporal: world.temporal.client,
    profile,
    env: { ADMIN_TOKEN: TEST_ADMIN_TOKEN, SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY.toString('base64') },
    taskQueues: world.taskQueues,
    logger,
    readiness: {},
  });
  if (RABBITMQ_URL) {
    rabbitUrl = new URL(RABBITMQ_URL);
    rabbit = await amqp.connect(RABBITMQ_URL);
    channel = await rabbit.createChannel();
  }
});
afterAll(async () => {
  await terminateWorkflows(world.temporal.client, started);
  await brokerConnections.close();
  await rabbit?.close().catch(() => {});
});

const auth = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
async function call(method: string, path: string, body?: unknown) {
  const init: RequestInit = {
    method,
    headers: { ...auth, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
  };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await app.request(`/admin/v1${path}`, init);
  const text = await res.text();
  return { status: res.status, text, json: text ? (JSON.parse(text) as any) : undefined };
}

const merchant = () => `acct_brk_${randomUUID().slice(0, 8)}`;

async function createBrokerEndpoint(type: 'rabbitmq' | 'kafka', destination: Record<string, string>) {
  const account = merchant();
  const res = await call('POST', '/webhook-endpoints', {
    merchant_account: account,
    type,
    destination,
    event_types: ['*'],
    livemode: false,
  });
  expect(res.status, res.text).toBe(201);
  return { account, id: res.json.id as string, secret: res.json.secret as string, json: res.json, text: res.text };
}

const rabbitFields = (queue: string, port = rabbitUrl.port) => ({
  host: rabbitUrl.hostname,
  port,
  username: decodeURIComponent(rabbitUrl.username),
  password: decodeURIComponent(rabbitUrl.password),
  routing_key: queue,
});

/** Attempt `attemptNumber` of a delivery, as its workflow's activity makes it (per-delivery mode). */
async function perDelivery(deliveryId: string, attemptNumber = 1) {
  const activities = createDeliveryActivities({ db: world.db, profile, logger, secretsKey: TEST_SECRETS_KEY });
  return activities.attemptDelivery({ deliveryId, attemptNumber, scheduledAt: Date.now(), retryInMs: 60_000 });
}

/** Attempt 1 of a delivery, as the batched dispatcher makes it (its hand-off goes to a queue nobody polls). */
async function batched(d: { deliveryId: string; body: Buffer }, endpoint: { id: string; account: string }) {
  await world.db.update(deliveries).set({ handoffSince: new Date() }).where(eq(deliveries.id, d.deliveryId));
  const [row] = await world.db
    .select({ url: webhookEndpoints.url })
    .from(webhookEndpoints)
    .where(eq(webhookEndpoints.id, endpoint.id));
  const deps = { db: world.db, temporal: world.temporal.client, profile, logger, handOffQueue: UNPOLLED };
  const result = await batchedFirstAttempt(deps, {
    deliveryId: d.deliveryId,
    endpointId: endpoint.id,
    merchantAccount: endpoint.account,
    body: d.body,
    url: row!.url,
  });
  started.push(d.deliveryId);
  return result;
}

const attemptsOf = (deliveryId: string) => attemptsOfDelivery(world.db, deliveryId);
const deliveryOf = async (deliveryId: string) =>
  (await world.db.select().from(deliveries).where(eq(deliveries.id, deliveryId)))[0]!;

/** The Standard Webhooks check a merchant's consumer makes: throws unless the headers sign these exact bytes. */
function verify(secret: string, body: Buffer, headers: Record<string, unknown>) {
  const text = (v: unknown) => (Buffer.isBuffer(v) ? v.toString('utf8') : String(v));
  const plain = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, text(v)]));
  return new Webhook(secret).verify(body.toString('utf8'), plain) as { id: string };
}

async function nextRabbitMessage(queue: string) {
  let message: amqp.GetMessage | false = false;
  await waitFor(async () => {
    message = await channel.get(queue, { noAck: true });
    return message !== false;
  }, 10_000);
  return message as unknown as amqp.GetMessage;
}

/** A TCP relay to the real broker on a port of its own: closed = the broker is down (refused), open = back. */
async function relayTo(host: string, port: number) {
  const sockets = new Set<Socket>();
  let server: Server | null = null;
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const own = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return {
    port: own,
    async open() {
      server = createServer((client) => {
        const upstream = netConnect(port, host);
        sockets.add(client).add(upstream);
        client.pipe(upstream).pipe(client);
        const end = () => (client.destroy(), upstream.destroy());
        client.on('error', end).on('close', end);
        upstream.on('error', end).on('close', end);
      });
      await new Promise<void>((resolve) => server!.listen(own, '127.0.0.1', resolve));
    },
    async close() {
      for (const s of sockets) s.destroy();
      sockets.clear();
      if (server) await new Promise<void>((resolve) => server!.close(() => resolve()));
      server = null;
    },
  };
}

describe.skipIf(!RABBITMQ_URL)('M11 RabbitMQ destination', () => {
  it('publishes the stored bytes with Standard Webhooks headers to a queue in both delivery modes, confirmed by the broker', async () => {
    const queue = `apipay.test.brokers.${randomUUID().slice(0, 8)}`;
    await channel.assertQueue(queue, { durable: false, autoDelete: false });
    const endpoint = await createBrokerEndpoint('rabbitmq', rabbitFields(queue));
    expect(endpoint.json).toMatchObject({
      type: 'rabbitmq',
      signature_scheme: 'standard',
      destination: { routing_key: queue, exchange: '', vhost: '/', tls: 'false' },
    });
    expect(endpoint.json.url).toBe(`amqp://${rabbitUrl.hostname}:${rabbitUrl.port}/%2F?queue=${encodeURIComponent(queue)}`);

    for (const mode of ['per-delivery', 'batched'] as const) {
      const d = await insertDelivery(world.db, { endpointId: endpoint.id, merchantAccount: endpoint.account });
      if (mode === 'per-delivery') expect((await perDelivery(d.deliveryId)).outcome).toBe('delivered');
      else expect(await batched(d, endpoint)).toMatchObject({ delivered: 1, handedOff: 0 });
      const message = await nextRabbitMessage(queue);
      expect(message.content.equals(d.body), mode).toBe(true);
      expect(verify(endpoint.secret, message.content, message.properties.headers ?? {}).id).toBe(d.eventId);
      expect(message.properties.messageId).toBe(d.eventId);
      expect(message.properties.deliveryMode).toBe(2); // persistent
      const [attempt] = await attemptsOf(d.deliveryId);
      expect(attempt).toMatchObject({
        succeeded: true,
        errorKind: null,
        responseStatus: null,
        responseExcerpt: 'confirmed by the broker',
      });
      expect((await deliveryOf(d.deliveryId)).status).toBe('DELIVERED');
    }
    await channel.deleteQueue(queue);
  });

  it('a broker that is down is a failed attempt on the retry schedule; the next attempt delivers once it is back', async () => {
    const queue = `apipay.test.brokers.${randomUUID().slice(0, 8)}`;
    await channel.assertQueue(queue, { durable: false });
    const relay = await relayTo(rabbitUrl.hostname, Number(rabbitUrl.port));
    const endpoint = await createBrokerEndpoint('rabbitmq', rabbitFields(queue, String(relay.port)));
    for (const mode of ['per-delivery', 'batched'] as const) {
      const d = await insertDelivery(world.db, { endpointId: endpoint.id, merchantAccount: endpoint.account });
      // Down: nothing listens on the relay's port.
      if (mode === 'per-delivery')
        expect(await perDelivery(d.deliveryId)).toMatchObject({
          outcome: 'failed',
          errorKind: 'connection',
          stopRetrying: false,
        });
      else expect(await batched(d, endpoint)).toMatchObject({ delivered: 0, handedOff: 1 });
      expect((await attemptsOf(d.deliveryId))[0], mode).toMatchObject({ succeeded: false, errorKind: 'connection' });
      const retrying = await deliveryOf(d.deliveryId);
      expect(retrying.status).toBe('RETRYING');
      expect(retrying.nextAttemptAt!.getTime() - Date.now()).toBeGreaterThan(50_000); // the schedule's 1 min
      // Back: attempt 2 (what the workflow's timer would run) is published.
      await relay.open();
      expect((await perDelivery(d.deliveryId, 2)).outcome).toBe('delivered');
      const message = await nextRabbitMessage(queue);
      expect(verify(endpoint.secret, message.content, message.properties.headers ?? {}).id).toBe(d.eventId);
      expect((await deliveryOf(d.deliveryId)).status).toBe('DELIVERED');
      await relay.close();
    }
    await brokerConnections.close(); // the relay's connections are gone
    await channel.deleteQueue(queue);
  });

  it('an unroutable message and a refused login are broker_refused attempts, never a silent loss; the password is in no message', async () => {
    const nowhere = `apipay.test.brokers.none.${randomUUID().slice(0, 8)}`; // no such queue: the default exchange returns it
    const endpoint = await createBrokerEndpoint('rabbitmq', rabbitFields(nowhere));
    const d = await insertDelivery(world.db, { endpointId: endpoint.id, merchantAccount: endpoint.account });
    expect(await perDelivery(d.deliveryId)).toMatchObject({ outcome: 'failed', errorKind: 'broker_refused' });
    expect((await attemptsOf(d.deliveryId))[0]!.errorMessage).toMatch(/unroutable/);

    const wrong = 'wrong-password-9d3f1a';
    const refused = await createBrokerEndpoint('rabbitmq', { ...rabbitFields(nowhere), password: wrong });
    const r = await insertDelivery(world.db, { endpointId: refused.id, merchantAccount: refused.account });
    expect(await perDelivery(r.deliveryId)).toMatchObject({ outcome: 'failed', errorKind: 'broker_refused' });
    const [attempt] = await attemptsOf(r.deliveryId);
    expect(attempt!.errorMessage).toMatch(/ACCESS_REFUSED|403/);
    expect(attempt!.errorMessage).not.toContain(wrong);
  });

  it('the password is never returned, logged or audited; a PATCH keeps it unless given and re-validates', async () => {
    const password = decodeURIComponent(rabbitUrl.password);
    const queue = `apipay.test.brokers.${randomUUID().slice(0, 8)}`;
    const endpoint = await createBrokerEndpoint('rabbitmq', rabbitFields(queue));
    expect(endpoint.text).not.toContain(password);
    const got = await call('GET', `/webhook-endpoints/${endpoint.id}`);
    const listed = await call('GET', `/webhook-endpoints?merchant_account=${endpoint.account}`);
    expect(got.json.destination).not.toHaveProperty('password');
    const patched = await call('PATCH', `/webhook-endpoints/${endpoint.id}`, { destination: { routing_key: `${queue}.v2` } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.json.destination.routing_key).toBe(`${queue}.v2`);
    const bad = await call('PATCH', `/webhook-endpoints/${endpoint.id}`, { destination: { port: '99999', colour: 'red' } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.details.issues.map((i: { field: string }) => i.field).sort()).toEqual([
      'destination.colour',
      'destination.port',
    ]);
    const url = await call('PATCH', `/webhook-endpoints/${endpoint.id}`, { url: 'https://example.com/hook' });
    expect(url.status).toBe(400);
    // Still publishes with the kept password.
    await channel.assertQueue(`${queue}.v2`, { durable: false });
    const d = await insertDelivery(world.db, { endpointId: endpoint.id, merchantAccount: endpoint.account });
    expect((await perDelivery(d.deliveryId)).outcome).toBe('delivered');
    await channel.deleteQueue(`${queue}.v2`);

    const audits = await world.db.select().from(auditEvents).where(eq(auditEvents.targetId, endpoint.id));
    expect(audits.map((a) => a.action).sort()).toEqual(['endpoint.create', 'endpoint.update']);
    for (const text of [got.text, listed.text, patched.text, JSON.stringify(audits), logText.join('')])
      expect(text).not.toContain(password);
    expect(audits.find((a) => a.action === 'endpoint.create')!.after).toMatchObject({
      destination_type: 'rabbitmq',
      destination_credentials: 'set',
    });
  });
});

describe('M11 Kafka destination', () => {
  it('produces to the merchant topic (key = event id, acks=all) in both delivery modes; a consumer verifies each message', async () => {
    const topic = await world.topic('brokers-dest');
    const endpoint = await createBrokerEndpoint('kafka', { brokers: KAFKA_BROKERS.join(','), topic });
    expect(endpoint.json).toMatchObject({
      type: 'kafka',
      url: `kafka://${KAFKA_BROKERS.join(',')}/${topic}`,
      destination: { topic, sasl_mechanism: 'none' },
    });
    const sent: Array<{ eventId: string; body: Buffer }> = [];
    for (const mode of ['per-delivery', 'batched'] as const) {
      const d = await insertDelivery(world.db, { endpointId: endpoint.id, merchantAccount: endpoint.account });
      if (mode === 'per-delivery') expect((await perDelivery(d.deliveryId)).outcome).toBe('delivered');
      else expect(await batched(d, endpoint)).toMatchObject({ delivered: 1, handedOff: 0 });
      expect((await attemptsOf(d.deliveryId))[0]).toMatchObject({
        succeeded: true,
        responseExcerpt: 'acknowledged by all in-sync replicas',
      });
      sent.push(d);
    }
    const kafka = new kafkajs.Kafka({ clientId: 'brokers-test', brokers: KAFKA_BROKERS, logLevel: kafkajs.logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: `brokers-test-${randomUUID()}` });
    const received: kafkajs.KafkaMessage[] = [];
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void received.push(message) });
    try {
      await waitFor(() => received.length >= 2, 20_000);
    } finally {
      await consumer.disconnect();
    }
    expect(received.map((m) => m.key!.toString())).toEqual(sent.map((s) => s.eventId));
    received.forEach((m, i) => {
      expect(m.value!.equals(sent[i]!.body)).toBe(true);
      expect(verify(endpoint.secret, m.value!, m.headers ?? {}).id).toBe(sent[i]!.eventId);
    });
  });

  it('a cluster that does not answer is a failed attempt (connection) on the retry schedule, never a lost event', async () => {
    const relay = await relayTo('127.0.0.1', 1); // never opened: refused
    const endpoint = await createBrokerEndpoint('kafka', { brokers: `127.0.0.1:${relay.port}`, topic: 'apipay.test.nowhere' });
    const d = await insertDelivery(world.db, { endpointId: endpoint.id, merchantAccount: endpoint.account });
    expect(await perDelivery(d.deliveryId)).toMatchObject({ outcome: 'failed', errorKind: 'connection' });
    expect((await deliveryOf(d.deliveryId)).status).toBe('RETRYING');
  });
});

describe('M11 destinations in the admin API', () => {
  it('validation errors name each destination field; a broker host goes through O15 like a URL', async () => {
    const res = await call('POST', '/webhook-endpoints', {
      merchant_account: merchant(),
      type: 'kafka',
      destination: { topic: 'bad topic!' },
      event_types: ['*'],
      livemode: false,
    });
    expect(res.status).toBe(400);
    expect(res.json.error.details.issues.map((i: { field: string }) => i.field).sort()).toEqual([
      'destination.brokers',
      'destination.topic',
    ]);
    const noUrl = await call('POST', '/webhook-endpoints', {
      merchant_account: merchant(),
      type: 'rabbitmq',
      url: 'https://example.com',
      event_types: ['*'],
      livemode: false,
    });
    expect(noUrl.status).toBe(400);
    // A strict profile refuses a loopback broker, as it refuses a loopback URL.
    const strict = createApp({
      db: world.db,
      temporal: world.temporal.client,
      profile: testProfile({ outbound: { allow_insecure_urls: false } }),
      env: { ADMIN_TOKEN: TEST_ADMIN_TOKEN, SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY.toString('base64') },
      taskQueues: world.taskQueues,
      logger,
      readiness: {},
    });
    const unsafe = await strict.request('/admin/v1/webhook-endpoints', {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        merchant_account: merchant(),
        type: 'kafka',
        destination: { brokers: '127.0.0.1:9092', topic: 't' },
        event_types: ['*'],
        livemode: false,
      }),
    });
    expect(unsafe.status).toBe(400);
    expect(await unsafe.text()).toMatch(/loopback, private or link-local/);
  });

  it('GET /destination-types describes each type from its one description, secret fields marked', async () => {
    const res = await call('GET', '/destination-types');
    expect(res.status).toBe(200);
    const rabbitmq = res.json.data.find((t: { type: string }) => t.type === 'rabbitmq');
    expect(rabbitmq.fields.find((f: { name: string }) => f.name === 'password')).toMatchObject({ secret: true, required: true });
    expect(res.json.data.map((t: { type: string }) => t.type)).toEqual(['http', 'rabbitmq', 'kafka']);
  });
});
