// M1 end to end on the real PostgreSQL, Temporal and Kafka: a provider webhook is reconciled into the ledger, the
// posting's outbox row is published by the relay (a real child process) to the outbound topic, the dispatcher fans
// it out, and the merchant receives one signed POST. The relay is SIGKILLed after Kafka acknowledged the envelope
// and before it marked the row: its restart publishes the same envelope again, and the dispatcher dedupes it.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveries, events, outboxEvents } from '../../src/db/schema/index.js';
import { createOutboundBatchHandler } from '../../src/dispatcher/outbound-handler.js';
import { runDispatcher } from '../../src/dispatcher/run.js';
import { createBatchConsumer, createKafkaAdmin, createProducer } from '../../src/kafka/kafkajs.js';
import { ledgerEventId, ledgerEventObject } from '../../src/ledger/announce.js';
import { registry } from '../../src/metrics/registry.js';
import { ledgerAccounts } from '../../src/outbox/envelope.js';
import { startOutboxRelay } from '../../src/outbox/relay.js';
import { writeOutbox } from '../../src/outbox/store.js';
import { verify } from '../../src/signing/index.js';
import { KAFKA_BROKERS } from '../helpers/env.js';
import { insertEndpoint, startReceiver, uniqueMerchant, waitFor } from '../helpers/outbound.js';
import { testProfile } from '../helpers/profile.js';
import { startProviderWorld, type ProviderWorld } from '../helpers/provider-world.js';
import { startWorkers, testActivities, testLogger, uniqueTaskQueues } from '../helpers/temporal.js';
import { expectNoMore } from '../helpers/wait.js';

const RELAY = new URL('../helpers/relay-process.ts', import.meta.url).pathname;
const admin = createKafkaAdmin({ brokers: KAFKA_BROKERS, clientId: 'outbox-relay-test' });
const merchant = uniqueMerchant('m1');
const topic = `apipay.test.outbox.${randomUUID().slice(0, 8)}`;
const taskQueues = uniqueTaskQueues('m1');
const stops: (() => Promise<unknown>)[] = [];
let world: ProviderWorld;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let endpoint: { id: string; secret: string };
/** Every envelope the dispatcher consumed, by evt_ id: proves the re-publish reached it. */
const consumed = new Map<string, number>();

beforeAll(async () => {
  world = await startProviderWorld('m1', { provider_query_backoff: { initial: '200ms', multiplier: 2, maximum: '1s' } });
  await admin.createTopic(topic, 1);
  receiver = await startReceiver();
  endpoint = await insertEndpoint(world.db, {
    merchantAccount: merchant,
    url: `${receiver.url}/hooks`,
    eventTypes: ['payment.settled', 'refund.settled'],
  });
  const workers = await startWorkers({ connection: world.temporal.native, taskQueues, activities: testActivities(world.db) });
  stops.push(() => workers.stop());
  const inner = createOutboundBatchHandler({
    db: world.db,
    temporal: world.temporal.client,
    taskQueue: taskQueues.delivery,
    profile: testProfile(),
    logger: testLogger,
  });
  const consumer = createBatchConsumer({
    brokers: KAFKA_BROKERS,
    clientId: 'outbox-relay-test',
    topic,
    groupId: `outbox-${randomUUID().slice(0, 8)}`,
  });
  await runDispatcher(consumer, async (batch) => {
    await inner(batch);
    for (const m of batch.messages) {
      const id = (JSON.parse(m.value!.toString('utf8')) as { id: string }).id;
      consumed.set(id, (consumed.get(id) ?? 0) + 1);
    }
  });
  stops.push(() => consumer.stop());
}, 60_000);

afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => {});
  await receiver?.close();
  await admin.close();
  await world?.close();
});

/** A relay child process; resolves once it printed `line`. */
function relay(config: { pauseForProvider?: string }): { child: ChildProcess; printed: (line: string) => Promise<unknown> } {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', RELAY, JSON.stringify({ topic, accounts: { [world.stripe]: merchant }, ...config })],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  stops.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  });
  const printed = (line: string) =>
    waitFor(
      () => {
        if (child.exitCode !== null) throw new Error(`relay exited with ${child.exitCode}`);
        return out.includes(line);
      },
      60_000,
      `relay to print ${line}`,
    );
  return { child, printed };
}

const postsOf = (eventId: string) =>
  receiver.received.filter((r) => r.path === '/hooks' && JSON.parse(r.body.toString('utf8')).id === eventId);

describe('M1 ledger postings become merchant events through the outbox', () => {
  it('M1 a provider webhook ends as one signed payment.settled POST to the merchant, across a relay SIGKILL between the Kafka ack and the row update', async () => {
    const reference = `pi_m1_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const first = relay({ pauseForProvider: world.stripe });
    await first.printed('ready');
    world.sandbox.upsertPayment(world.stripe, reference, { status: 'succeeded', amountMinor: 1999, currency: 'EUR' });
    const sent = await world.sandbox.sendWebhook(world.stripe, { type: 'payment.succeeded', reference });
    expect(sent.deliveries.map((d) => d.status)).toEqual([200]);
    const settled = await world.settled(world.stripe, sent.eventId);
    expect(settled.state).toBe('applied');
    const eventId = ledgerEventId(settled.ledgerTransactionId!);

    // Kafka has the envelope; the relay stops before marking the row, and is killed there.
    await first.printed('paused-after-ack');
    first.child.kill('SIGKILL');
    await new Promise((resolve) =>
      first.child.exitCode !== null || first.child.signalCode !== null ? resolve(null) : first.child.once('exit', resolve),
    );
    const [unmarked] = await world.db.select().from(outboxEvents).where(eq(outboxEvents.eventPublicId, eventId));
    expect(unmarked!.publishedAt).toBeNull();

    const second = relay({});
    await second.printed('ready');
    await waitFor(
      async () => (await world.db.select().from(outboxEvents).where(eq(outboxEvents.eventPublicId, eventId)))[0]?.publishedAt,
      60_000,
      'the row marked published',
    );
    await waitFor(() => (consumed.get(eventId) ?? 0) >= 2, 60_000, 'the dispatcher to consume both publishes');
    await waitFor(() => postsOf(eventId).length >= 1, 60_000, 'the merchant POST');

    const [post] = postsOf(eventId);
    expect(() => verify(post!.body, String(post!.headers['apipay-signature']), [endpoint.secret])).not.toThrow();
    const body = JSON.parse(post!.body.toString('utf8'));
    expect(body).toMatchObject({
      id: eventId,
      object: 'event',
      account: merchant,
      type: 'payment.settled',
      livemode: false,
      data: {
        object: {
          id: settled.ledgerTransactionId,
          object: 'ledger_transaction',
          kind: 'payment',
          amount_minor: '1999',
          currency: 'EUR',
          payment_reference: reference,
          provider: world.stripe,
          provider_event_id: sent.eventId,
          reconciliation_id: settled.id,
        },
      },
    });
    expect(await world.db.select().from(events).where(eq(events.eventPublicId, eventId))).toHaveLength(1);
    expect(await world.db.select().from(deliveries).where(eq(deliveries.eventPublicId, eventId))).toHaveLength(1);
    // Exactly once as an event: two publishes, one POST (this endpoint answers 2xx, so no retry either).
    await expectNoMore(() => postsOf(eventId).length, 1, 2_000, 'POSTs of the event');
  }, 180_000);

  it('M1 a refund posts refund.settled with the refunded amount; a replayed posting writes no second outbox row', async () => {
    const reference = `pi_m1r_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const running = relay({});
    await running.printed('ready');
    world.sandbox.upsertPayment(world.stripe, reference, { status: 'succeeded', amountMinor: 1000, currency: 'EUR' });
    const paid = await world.settled(
      world.stripe,
      (await world.sandbox.sendWebhook(world.stripe, { type: 'payment.succeeded', reference })).eventId,
    );
    world.sandbox.upsertPayment(world.stripe, reference, {
      status: 'refunded',
      amountMinor: 1000,
      currency: 'EUR',
      refunds: [{ id: 're_m1', amountMinor: 300 }],
    });
    const refund = async () =>
      world.settled(
        world.stripe,
        (
          await world.sandbox.sendWebhook(world.stripe, {
            type: 'refund.succeeded',
            reference,
            amountMinor: 300,
            objectId: 're_m1',
          })
        ).eventId,
      );
    const refunded = await refund();
    // The same refund reported again: a duplicate, no new posting, no new event.
    const again = await refund();
    expect([paid.state, refunded.state, again.state]).toEqual(['applied', 'applied', 'rejected']);
    const refundEvent = ledgerEventId(refunded.ledgerTransactionId!);
    await waitFor(() => postsOf(refundEvent).length >= 1, 60_000, 'the refund.settled POST');
    const body = JSON.parse(postsOf(refundEvent)[0]!.body.toString('utf8'));
    expect(body).toMatchObject({
      type: 'refund.settled',
      data: { object: { kind: 'refund', amount_minor: '300', provider_object_id: 're_m1', payment_reference: reference } },
    });
    const rows = await world.db.select().from(outboxEvents).where(eq(outboxEvents.provider, world.stripe));
    const forPayment = rows.filter((r) => (r.data as { payment_reference?: string }).payment_reference === reference);
    expect(forPayment.map((r) => r.type).sort()).toEqual(['payment.settled', 'refund.settled']);
  }, 180_000);

  it('M1 a relay cycle that fails after Kafka acknowledged marks nothing; after a backoff the same envelope is published again and stays one event', async () => {
    const account = uniqueMerchant('m1-fail');
    const eventId = `evt_${randomUUID().replaceAll('-', '')}`;
    await writeOutbox(world.db, {
      eventPublicId: eventId,
      type: 'payment.settled',
      merchantAccount: account,
      livemode: false,
      // O21: a complete ledger_transaction, or the dispatcher's catalog check quarantines it.
      data: ledgerEventObject(
        'ltx_test',
        new Date(),
        {
          idempotencyKey: 'k',
          kind: 'payment',
          provider: 'stripe',
          paymentReference: 'pay_ref_t',
          currency: 'EUR',
          amountMinor: 100n,
          entries: [],
        },
        {
          providerEventId: 'evt_t',
          reconciliationId: 'reconcile:stripe:evt_t',
          effectiveAt: new Date().toISOString(),
          actor: 'system',
        },
      ),
    });
    const failures = async () =>
      (await registry.getSingleMetric('apipay_outbox_publish_failures_total')!.get()).values[0]?.value ?? 0;
    const before = await failures();
    let crash = true;
    const running = startOutboxRelay({
      db: world.db,
      logger: testLogger,
      connect: () => createProducer({ brokers: KAFKA_BROKERS, clientId: 'outbox-relay-test-inproc' }),
      topic,
      accountOf: ledgerAccounts(testProfile()),
      scope: { merchantAccounts: [account] },
      idleMs: 50,
      maxBackoffMs: 500,
      afterPublish: async () => {
        if (!crash) return;
        crash = false;
        throw new Error('the process died after the ack');
      },
    });
    stops.push(() => running.stop());
    await waitFor(
      async () => (await world.db.select().from(outboxEvents).where(eq(outboxEvents.eventPublicId, eventId)))[0]?.publishedAt,
      30_000,
      'the row marked published',
    );
    expect(await failures()).toBe(before + 1);
    await waitFor(() => (consumed.get(eventId) ?? 0) >= 2, 30_000, 'both publishes at the dispatcher');
    expect(await world.db.select().from(events).where(eq(events.eventPublicId, eventId))).toHaveLength(1);
    await running.stop();
  }, 60_000);
});
