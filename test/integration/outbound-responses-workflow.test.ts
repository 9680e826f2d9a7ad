// R3 on the whole path: the delivery workflow on the time-skipping test server with the real activities, PostgreSQL
// and a real local merchant — a 2xx answer PostgreSQL could not store as text (reproduced on main: 4 POSTs, then
// FAILED), and an attempt row PostgreSQL will not write at all. Never two POSTs for one attempt number.
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { deliveries, deliveryAttempts } from '../../src/db/schema/index.js';
import { DELIVERY_WORKFLOW, type DeliveryWorkflowInput } from '../../src/shared/outbound.js';
import { TEST_DATABASE_URL } from '../helpers/env.js';
import { refuseAttemptWrites } from '../helpers/refuse-writes.js';
import { insertDelivery, insertEndpoint, startReceiver, uniqueMerchant, waitFor, type Reply } from '../helpers/outbound.js';
import { testProfile } from '../helpers/profile.js';
import { createTimeSkippingEnv, startWorkers, testActivities, uniqueTaskQueues } from '../helpers/temporal.js';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

let database: Database;
let env: TestWorkflowEnvironment;
let workers: { stop: () => Promise<void> };
const taskQueues = uniqueTaskQueues('responses-wf');

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 4 });
  env = await createTimeSkippingEnv();
  // R3: the lease of an attempt in flight (the unwritable case waits it out before recording it interrupted) is short.
  const profile = testProfile({ outbound: { request_timeout: '2s', in_flight_lease: '3s' } });
  workers = await startWorkers({ connection: env.nativeConnection, taskQueues, activities: testActivities(database.db, { profile }) });
});
afterAll(async () => {
  await workers?.stop();
  await env?.teardown();
  await database?.close();
});

async function deliverTo(label: string, reply: Reply, meanwhile?: (deliveryId: string) => Promise<() => Promise<void>>) {
  const receiver = await startReceiver(() => reply);
  try {
    const merchantAccount = uniqueMerchant(label);
    const endpoint = await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/hooks` });
    const { deliveryId } = await insertDelivery(database.db, { endpointId: endpoint.id, merchantAccount });
    const during = await meanwhile?.(deliveryId);
    const input: DeliveryWorkflowInput = { deliveryId, retryScheduleMs: [MINUTE, 5 * MINUTE, 30 * MINUTE], priorAttempts: 0, reviewWindowMs: DAY };
    const handle = await env.client.workflow.start(DELIVERY_WORKFLOW, { taskQueue: taskQueues.delivery, workflowId: deliveryId, args: [input] });
    await during?.();
    const result = await handle.result();
    const attempts = await database.db.select().from(deliveryAttempts).where(eq(deliveryAttempts.deliveryId, deliveryId)).orderBy(deliveryAttempts.attemptNumber);
    const [delivery] = await database.db.select().from(deliveries).where(eq(deliveries.id, deliveryId));
    return { result, attempts, delivery: delivery!, posts: receiver.received.length };
  } finally {
    await receiver.close();
  }
}

describe('R3 delivery workflow: an answer is recorded once', () => {
  it('R3 a 200 whose body holds a NUL byte is delivered once: one POST, one attempt with a storable excerpt', async () => {
    const { result, attempts, delivery, posts } = await deliverTo('r3nul', { status: 200, body: 'ok\u0000accepted' });
    expect(posts).toBe(1);
    expect(result).toEqual({ status: 'DELIVERED', attemptCount: 1, nextAttemptAt: null });
    expect(delivery).toMatchObject({ status: 'DELIVERED', attemptCount: 1 });
    expect(attempts.map((a) => [a.attemptNumber, a.succeeded, a.responseStatus, a.errorKind])).toEqual([[1, true, 200, null]]);
    expect(attempts[0]!.responseExcerpt).toBe('ok\uFFFDaccepted');
  });

  it('R3 while the attempt row cannot be written at all, attempt 1 is not POSTed again; once it can, it is recorded interrupted and attempt 2 delivers', async () => {
    const { result, attempts, posts } = await deliverTo('r3unwritable', { status: 200, body: 'fine' }, async (deliveryId) => {
      const refusal = await refuseAttemptWrites(database.sql, deliveryId, 'all');
      return async () => {
        try {
          // The first execution's two writes, then at least one Temporal retry that tried to record `interrupted`.
          await waitFor(async () => (await refusal.refusals()) >= 3, 30_000, 'a retried activity refused');
        } finally {
          await refusal.lift();
        }
      };
    });
    expect(result).toEqual({ status: 'DELIVERED', attemptCount: 2, nextAttemptAt: null });
    expect(attempts.map((a) => [a.attemptNumber, a.errorKind, a.succeeded])).toEqual([
      [1, 'interrupted', false],
      [2, null, true],
    ]);
    expect(posts).toBe(2); // one per attempt number
  });
});
