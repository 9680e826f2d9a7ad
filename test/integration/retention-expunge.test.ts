// O19 against the real PostgreSQL: an admin's expunge through the admin API (audited, idempotent), what stays and
// what goes, retry and recover of an expunged event answering 409 with why, an attempt that finds the body gone
// failing without a POST, and the retention sweep in bounded batches with its metric.
import { randomUUID } from 'node:crypto';
import { and, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeliveryActivities } from '../../src/activities/delivery.js';
import { createDatabase, type Database } from '../../src/db/client.js';
import { auditEvents, deliveries, deliveryAttempts, events } from '../../src/db/schema/index.js';
import { registry } from '../../src/metrics/registry.js';
import { sweepRetention } from '../../src/outbound/retention-sweep.js';
import { newId } from '../../src/shared/ids.js';
import { testApp } from '../helpers/app.js';
import { TEST_ADMIN_TOKEN, TEST_APP_DATABASE_URL, TEST_DATABASE_URL, TEST_SECRETS_KEY } from '../helpers/env.js';
import { insertEndpoint, startReceiver, uniqueMerchant } from '../helpers/outbound.js';
import { testProfile } from '../helpers/profile.js';
import { connectDevServer, testLogger, uniqueTaskQueues } from '../helpers/temporal.js';

const DAY = 86_400_000;
let database: Database;
let temporal: Awaited<ReturnType<typeof connectDevServer>>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const auth = { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' };

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 4 });
  temporal = await connectDevServer();
  receiver = await startReceiver(() => ({ status: 200 }));
});
afterAll(async () => {
  await receiver.close();
  await temporal.close();
  await database.close();
});

/** A FAILED delivery of one event with one attempt that kept a response excerpt. */
async function failedDelivery(endpointId: string, merchantAccount: string, receivedAt = new Date()) {
  const eventId = `evt_${randomUUID().replaceAll('-', '')}`;
  await database.db.insert(events).values({
    eventPublicId: eventId,
    merchantAccount,
    type: 'payment.succeeded',
    livemode: false,
    createdUnix: 1_780_000_000,
    body: Buffer.from(JSON.stringify({ id: eventId, data: { object: { amount: 1250, email: 'person@example.com' } } })),
    receivedAt,
  });
  const deliveryId = newId('whd');
  await database.db.insert(deliveries).values({
    id: deliveryId,
    eventPublicId: eventId,
    endpointId,
    merchantAccount,
    status: 'FAILED',
    attemptCount: 1,
    failedAt: new Date(),
  });
  await database.db.insert(deliveryAttempts).values({
    deliveryId,
    attemptNumber: 1,
    startedAt: new Date(),
    responseStatus: 500,
    latencyMs: 7,
    succeeded: false,
    errorKind: 'server_error',
    responseExcerpt: 'merchant said person@example.com',
  });
  return { eventId, deliveryId };
}

describe('O19 retention and expunge', () => {
  it('O19 an admin expunges one event: body and excerpts go, ids, statuses and times stay; audited; retry and recover answer 409 with why', async () => {
    const app = testApp({ db: database.db, temporal: temporal.client, taskQueues: uniqueTaskQueues('expunge') });
    const merchantAccount = uniqueMerchant('expunge');
    const endpoint = await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/hooks` });
    const { eventId, deliveryId } = await failedDelivery(endpoint.id, merchantAccount);

    const res = await app.request(`/admin/v1/events/${eventId}/expunge`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ reason: 'GDPR erasure request 42' }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      id: eventId,
      object: 'event_expunge',
      reason: 'operator: GDPR erasure request 42',
      already_expunged: false,
    });

    const shown = (await (await app.request(`/admin/v1/events/${eventId}`, { headers: auth })).json()) as Record<string, unknown>;
    expect(shown).toMatchObject({
      id: eventId,
      type: 'payment.succeeded',
      body: null,
      expunge_reason: 'operator: GDPR erasure request 42',
    });
    expect(shown.expunged_at).toEqual(expect.any(String));
    expect(shown.deliveries).toEqual([expect.objectContaining({ id: deliveryId, status: 'FAILED', attempt_count: 1 })]);
    const [attempt] = await database.db.select().from(deliveryAttempts).where(eq(deliveryAttempts.deliveryId, deliveryId));
    expect(attempt).toMatchObject({ responseStatus: 500, latencyMs: 7, errorKind: 'server_error', responseExcerpt: null });
    const [row] = await database.db.select().from(events).where(eq(events.eventPublicId, eventId));
    expect(row!.body).toBeNull();

    const audited = await database.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.targetId, eventId), eq(auditEvents.action, 'event.expunge')));
    expect(audited).toHaveLength(1);
    expect(audited[0]).toMatchObject({
      actorKeyId: 'bootstrap',
      targetType: 'event',
      after: expect.objectContaining({ reason: 'GDPR erasure request 42' }),
    });

    const again = await app.request(`/admin/v1/events/${eventId}/expunge`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ reason: 'twice' }),
    });
    expect(((await again.json()) as { already_expunged: boolean }).already_expunged).toBe(true);
    expect(
      await database.db
        .select()
        .from(auditEvents)
        .where(and(eq(auditEvents.targetId, eventId), eq(auditEvents.action, 'event.expunge'))),
    ).toHaveLength(1);

    const retry = await app.request(`/admin/v1/webhook-deliveries/${deliveryId}/retry`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ reason: 'try' }),
    });
    expect(retry.status).toBe(409);
    expect(((await retry.json()) as { error: { message: string } }).error.message).toMatch(/expunged .*cannot be sent again/);
    const recover = await app.request(`/admin/v1/webhook-endpoints/${endpoint.id}/recover`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ since: new Date(Date.now() - DAY).toISOString() }),
    });
    expect(recover.status).toBe(409);
    expect(((await recover.json()) as { error: { message: string } }).error.message).toMatch(/expunged events/);

    const missing = await app.request(`/admin/v1/events/evt_nosuchevent/expunge`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ reason: 'x' }),
    });
    expect(missing.status).toBe(404);
  });

  it('O19 an attempt of an expunged event fails non-retryably with why, and nothing is POSTed', async () => {
    const merchantAccount = uniqueMerchant('expatt');
    const endpoint = await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/expunged` });
    const { eventId, deliveryId } = await failedDelivery(endpoint.id, merchantAccount);
    await database.db
      .update(events)
      .set({ body: null, expungedAt: new Date(), expungeReason: 'retention' })
      .where(eq(events.eventPublicId, eventId));
    const activities = createDeliveryActivities({
      db: database.db,
      profile: testProfile(),
      logger: testLogger,
      secretsKey: TEST_SECRETS_KEY,
    });
    const before = receiver.received.length;
    await expect(
      activities.attemptDelivery({ deliveryId, attemptNumber: 2, scheduledAt: Date.now(), retryInMs: 60_000 }),
    ).rejects.toMatchObject({
      name: 'EventExpungedError',
      message: expect.stringMatching(/expunged .*\(retention\)/),
    });
    expect(receiver.received.length).toBe(before);
  });

  it('O19 the retention sweep expunges bodies older than retention.bodies in bounded batches and counts them; younger ones stay', async () => {
    const merchantAccount = uniqueMerchant('sweep');
    const endpoint = await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/sweep` });
    const old = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        failedDelivery(endpoint.id, merchantAccount, new Date(Date.now() - 91 * DAY - i * 1000)),
      ),
    );
    const young = await failedDelivery(endpoint.id, merchantAccount, new Date(Date.now() - 89 * DAY));
    const counted = async () =>
      (await registry.getSingleMetric('apipay_outbound_bodies_expunged_total')!.get()).values[0]?.value ?? 0;
    const metricBefore = await counted();
    const retention = testProfile().retention;
    expect(retention.bodies).toBe(90 * DAY); // the default
    // As the application role (A6): it may blank an event's body and nothing else of the row.
    const app = createDatabase(TEST_APP_DATABASE_URL, { max: 2 });
    const swept = await sweepRetention(app.db, { ...retention, sweep_batch: 2 });
    await expect(app.sql`update events set type = type where false`).rejects.toThrow(/permission denied for table events/);
    await app.close();
    expect(swept).toBeGreaterThanOrEqual(5);
    expect((await counted()) - metricBefore).toBe(swept);
    const rows = await database.db
      .select({ id: events.eventPublicId, body: events.body, reason: events.expungeReason })
      .from(events)
      .where(inArray(events.eventPublicId, [...old.map((o) => o.eventId), young.eventId]));
    for (const o of old) expect(rows.find((r) => r.id === o.eventId)).toMatchObject({ body: null, reason: 'retention' });
    expect(rows.find((r) => r.id === young.eventId)!.body).not.toBeNull();
    expect(await sweepRetention(database.db, { ...retention, sweep_batch: 2 })).toBe(0);
  });
});
