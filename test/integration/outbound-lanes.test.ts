// M2 on the Temporal dev server and PostgreSQL: an endpoint that hangs until the request timeout does not take the
// attempt slots of a healthy one. The worker has 4 slots; 16 deliveries to the hanging endpoint are started first,
// then 8 to a healthy one: each healthy delivery arrives well inside one request timeout, while the hanging one's
// attempts run in the slow lane (its own task queue and slots) and are recorded as timeouts.
import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { deliveries, deliveryAttempts, webhookEndpoints } from '../../src/db/schema/index.js';
import { startDeliveryWorkflows } from '../../src/outbound/delivery-start.js';
import { createWorkers, runWorkers } from '../../src/temporal-workers/build.js';
import { TEST_DATABASE_URL, TEST_SECRETS_KEY, WORKFLOW_BUNDLE_PATH } from '../helpers/env.js';
import { insertDelivery, insertEndpoint, startReceiver, uniqueMerchant, waitFor } from '../helpers/outbound.js';
import { testProfile } from '../helpers/profile.js';
import { connectDevServer, testActivities, uniqueTaskQueues, terminateWorkflows } from '../helpers/temporal.js';

const TIMEOUT_MS = 8_000;
const profile = testProfile({
  outbound: {
    request_timeout: `${TIMEOUT_MS}ms`,
    retry_schedule: ['1h'], // a failed attempt parks; the test terminates what is left
    lanes: { slow_after_failures: 3, max_in_flight_per_endpoint: 2, slow_attempt_after: '500ms' },
  },
});

let database: Database;
let temporal: Awaited<ReturnType<typeof connectDevServer>>;
const taskQueues = uniqueTaskQueues('lanes');
const stops: (() => Promise<unknown>)[] = [];
const started: string[] = [];

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 8 });
  temporal = await connectDevServer();
  const workers = await createWorkers({
    connection: temporal.native,
    taskQueues,
    activities: testActivities(database.db, { profile, secretsKey: TEST_SECRETS_KEY }),
    workflowBundle: { codePath: WORKFLOW_BUNDLE_PATH },
    tuning: { maxConcurrentActivityTaskExecutions: 4, maxConcurrentLocalActivityExecutions: 4 },
    slowLaneActivities: 4,
  });
  const running = runWorkers(workers);
  stops.push(async () => {
    for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
    await running;
  });
});
afterAll(async () => {
  await terminateWorkflows(temporal.client, started);
  for (const stop of stops.reverse()) await stop().catch(() => {});
  await temporal?.close();
  await database?.close();
});

async function deliveriesTo(endpointId: string, merchantAccount: string, count: number) {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await insertDelivery(database.db, { endpointId, merchantAccount })).deliveryId);
  return ids;
}

const start = (ids: string[], endpointId: string, merchantAccount: string) => {
  started.push(...ids);
  return startDeliveryWorkflows(
    { temporal: temporal.client, taskQueue: taskQueues.delivery, profile },
    ids.map((deliveryId) => ({ deliveryId, endpointId, merchantAccount, eventType: 'payment.succeeded' })),
  );
};

describe('M2 a hanging endpoint never takes a healthy endpoint’s attempt slots', () => {
  it('M2 healthy deliveries arrive inside one request timeout while 16 attempts to a hanging endpoint are in flight or queued', async () => {
    const hanging = await startReceiver(() => ({ status: 200, delayMs: 60_000 }));
    const healthy = await startReceiver();
    stops.push(
      () => hanging.close(),
      () => healthy.close(),
    );
    const slowMerchant = uniqueMerchant('m2slow');
    const okMerchant = uniqueMerchant('m2ok');
    const slowEndpoint = await insertEndpoint(database.db, { merchantAccount: slowMerchant, url: `${hanging.url}/hang` });
    const okEndpoint = await insertEndpoint(database.db, { merchantAccount: okMerchant, url: `${healthy.url}/ok` });

    const slowIds = await deliveriesTo(slowEndpoint.id, slowMerchant, 16);
    const okIds = await deliveriesTo(okEndpoint.id, okMerchant, 8);
    await start(slowIds, slowEndpoint.id, slowMerchant);
    await waitFor(() => hanging.received.length >= 2, 10_000, 'the hanging endpoint holding attempts');
    const okStart = Date.now();
    await start(okIds, okEndpoint.id, okMerchant);
    await waitFor(() => healthy.received.length >= okIds.length, 20_000, 'every healthy delivery');
    const healthyMs = Date.now() - okStart;
    // Without lanes the 4 slots are held by hanging attempts for TIMEOUT_MS each, 4 at a time, 16 of them queued first.
    expect(healthyMs, `healthy deliveries took ${healthyMs} ms`).toBeLessThan(TIMEOUT_MS);
    await waitFor(
      async () =>
        (await database.db.select().from(deliveries).where(inArray(deliveries.id, okIds))).every(
          (d) => d.status === 'DELIVERED' && d.attemptCount === 1,
        ),
      10_000,
      'healthy deliveries DELIVERED after one attempt',
    );

    // The hanging endpoint's attempts still happen, in the slow lane, each recorded once as a timeout.
    await waitFor(
      async () =>
        (await database.db.select().from(deliveryAttempts).where(inArray(deliveryAttempts.deliveryId, slowIds))).filter(
          (a) => a.errorKind === 'timeout',
        ).length >= 4,
      60_000,
      'hanging attempts recorded as timeouts',
    );
    const [endpoint] = await database.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, slowEndpoint.id));
    expect(endpoint!.consecutiveFailures).toBeGreaterThanOrEqual(3);
    const attempts = await database.db.select().from(deliveryAttempts).where(inArray(deliveryAttempts.deliveryId, slowIds));
    expect(
      attempts.every((a) => a.attemptNumber === 1),
      'a deferral is not an attempt',
    ).toBe(true);
    // All 16 were started at once: two took the normal lane's in-flight allowance, the rest went to the slow lane.
    let inSlowLane = 0;
    for (const id of slowIds) {
      const history = await temporal.client.workflow.getHandle(id).fetchHistory();
      if (
        (history.events ?? []).some(
          (e) => e.activityTaskScheduledEventAttributes?.taskQueue?.name === `${taskQueues.delivery}.slow-lane`,
        )
      )
        inSlowLane++;
    }
    expect(inSlowLane, 'hanging deliveries attempted in the slow lane').toBeGreaterThanOrEqual(12);
  });
});
