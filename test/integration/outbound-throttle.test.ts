// M5 on the Temporal dev server and PostgreSQL (real time: a rate is measured): 30 deliveries started at once to an
// endpoint limited to 5 requests per second all arrive, no one-second window holds more than the limit (+1 for timer
// jitter), the whole takes at least what the rate allows, and waiting for a slot counts no attempt.
import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { deliveries, deliveryAttempts, webhookEndpoints } from '../../src/db/schema/index.js';
import { startDeliveryWorkflows } from '../../src/outbound/delivery-start.js';
import { TEST_DATABASE_URL } from '../helpers/env.js';
import { insertDelivery, insertEndpoint, startReceiver, uniqueMerchant, waitFor } from '../helpers/outbound.js';
import { testProfile } from '../helpers/profile.js';
import { connectDevServer, startWorkers, testActivities, uniqueTaskQueues } from '../helpers/temporal.js';

const LIMIT = 5;
const COUNT = 30;
const profile = testProfile();

let database: Database;
let temporal: Awaited<ReturnType<typeof connectDevServer>>;
let workers: { stop: () => Promise<void> };
const taskQueues = uniqueTaskQueues('throttle');

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 8 });
  temporal = await connectDevServer();
  workers = await startWorkers({ connection: temporal.native, taskQueues, activities: testActivities(database.db, { profile }) });
});
afterAll(async () => {
  await workers?.stop();
  await temporal?.close();
  await database?.close();
});

/** The most requests inside any window of `windowMs` (sliding, anchored at each request). */
export function busiestWindow(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= windowMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

describe('M5 per-endpoint throttle', () => {
  it(`M5 ${COUNT} deliveries to an endpoint limited to ${LIMIT}/s: all arrive, never more than the limit in a second, no attempt counted for waiting`, async () => {
    const receiver = await startReceiver();
    try {
      const merchantAccount = uniqueMerchant('m5');
      const endpoint = await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/throttled` });
      await database.db.update(webhookEndpoints).set({ rateLimitPerSecond: LIMIT }).where(eq(webhookEndpoints.id, endpoint.id));
      const ids: string[] = [];
      for (let i = 0; i < COUNT; i++)
        ids.push((await insertDelivery(database.db, { endpointId: endpoint.id, merchantAccount })).deliveryId);
      await startDeliveryWorkflows(
        { temporal: temporal.client, taskQueue: taskQueues.delivery, profile },
        ids.map((deliveryId) => ({ deliveryId, endpointId: endpoint.id, merchantAccount, eventType: 'payment.succeeded' })),
      );
      await waitFor(
        async () =>
          (await database.db.select().from(deliveries).where(inArray(deliveries.id, ids))).every((d) => d.status === 'DELIVERED'),
        60_000,
        'every delivery DELIVERED',
      );
      const times = receiver.received.map((r) => r.at);
      expect(times).toHaveLength(COUNT);
      expect(busiestWindow(times, 1000), 'requests in the busiest second').toBeLessThanOrEqual(LIMIT + 1);
      const spanMs = Math.max(...times) - Math.min(...times);
      expect(spanMs, 'the first to the last request').toBeGreaterThanOrEqual(((COUNT - 1) * 1000 * 0.9) / LIMIT);
      const attempts = await database.db.select().from(deliveryAttempts).where(inArray(deliveryAttempts.deliveryId, ids));
      expect(attempts).toHaveLength(COUNT); // one attempt each: the wait for a slot is not an attempt
      const rows = await database.db.select().from(deliveries).where(inArray(deliveries.id, ids));
      expect(rows.every((d) => d.attemptCount === 1)).toBe(true);
      // At most one durable timer per delivery for its slot; most of them waited in one.
      const timers = await Promise.all(
        ids.map(
          async (id) =>
            ((await temporal.client.workflow.getHandle(id).fetchHistory()).events ?? []).filter(
              (e) => e.timerStartedEventAttributes,
            ).length,
        ),
      );
      expect(Math.max(...timers)).toBe(1);
      expect(timers.filter((t) => t === 1).length).toBeGreaterThanOrEqual(COUNT / 2);
    } finally {
      await receiver.close();
    }
  });
});
