// O18 on the time-skipping test server with the real activities, PostgreSQL and a real local merchant: 410 Gone
// disables the endpoint at once (reason gone, endpoint.disabled announced, enable brings it back); Retry-After in
// seconds or as an HTTP date on 503 and 429 makes the next timer no shorter than asked and no longer than the
// schedule's last wait, recorded on the attempt; a 429 lowers the endpoint's rate instead of starting a failure streak.
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeliveryActivities } from '../../src/activities/delivery.js';
import { createDatabase, type Database } from '../../src/db/client.js';
import {
  deliveries,
  deliveryAttempts,
  endpointStatusChanges,
  outboxEvents,
  webhookEndpoints,
} from '../../src/db/schema/index.js';
import { createEndpointService } from '../../src/outbound/endpoints.js';
import { DELIVERY_WORKFLOW, type DeliveryWorkflowInput } from '../../src/shared/outbound.js';
import { BOOTSTRAP_PRINCIPAL } from '../../src/access/roles.js';
import { TEST_DATABASE_URL, TEST_SECRETS_KEY } from '../helpers/env.js';
import { insertDelivery, insertEndpoint, startReceiver, uniqueMerchant, type Reply } from '../helpers/outbound.js';
import { testProfile } from '../helpers/profile.js';
import { createTimeSkippingEnv, startWorkers, testActivities, testLogger, uniqueTaskQueues } from '../helpers/temporal.js';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const SCHEDULE = [MINUTE, 5 * MINUTE, 30 * MINUTE];

let database: Database;
let env: TestWorkflowEnvironment;
let workers: { stop: () => Promise<void> };
const taskQueues = uniqueTaskQueues('signals-wf');
const profile = testProfile({ outbound: { retry_schedule: ['1m', '5m', '30m'] } });

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 4 });
  env = await createTimeSkippingEnv();
  workers = await startWorkers({
    connection: env.nativeConnection,
    taskQueues,
    activities: testActivities(database.db, { profile }),
  });
});
afterAll(async () => {
  await workers?.stop();
  await env?.teardown();
  await database?.close();
});

/** The durations of the workflow's timers, in ms, as its history recorded them. */
async function timersOf(workflowId: string): Promise<number[]> {
  const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? [])
    .map((e) => e.timerStartedEventAttributes?.startToFireTimeout)
    .filter((t): t is NonNullable<typeof t> => t != null)
    .map((t) => Number(t.seconds ?? 0) * 1000 + Math.round((t.nanos ?? 0) / 1e6));
}

async function deliverTo(label: string, replies: (index: number) => Reply) {
  const receiver = await startReceiver((_r, index) => replies(index));
  try {
    const merchantAccount = uniqueMerchant(label);
    const endpoint = await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/hooks` });
    const { deliveryId } = await insertDelivery(database.db, { endpointId: endpoint.id, merchantAccount });
    const input: DeliveryWorkflowInput = { deliveryId, retryScheduleMs: SCHEDULE, priorAttempts: 0, reviewWindowMs: DAY };
    const handle = await env.client.workflow.start(DELIVERY_WORKFLOW, {
      taskQueue: taskQueues.delivery,
      workflowId: deliveryId,
      args: [input],
    });
    const result = await handle.result();
    const attempts = await database.db
      .select()
      .from(deliveryAttempts)
      .where(eq(deliveryAttempts.deliveryId, deliveryId))
      .orderBy(deliveryAttempts.attemptNumber);
    const [row] = await database.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, endpoint.id));
    return { result, attempts, endpoint: row!, posts: receiver.received.length, timers: await timersOf(deliveryId), deliveryId };
  } finally {
    await receiver.close();
  }
}

describe('O18 receiver signals in the delivery workflow', () => {
  it('O18 410 Gone disables the endpoint at once with reason gone and announces it; the rest of the schedule is not sent; enable brings it back', async () => {
    const { result, attempts, endpoint, posts, timers } = await deliverTo('gone', () => ({
      status: 410,
      body: 'this hook is gone',
    }));
    expect(posts).toBe(1);
    expect(result.status).toBe('FAILED');
    expect(timers.filter((t) => t >= MINUTE && t < DAY)).toEqual([]); // no retry timer: stopped at once
    expect(attempts.map((a) => [a.attemptNumber, a.responseStatus, a.errorKind])).toEqual([[1, 410, 'client_error']]);
    expect(endpoint).toMatchObject({ status: 'disabled', disabledReason: 'gone' });
    const changes = await database.db
      .select()
      .from(endpointStatusChanges)
      .where(eq(endpointStatusChanges.endpointId, endpoint.id));
    expect(changes.map((c) => [c.fromStatus, c.toStatus, c.reason, c.actor])).toEqual([
      ['enabled', 'disabled', 'gone', 'system'],
    ]);
    const [announced] = await database.db
      .select()
      .from(outboxEvents)
      .where(eq(outboxEvents.eventPublicId, changes[0]!.eventPublicId));
    expect(announced?.type).toBe('endpoint.disabled');

    const enabled = await createEndpointService({ db: database.db, secretsKey: TEST_SECRETS_KEY }).enable(
      BOOTSTRAP_PRINCIPAL,
      endpoint.id,
    );
    expect(enabled).toMatchObject({ status: 'enabled', disabledReason: null });
  });

  it('O18 Retry-After on 503 (seconds) and 429 (HTTP date) delays the next attempt to what was asked, capped by the last wait; shown on the attempt', async () => {
    const { result, attempts, timers, endpoint } = await deliverTo('retryafter', (index) => {
      if (index === 0) return { status: 503, headers: { 'retry-after': '7200' } }; // 2 h asked: capped at 30 min
      if (index === 1) return { status: 429, headers: { 'retry-after': new Date(Date.now() + 600_000).toUTCString() } }; // ~10 min > 5 min
      return { status: 200 };
    });
    expect(result).toEqual({ status: 'DELIVERED', attemptCount: 3, nextAttemptAt: null });
    expect(attempts.map((a) => [a.attemptNumber, a.responseStatus])).toEqual([
      [1, 503],
      [2, 429],
      [3, 200],
    ]);
    expect(attempts[0]!.retryAfterMs).toBe(7_200_000);
    expect(attempts[1]!.retryAfterMs).toBeGreaterThan(590_000);
    expect(attempts[1]!.retryAfterMs).toBeLessThanOrEqual(600_000);
    expect(attempts[2]!.retryAfterMs).toBeNull();
    const retryTimers = timers.filter((t) => t >= MINUTE);
    expect(retryTimers).toHaveLength(2);
    expect(retryTimers[0]).toBe(30 * MINUTE); // not the schedule's 1 min, not the 2 h asked
    expect(retryTimers[1]).toBe(attempts[1]!.retryAfterMs); // not the schedule's 5 min
    // The 429 lowered the rate (M5) for a while; it did not count as a failure of the streak (only the 503 did).
    expect(endpoint.backoffRatePerSecond).toBe(1);
    expect(endpoint.backoffUntil!.getTime()).toBeGreaterThan(Date.now() + 5 * 60_000);
  });

  it('O18 a 429 streak does not start the auto-disable streak; the endpoint is throttled meanwhile, and a 503 without Retry-After keeps the schedule', async () => {
    const receiver = await startReceiver((request) => (request.path.startsWith('/busy') ? { status: 429 } : { status: 503 }));
    try {
      const activities = createDeliveryActivities({
        db: database.db,
        profile: testProfile({ outbound: { auto_disable_after: '1ms' } }),
        logger: testLogger,
        secretsKey: TEST_SECRETS_KEY,
      });
      const merchantAccount = uniqueMerchant('busy');
      const busy = await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/busy` });
      const { deliveryId } = await insertDelivery(database.db, { endpointId: busy.id, merchantAccount });
      const at = Date.now() - DAY;
      for (const attemptNumber of [1, 2, 3]) {
        const r = await activities.attemptDelivery({
          deliveryId,
          attemptNumber,
          scheduledAt: at + attemptNumber * MINUTE,
          retryInMs: MINUTE,
          slotAt: 0,
        });
        expect(r).toMatchObject({ outcome: 'failed', responseStatus: 429, stopRetrying: false });
        expect(r.retryInMs).toBeUndefined(); // no Retry-After: the schedule's wait
      }
      const [row] = await database.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, busy.id));
      expect(row).toMatchObject({ status: 'enabled', failingSince: null, consecutiveFailures: 0, backoffRatePerSecond: 1 });
      // The same three answers as 503 with auto_disable_after 1 ms: disabled, as before.
      const down = await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/down` });
      const other = await insertDelivery(database.db, { endpointId: down.id, merchantAccount });
      const r = await activities.attemptDelivery({
        deliveryId: other.deliveryId,
        attemptNumber: 1,
        scheduledAt: at,
        retryInMs: MINUTE,
      });
      await activities.attemptDelivery({
        deliveryId: other.deliveryId,
        attemptNumber: 2,
        scheduledAt: at + MINUTE,
        retryInMs: MINUTE,
      });
      expect(r.responseStatus).toBe(503);
      const [downRow] = await database.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, down.id));
      expect(downRow!.status).toBe('disabled');
      const [d] = await database.db
        .select()
        .from(deliveries)
        .where(and(eq(deliveries.id, deliveryId)));
      expect(d!.status).toBe('RETRYING');
    } finally {
      await receiver.close();
    }
  });
});
