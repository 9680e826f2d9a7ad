// O12 end to end through the admin API: a FAILED delivery whose workflow run has closed is retried, a new run of
// the same workflow id attempts at once with a real worker, and the merchant receives the signed, identical bytes.
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { testApp } from '../helpers/app.js';
import type { Database } from '../../src/db/client.js';
import { deliveries, deliveryAttempts } from '../../src/db/schema/index.js';
import { DELIVERY_WORKFLOW } from '../../src/shared/outbound.js';
import { SIGNATURE_HEADER, verify } from '../../src/signing/index.js';
import { TEST_ADMIN_TOKEN } from '../helpers/env.js';
import { insertDelivery, insertEndpoint, startReceiver, uniqueMerchant, waitFor } from '../helpers/outbound.js';
import { startWorkers, testActivities, uniqueTaskQueues } from '../helpers/temporal.js';
import { useWorld, type World } from '../helpers/world.js';

let database: Database;
let temporal: World['temporal'];
const world = useWorld({ label: 'admin-retry-e2e' });
beforeAll(async () => {
  database = world.database;
  temporal = world.temporal;
});

describe('manual retry through the admin API (O12)', () => {
  it('O12 retry of a FAILED delivery whose run closed starts a new run that delivers at once, signed, same bytes', async () => {
    const receiver = await startReceiver(() => ({ status: 200 }));
    const taskQueues = uniqueTaskQueues('admin-retry');
    const workers = await startWorkers({ connection: temporal.native, taskQueues, activities: testActivities(database.db) });
    try {
      const merchantAccount = uniqueMerchant('retry');
      const endpoint = await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/hooks` });
      const { deliveryId, eventId, body } = await insertDelivery(database.db, { endpointId: endpoint.id, merchantAccount });
      // As after a full failed cycle: six attempts, FAILED, and the workflow run closed (review window over).
      await database.db.update(deliveries).set({ status: 'FAILED', attemptCount: 6, failedAt: new Date() }).where(eq(deliveries.id, deliveryId));
      const earlier = await temporal.client.workflow.start(DELIVERY_WORKFLOW, {
        workflowId: deliveryId,
        taskQueue: `${taskQueues.delivery}-unpolled`,
        args: [{ deliveryId, retryScheduleMs: [60_000] }],
      });
      await earlier.terminate('review window over (test)');

      const app = testApp({
        db: database.db,
        temporal: temporal.client,
        taskQueues,
      });
      const res = await app.request(`/admin/v1/webhook-deliveries/${deliveryId}/retry`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ reason: 'merchant back up' }),
      });
      expect(res.status).toBe(202);
      expect(((await res.json()) as { status: string }).status).toBe('PENDING');

      const delivered = await waitFor(async () => {
        const [row] = await database.db.select().from(deliveries).where(eq(deliveries.id, deliveryId));
        return row?.status === 'DELIVERED' ? row : undefined;
      }, 30_000, 'DELIVERED');
      expect(delivered.deliveredAt).not.toBeNull();
      expect(delivered.attemptCount).toBe(7);

      const description = await temporal.client.workflow.getHandle(deliveryId).describe();
      expect(description.runId).not.toBe(earlier.firstExecutionRunId);
      expect(description.taskQueue).toBe(taskQueues.delivery);

      expect(receiver.received).toHaveLength(1);
      const [request] = receiver.received;
      expect(request!.body.equals(body)).toBe(true);
      expect(JSON.parse(request!.body.toString()).id).toBe(eventId);
      const header = request!.headers[SIGNATURE_HEADER.toLowerCase()] as string;
      expect(verify(request!.body, header, endpoint.secret).timestamp).toBeGreaterThan(0);

      const attempts = await database.db.select().from(deliveryAttempts).where(eq(deliveryAttempts.deliveryId, deliveryId));
      expect(attempts.map((a) => [a.attemptNumber, a.responseStatus, a.succeeded])).toEqual([[7, 200, true]]);

      const again = await app.request(`/admin/v1/webhook-deliveries/${deliveryId}/retry`, { method: 'POST', headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
      expect(again.status).toBe(409);
    } finally {
      await workers.stop();
      await receiver.close();
    }
  });
});
