// A6: the worker's activities under the application role on the real PostgreSQL and Temporal dev server — a
// delivery that fails once and then succeeds (attempts, delivery status, the endpoint's failure streak) and a
// reconciliation that posts to the ledger (projection upsert, transitions, ledger rows): the grants suffice.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities/index.js';
import { createDatabase, type Database } from '../../src/db/client.js';
import { deliveries, deliveryAttempts } from '../../src/db/schema/index.js';
import { DELIVERY_WORKFLOW, type DeliveryWorkflowInput } from '../../src/shared/outbound.js';
import { TEST_APP_DATABASE_URL, TEST_DATABASE_URL, TEST_SECRETS_KEY } from '../helpers/env.js';
import { insertDelivery, insertEndpoint, startReceiver, uniqueMerchant } from '../helpers/outbound.js';
import { testProfile } from '../helpers/profile.js';
import { ledgerRowsFor, providerEvent, startPaymentsPeer, startReconciliation, succeeded, waitFor } from '../helpers/reconciliation.js';
import { connectDevServer, startWorkers, testLogger, uniqueTaskQueues } from '../helpers/temporal.js';

let owner: Database;
let app: Database;
let temporal: Awaited<ReturnType<typeof connectDevServer>>;
let peer: Awaited<ReturnType<typeof startPaymentsPeer>>;
let profile: ReturnType<typeof testProfile>;
let stop: () => Promise<void>;
const taskQueues = uniqueTaskQueues('app-role');

beforeAll(async () => {
  owner = createDatabase(TEST_DATABASE_URL, { max: 2 });
  app = createDatabase(TEST_APP_DATABASE_URL, { max: 6 });
  temporal = await connectDevServer();
  peer = await startPaymentsPeer();
  profile = testProfile({ inbound: { providers: { 'sandbox-stripe': { api_base_url: peer.baseUrl } }, provider_query_backoff: { initial: '200ms', multiplier: 2, maximum: '1s' } } });
  const activities = createActivities({ db: app.db, profile, logger: testLogger, secretsKey: TEST_SECRETS_KEY });
  stop = (await startWorkers({ connection: temporal.native, taskQueues, activities })).stop;
});
afterAll(async () => {
  await stop?.();
  await peer?.close();
  await temporal?.close();
  await app?.close();
  await owner?.close();
});

describe('A6 worker activities as the application role', () => {
  it('A6 a delivery fails once, is retried and delivered', async () => {
    const receiver = await startReceiver((_r, index) => (index === 0 ? { status: 500, body: 'down' } : { status: 200 }));
    try {
      const merchantAccount = uniqueMerchant('approle');
      const endpoint = await insertEndpoint(owner.db, { merchantAccount, url: `${receiver.url}/hooks` });
      const { deliveryId } = await insertDelivery(owner.db, { endpointId: endpoint.id, merchantAccount });
      const input: DeliveryWorkflowInput = { deliveryId, retryScheduleMs: [200], priorAttempts: 0 };
      await temporal.client.workflow.start(DELIVERY_WORKFLOW, { taskQueue: taskQueues.delivery, workflowId: deliveryId, args: [input] });
      await waitFor(async () => (await owner.db.select().from(deliveries).where(eq(deliveries.id, deliveryId)))[0]?.status === 'DELIVERED', 30_000, 'DELIVERED');
      const attempts = await owner.db.select().from(deliveryAttempts).where(eq(deliveryAttempts.deliveryId, deliveryId));
      expect(attempts.map((a) => a.succeeded).sort()).toEqual([false, true]);
    } finally {
      await receiver.close();
    }
  });

  it('A6 a reconciliation the provider confirms is applied and posted to the ledger', async () => {
    const event = providerEvent();
    peer.set(event.paymentReference, succeeded(event));
    const handle = await startReconciliation(temporal.client, profile, taskQueues.reconciliation, event);
    const outcome = await handle.result();
    expect(outcome.state).toBe('applied');
    expect((await ledgerRowsFor(owner.db, event.paymentReference)).map((t) => t.kind)).toEqual(['payment']);
  });
});
