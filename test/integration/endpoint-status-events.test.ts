// M4 on the real PostgreSQL, Temporal and the dispatcher's batch handler: an O13 auto-disable (and an operator's
// enable) is recorded in the admin feed and written to the outbox in the same transaction; its envelope, fanned
// out by the dispatcher, reaches the merchant's other enabled endpoints subscribed to it as a signed POST.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { endpointStatusChanges, outboxEvents } from '../../src/db/schema/index.js';
import { createOutboundBatchHandler } from '../../src/dispatcher/outbound-handler.js';
import { registry } from '../../src/metrics/registry.js';
import { ledgerAccounts, outboxEnvelope } from '../../src/outbox/envelope.js';
import { verify } from '../../src/signing/index.js';
import { callAs, createKey } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { TEST_ADMIN_TOKEN } from '../helpers/env.js';
import { insertDelivery, insertEndpoint, startReceiver, uniqueMerchant, waitFor } from '../helpers/outbound.js';
import { testProfile } from '../helpers/profile.js';
import { testActivities, testLogger } from '../helpers/temporal.js';
import { expectNoMore } from '../helpers/wait.js';
import type { TaskQueues } from '../../src/shared/task-queues.js';
import { useWorld, type World } from '../helpers/world.js';

const DAY = 24 * 3600 * 1000;
let taskQueues: TaskQueues; // the shared workers' queues (test/helpers/world.ts)
const profile = testProfile();
const merchant = uniqueMerchant('m4');
let database: Database;
let temporal: World['temporal'];
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let app: ReturnType<typeof testApp>;

const world = useWorld({ label: 'endpoint-status-events', workers: true });
beforeAll(async () => {
  database = world.database;
  temporal = world.temporal;
  receiver = await startReceiver((request) => ({ status: request.path === '/failing' ? 500 : 200 }));
  taskQueues = world.taskQueues;
  app = testApp({ db: database.db, temporal: temporal.client, taskQueues });
});
afterAll(async () => {
  await receiver?.close();
});

/** What the relay would publish for an outbox row, handed to the dispatcher as a Kafka batch of one. */
async function dispatchOutboxRow(eventId: string) {
  const [row] = await database.db.select().from(outboxEvents).where(eq(outboxEvents.eventPublicId, eventId));
  const { key, envelope } = outboxEnvelope(row!, ledgerAccounts(profile));
  const handler = createOutboundBatchHandler({
    db: database.db,
    temporal: temporal.client,
    taskQueue: taskQueues.delivery,
    profile,
    logger: testLogger,
  });
  const message = {
    topic: 'm4',
    partition: 0,
    offset: '0',
    key: Buffer.from(key),
    value: Buffer.from(JSON.stringify(envelope)),
    timestamp: '0',
    headers: {},
  };
  await handler({ topic: 'm4', partition: 0, lag: 0, messages: [message] });
  return row!;
}

const postsTo = (path: string, type: string) =>
  receiver.received.filter((r) => r.path === path && JSON.parse(r.body.toString('utf8')).type === type);
const metric = async (to: string, actor: string) =>
  (await registry.getSingleMetric('apipay_outbound_endpoint_status_changes_total')!.get()).values.find(
    (v) => v.labels.to === to && v.labels.actor === actor,
  )?.value ?? 0;

describe('M4 disables and enables are announced', () => {
  it('M4 an O13 auto-disable: feed row, outbox row in the same transaction, metric, and a signed endpoint.disabled to the other subscribed endpoint only; enabling announces endpoint.enabled', async () => {
    const failing = await insertEndpoint(database.db, {
      merchantAccount: merchant,
      url: `${receiver.url}/failing`,
      eventTypes: ['payment.succeeded'],
    });
    const watcher = await insertEndpoint(database.db, {
      merchantAccount: merchant,
      url: `${receiver.url}/watcher`,
      eventTypes: ['endpoint.disabled', 'endpoint.enabled'],
    });
    await insertEndpoint(database.db, {
      merchantAccount: merchant,
      url: `${receiver.url}/unsubscribed`,
      eventTypes: ['payment.succeeded'],
    });
    await insertEndpoint(database.db, {
      merchantAccount: uniqueMerchant('m4-other'),
      url: `${receiver.url}/stranger`,
      eventTypes: ['*'],
    });
    const before = await metric('disabled', 'system');

    // Two failed attempts 7 days apart (workflow time): the second disables the endpoint (O13).
    const { deliveryId } = await insertDelivery(database.db, { endpointId: failing.id, merchantAccount: merchant });
    const start = Date.now() - 8 * DAY;
    const activities = testActivities(database.db);
    expect(
      (await activities.attemptDelivery({ deliveryId, attemptNumber: 1, scheduledAt: start, retryInMs: 60_000 })).stopRetrying,
    ).toBe(false);
    expect(
      (await activities.attemptDelivery({ deliveryId, attemptNumber: 2, scheduledAt: start + 7 * DAY + 1, retryInMs: 300_000 }))
        .stopRetrying,
    ).toBe(true);

    const [change] = await database.db
      .select()
      .from(endpointStatusChanges)
      .where(eq(endpointStatusChanges.endpointId, failing.id));
    expect(change).toMatchObject({ fromStatus: 'enabled', toStatus: 'disabled', actor: 'system', merchantAccount: merchant });
    expect(change!.reason).toMatch(/^auto-disabled: every attempt failed since/);
    expect(await metric('disabled', 'system')).toBe(before + 1);

    // The admin feed and the endpoint's detail show it.
    const feed = await callAs(app, TEST_ADMIN_TOKEN, 'GET', `/endpoint-status-changes?endpoint_id=${failing.id}`);
    expect(feed.status).toBe(200);
    expect(feed.json.data).toEqual([
      expect.objectContaining({ id: change!.id, to_status: 'disabled', actor: 'system', event_id: change!.eventPublicId }),
    ]);
    const detail = await callAs(app, TEST_ADMIN_TOKEN, 'GET', `/webhook-endpoints/${failing.id}`);
    expect(detail.json).toMatchObject({ status: 'disabled', disabled_reason: change!.reason });
    expect(detail.json.disabled_at).not.toBeNull();
    // A merchant key sees its own account's changes, another merchant none of them.
    const own = await createKey(app, 'merchant', merchant, `m4-${merchant}`);
    const other = await createKey(app, 'merchant', uniqueMerchant('m4-nosy'), 'm4-nosy');
    expect(
      (await callAs(app, own.token, 'GET', '/endpoint-status-changes')).json.data.map((c: { id: string }) => c.id),
    ).toContain(change!.id);
    expect((await callAs(app, other.token, 'GET', '/endpoint-status-changes?limit=100')).text).not.toContain(failing.id);

    const disabledRow = await dispatchOutboxRow(change!.eventPublicId);
    expect(disabledRow).toMatchObject({ type: 'endpoint.disabled', merchantAccount: merchant, livemode: false });
    await waitFor(() => postsTo('/watcher', 'endpoint.disabled').length >= 1, 30_000, 'endpoint.disabled at the watcher');
    const [post] = postsTo('/watcher', 'endpoint.disabled');
    expect(() => verify(post!.body, String(post!.headers['apipay-signature']), [watcher.secret])).not.toThrow();
    expect(JSON.parse(post!.body.toString('utf8'))).toMatchObject({
      id: change!.eventPublicId,
      account: merchant,
      data: {
        object: {
          id: failing.id,
          object: 'webhook_endpoint',
          status: 'disabled',
          previous_status: 'enabled',
          changed_by: 'system',
          reason: change!.reason,
        },
      },
    });
    await expectNoMore(
      () => receiver.received.filter((r) => r.path !== '/watcher' && r.path !== '/failing').length,
      0,
      1_000,
      'POSTs to unsubscribed or other accounts’ endpoints',
    );

    // Re-enabling by an operator: endpoint.enabled, with the operator as actor; enabling again changes nothing.
    expect((await callAs(app, TEST_ADMIN_TOKEN, 'POST', `/webhook-endpoints/${failing.id}/enable`)).status).toBe(200);
    expect((await callAs(app, TEST_ADMIN_TOKEN, 'POST', `/webhook-endpoints/${failing.id}/enable`)).status).toBe(200);
    const changes = await database.db
      .select()
      .from(endpointStatusChanges)
      .where(eq(endpointStatusChanges.endpointId, failing.id));
    expect(changes.map((c) => [c.toStatus, c.actor])).toEqual([
      ['disabled', 'system'],
      ['enabled', 'operator:ADMIN_TOKEN'],
    ]);
    const enabled = changes[1]!;
    expect(await dispatchOutboxRow(enabled.eventPublicId)).toMatchObject({ type: 'endpoint.enabled' });
    await waitFor(() => postsTo('/watcher', 'endpoint.enabled').length >= 1, 30_000, 'endpoint.enabled at the watcher');
    expect(JSON.parse(postsTo('/watcher', 'endpoint.enabled')[0]!.body.toString('utf8'))).toMatchObject({
      id: enabled.eventPublicId,
      data: { object: { id: failing.id, status: 'enabled', previous_status: 'disabled', changed_by: 'operator', reason: null } },
    });
  }, 120_000);

  it('M4 an operator disable through the admin API is recorded and announced too, in the change’s transaction', async () => {
    const endpoint = await insertEndpoint(database.db, {
      merchantAccount: merchant,
      url: `${receiver.url}/manual`,
      eventTypes: ['*'],
    });
    const res = await callAs(app, TEST_ADMIN_TOKEN, 'POST', `/webhook-endpoints/${endpoint.id}/disable`, {
      reason: 'merchant asked',
    });
    expect(res.status).toBe(200);
    const [change] = await database.db
      .select()
      .from(endpointStatusChanges)
      .where(eq(endpointStatusChanges.endpointId, endpoint.id));
    expect(change).toMatchObject({ toStatus: 'disabled', reason: 'merchant asked', actor: 'operator:ADMIN_TOKEN' });
    const [row] = await database.db.select().from(outboxEvents).where(eq(outboxEvents.eventPublicId, change!.eventPublicId));
    expect(row).toMatchObject({ type: 'endpoint.disabled', merchantAccount: merchant, publishedAt: null });
  });
});
