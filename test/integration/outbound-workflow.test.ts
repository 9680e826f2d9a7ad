// The delivery workflow on the time-skipping test server with the real activities, PostgreSQL and a real local
// receiver: the full schedule (O6), retryNow (O12), auto-disable over days of workflow time (O13), rotation (O9).
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { deliveries, deliveryAttempts, webhookEndpoints } from '../../src/db/schema/index.js';
import { rotateEndpointSecret } from '../../src/outbound/secrets.js';
import { DELIVERY_WORKFLOW, deliveryStatusQuery, retryNowSignal, type DeliveryProgress, type DeliveryWorkflowInput } from '../../src/shared/outbound.js';
import { verify } from '../../src/signing/index.js';
import { TEST_DATABASE_URL, TEST_SECRETS_KEY } from '../helpers/env.js';
import { insertDelivery, insertEndpoint, startReceiver, uniqueMerchant, waitFor, type Reply } from '../helpers/outbound.js';
import { createTimeSkippingEnv, startWorkers, testActivities, uniqueTaskQueues } from '../helpers/temporal.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const SCHEDULE = [1 * MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 12 * HOUR];

let database: Database;
let env: TestWorkflowEnvironment;
let workers: { stop: () => Promise<void> };
const taskQueues = uniqueTaskQueues('delivery-wf');

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 6 });
  env = await createTimeSkippingEnv();
  workers = await startWorkers({ connection: env.nativeConnection, taskQueues, activities: testActivities(database.db) });
});
afterAll(async () => {
  await workers?.stop();
  await env?.teardown();
  await database?.close();
});

/** A receiver whose n-th request (0-based) gets reply(n); it notes the test server's (skipped) time of each. */
async function receiverWith(reply: (index: number) => Reply | Promise<Reply>) {
  const times: number[] = [];
  const receiver = await startReceiver(async (_request, index) => {
    times.push(await env.currentTimeMs());
    return reply(index);
  });
  return { ...receiver, times };
}

async function setup(label: string, reply: (index: number) => Reply | Promise<Reply>) {
  const receiver = await receiverWith(reply);
  const merchantAccount = uniqueMerchant(label);
  const endpoint = await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/hooks` });
  const delivery = await insertDelivery(database.db, { endpointId: endpoint.id, merchantAccount });
  return { receiver, endpoint, ...delivery };
}

function start(deliveryId: string, retryScheduleMs = SCHEDULE, reviewWindowMs = DAY) {
  const input: DeliveryWorkflowInput = { deliveryId, retryScheduleMs, priorAttempts: 0, reviewWindowMs };
  return env.client.workflow.start(DELIVERY_WORKFLOW, { taskQueue: taskQueues.delivery, workflowId: deliveryId, args: [input] });
}

const deliveryRow = async (id: string) => (await database.db.select().from(deliveries).where(eq(deliveries.id, id)))[0]!;
const attemptsOf = (id: string) =>
  database.db.select().from(deliveryAttempts).where(eq(deliveryAttempts.deliveryId, id)).orderBy(deliveryAttempts.attemptNumber);

describe('delivery workflow (time skipping)', () => {
  it('O6 attempts at 0, +1m, +5m, +30m, +2h, +12h with the same evt id and byte-identical body, then FAILED', async () => {
    const { receiver, deliveryId, eventId, body } = await setup('o6fail', () => ({ status: 500, body: 'down' }));
    try {
      const handle = await start(deliveryId);
      await env.sleep(15 * HOUR);
      await waitFor(async () => (await deliveryRow(deliveryId)).status === 'FAILED', 20_000, 'FAILED');

      expect(receiver.received).toHaveLength(6);
      const offsets = receiver.times.map((t) => t - receiver.times[0]!);
      const expected = [0, 1, 6, 36, 156, 876].map((m) => m * MINUTE);
      offsets.forEach((offset, i) => expect(Math.abs(offset - expected[i]!), `attempt ${i + 1} at +${offset} ms`).toBeLessThan(15_000));
      for (const request of receiver.received) {
        expect(request.body.equals(body)).toBe(true);
        expect(JSON.parse(request.body.toString()).id).toBe(eventId);
      }
      const row = await deliveryRow(deliveryId);
      expect(row).toMatchObject({ status: 'FAILED', attemptCount: 6, nextAttemptAt: null });
      expect(row.failedAt).not.toBeNull();
      expect((await attemptsOf(deliveryId)).map((a) => [a.attemptNumber, a.errorKind, a.responseStatus])).toEqual(
        [1, 2, 3, 4, 5, 6].map((n) => [n, 'server_error', 500]),
      );
      const progress = await handle.query(deliveryStatusQuery);
      expect(progress).toEqual({ status: 'FAILED', attemptCount: 6, nextAttemptAt: null });
      const described = await handle.describe();
      expect(described.status.name).toBe('RUNNING'); // waiting for an operator in its review window
    } finally {
      await receiver.close();
    }
  });

  it('O6 a 2xx at the third attempt ends the cycle as DELIVERED', async () => {
    const { receiver, deliveryId } = await setup('o6ok', (i) => (i < 2 ? { status: 502 } : { status: 200 }));
    try {
      const handle = await start(deliveryId);
      const result = await handle.result();
      expect(result).toEqual<DeliveryProgress>({ status: 'DELIVERED', attemptCount: 3, nextAttemptAt: null });
      expect(receiver.received).toHaveLength(3);
      const row = await deliveryRow(deliveryId);
      expect(row).toMatchObject({ status: 'DELIVERED', attemptCount: 3, nextAttemptAt: null, failedAt: null });
      expect(row.deliveredAt).not.toBeNull();
    } finally {
      await receiver.close();
    }
  });

  it('O12 retryNow during a backoff triggers the next attempt at once', async () => {
    const { receiver, deliveryId } = await setup('o12now', (i) => (i === 0 ? { status: 500 } : { status: 200 }));
    try {
      const handle = await start(deliveryId, [2 * HOUR, 2 * HOUR]);
      await waitFor(async () => (await deliveryRow(deliveryId)).status === 'RETRYING', 20_000, 'RETRYING');
      const waiting = await handle.query(deliveryStatusQuery);
      expect(waiting.status).toBe('RETRYING');
      expect(waiting.attemptCount).toBe(1);
      expect(waiting.nextAttemptAt).not.toBeNull();

      await handle.signal(retryNowSignal, { operator: 'test', reason: 'merchant fixed their endpoint' });
      const result = await handle.result();
      expect(result.status).toBe('DELIVERED');
      expect(receiver.received).toHaveLength(2);
      // The second attempt came long before the 2 h timer would have fired.
      expect(receiver.times[1]! - receiver.times[0]!).toBeLessThan(HOUR);
    } finally {
      await receiver.close();
    }
  });

  it('O12 a FAILED delivery retried goes back to PENDING and gets a new attempt', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { receiver, deliveryId } = await setup('o12failed', async (i) => {
      if (i < 2) return { status: 500 };
      await gate;
      return { status: 200 };
    });
    try {
      const handle = await start(deliveryId, [1 * MINUTE]);
      await env.sleep(2 * MINUTE);
      await waitFor(async () => (await deliveryRow(deliveryId)).status === 'FAILED', 20_000, 'FAILED');
      expect(receiver.received).toHaveLength(2);

      await handle.signal(retryNowSignal, { operator: 'test' });
      // The new cycle's attempt is in flight (the receiver holds it): the delivery is PENDING again.
      await waitFor(async () => receiver.received.length === 3, 20_000, 'third attempt');
      const reopened = await deliveryRow(deliveryId);
      expect(reopened.status).toBe('PENDING');
      expect(reopened.failedAt).toBeNull();
      // (No query here: the first attempt of a run is a local activity, and a query waits for it to finish.)
      release();

      const result = await handle.result();
      expect(result).toEqual({ status: 'DELIVERED', attemptCount: 3, nextAttemptAt: null });
      expect((await attemptsOf(deliveryId)).map((a) => a.attemptNumber)).toEqual([1, 2, 3]);
    } finally {
      release();
      await receiver.close();
    }
  });

  it('O13 an endpoint failing for 7 days of workflow time is disabled, and nothing more is sent to it', async () => {
    const { receiver, endpoint, deliveryId } = await setup('o13', () => ({ status: 503 }));
    try {
      const handle = await start(deliveryId, Array(10).fill(DAY));
      await env.sleep(8 * DAY);
      await waitFor(async () => (await deliveryRow(deliveryId)).status === 'FAILED', 20_000, 'FAILED');
      const [row] = await database.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, endpoint.id));
      expect(row!.status).toBe('disabled');
      expect(row!.disabledReason).toMatch(/auto-disabled: every attempt failed since/);
      // Attempts at day 0..7: the eighth, 7 days after the first failure, disabled the endpoint and ended the cycle.
      expect(receiver.received).toHaveLength(8);
      expect((await handle.query(deliveryStatusQuery)).status).toBe('FAILED');
      await env.sleep(3 * DAY);
      expect(receiver.received).toHaveLength(8);
    } finally {
      await receiver.close();
    }
  });

  it('O13 a 2xx resets the failure streak: six days of failures then a success leaves the endpoint enabled', async () => {
    const { receiver, endpoint, deliveryId } = await setup('o13reset', (i) => (i === 6 ? { status: 200 } : { status: 500 }));
    try {
      const handle = await start(deliveryId, Array(10).fill(DAY));
      const result = await handle.result();
      expect(result).toMatchObject({ status: 'DELIVERED', attemptCount: 7 });
      const [row] = await database.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, endpoint.id));
      expect(row).toMatchObject({ status: 'enabled', failingSince: null });

      // Two more days of failures start a new streak rather than continuing the old one: still enabled.
      const again = await insertDelivery(database.db, { endpointId: endpoint.id, merchantAccount: row!.merchantAccount });
      const failing = await start(again.deliveryId, [DAY, DAY]);
      const second = await receiverlessResult(failing);
      expect(second.status).toBe('FAILED');
      const [after] = await database.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, endpoint.id));
      expect(after!.status).toBe('enabled');
      expect(after!.failingSince).not.toBeNull();
    } finally {
      await receiver.close();
    }
  });

  it('O9 during a rotation the header carries two v1 (active first); after the grace period one', async () => {
    const { receiver, endpoint, deliveryId, body } = await setup('o9', (i) => (i === 0 ? { status: 500 } : { status: 200 }));
    try {
      const newSecret = await rotateEndpointSecret(database.db, endpoint.id, TEST_SECRETS_KEY, 1500, new Date());
      const handle = await start(deliveryId, [HOUR]);
      await waitFor(async () => receiver.received.length === 1, 20_000, 'first attempt');
      const first = String(receiver.received[0]!.headers['apipay-signature']);
      const [t, v1a, v1b, extra] = first.split(',');
      expect(extra).toBeUndefined();
      expect(() => verify(body, `${t},${v1a}`, newSecret)).not.toThrow(); // active first
      expect(() => verify(body, `${t},${v1b}`, endpoint.secret)).not.toThrow(); // previous, in its grace period

      await new Promise((r) => setTimeout(r, 1600)); // the grace period is wall-clock time of the signer
      await handle.signal(retryNowSignal, {});
      expect((await handle.result()).status).toBe('DELIVERED');
      const second = String(receiver.received[1]!.headers['apipay-signature']);
      expect(second.split(',').filter((p) => p.startsWith('v1='))).toHaveLength(1);
      expect(() => verify(body, second, newSecret)).not.toThrow();
      expect(() => verify(body, second, endpoint.secret)).toThrow();
    } finally {
      await receiver.close();
    }
  });
});

/** Waits until the workflow reaches FAILED (it then waits for review, so result() would skip the whole window). */
async function receiverlessResult(handle: Awaited<ReturnType<typeof start>>): Promise<DeliveryProgress> {
  await env.sleep(3 * DAY);
  return waitFor(async () => {
    const progress = await handle.query(deliveryStatusQuery);
    return progress.status === 'FAILED' ? progress : undefined;
  }, 20_000, 'FAILED');
}
