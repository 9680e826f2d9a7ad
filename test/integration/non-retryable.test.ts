// R4 on the time-skipping test server with the real activities and PostgreSQL: a deterministic activity failure is
// not retried for ever but ends where an operator sees it, FAILED with a reason (delivery) or manual_review with a
// reason (reconciliation), and the operator's usual tool (retryNow, a resolution) still works from there.
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { deliveries, deliveryAttempts, endpointSecrets, reconciliations, reconciliationTransitions } from '../../src/db/schema/index.js';
import { insertEndpointSecret, generateEndpointSecret } from '../../src/outbound/secrets.js';
import { reconciliationStateQuery, resolveUpdate } from '../../src/shared/inbound.js';
import { DELIVERY_WORKFLOW, deliveryStatusQuery, retryNowSignal, type DeliveryWorkflowInput } from '../../src/shared/outbound.js';
import { SA } from '../../src/shared/search-attributes.js';
import { TEST_DATABASE_URL, TEST_SECRETS_KEY } from '../helpers/env.js';
import { insertDelivery, insertEndpoint, startReceiver, uniqueMerchant, waitFor } from '../helpers/outbound.js';
import { testProfile } from '../helpers/profile.js';
import { ledgerRowsFor, providerEvent, startPaymentsPeer, startReconciliation, succeeded } from '../helpers/reconciliation.js';
import { createTimeSkippingEnv, startWorkers, testActivities, uniqueTaskQueues } from '../helpers/temporal.js';

let database: Database;
let env: TestWorkflowEnvironment;
let peer: Awaited<ReturnType<typeof startPaymentsPeer>>;
let workers: { stop: () => Promise<void> };
let profile: ReturnType<typeof testProfile>;
const taskQueues = uniqueTaskQueues('non-retryable');

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 6 });
  env = await createTimeSkippingEnv();
  peer = await startPaymentsPeer();
  profile = testProfile({ inbound: { providers: { 'sandbox-stripe': { api_base_url: peer.baseUrl } } } });
  workers = await startWorkers({ connection: env.nativeConnection, taskQueues, activities: testActivities(database.db, { profile }) });
});
afterAll(async () => {
  await workers?.stop();
  await env?.teardown();
  await peer?.close();
  await database?.close();
});

const deliveryRow = async (id: string) => (await database.db.select().from(deliveries).where(eq(deliveries.id, id)))[0]!;

describe('R4 outbound: a non-retryable activity failure ends FAILED with its reason', () => {
  it('R4 an endpoint without an active signing secret: FAILED with the reason at once, nothing sent; retryNow after a secret is added delivers', async () => {
    const receiver = await startReceiver(() => ({ status: 200 }));
    try {
      const merchantAccount = uniqueMerchant('nosecret');
      const endpoint = await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/hooks` });
      await database.db.delete(endpointSecrets).where(eq(endpointSecrets.endpointId, endpoint.id));
      const { deliveryId } = await insertDelivery(database.db, { endpointId: endpoint.id, merchantAccount });
      const input: DeliveryWorkflowInput = { deliveryId, retryScheduleMs: [60_000, 300_000], priorAttempts: 0, reviewWindowMs: 86_400_000 };
      const handle = await env.client.workflow.start(DELIVERY_WORKFLOW, { taskQueue: taskQueues.delivery, workflowId: deliveryId, args: [input] });

      const row = await waitFor(async () => {
        const r = await deliveryRow(deliveryId);
        return r.status === 'FAILED' ? r : null;
      }, 20_000, 'FAILED');
      expect(row.failureReason).toBe(`MissingSigningSecretError: endpoint ${endpoint.id} has no active signing secret`);
      expect(row.failedAt).not.toBeNull();
      // The row is written by the activity; the workflow's own state follows one workflow task later.
      const progress = await waitFor(async () => {
        const p = await handle.query(deliveryStatusQuery);
        return p.status === 'FAILED' ? p : null;
      }, 20_000, 'query FAILED');
      expect(progress).toMatchObject({ status: 'FAILED', reason: row.failureReason });
      expect((await handle.describe()).typedSearchAttributes.get(SA.deliveryStatus)).toBe('FAILED');
      expect((await handle.describe()).status.name).toBe('RUNNING'); // in its review window, like any FAILED delivery
      expect(receiver.received).toHaveLength(0);
      expect(await database.db.select().from(deliveryAttempts).where(eq(deliveryAttempts.deliveryId, deliveryId))).toEqual([]);

      // The operator fixes the endpoint and retries: a new cycle, delivered, the reason cleared.
      await insertEndpointSecret(database.db, endpoint.id, generateEndpointSecret(), TEST_SECRETS_KEY);
      await handle.signal(retryNowSignal, { operator: 'ops', reason: 'secret restored' });
      await waitFor(async () => (await deliveryRow(deliveryId)).status === 'DELIVERED', 20_000, 'DELIVERED');
      expect(await deliveryRow(deliveryId)).toMatchObject({ status: 'DELIVERED', failureReason: null });
      expect(receiver.received).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });
});

describe('R4 inbound: a non-retryable activity failure parks the reconciliation in manual_review with its reason', () => {
  it('R4 a signed payment of amount 0 that the provider confirms: the ledger refuses it → manual_review with the reason, nothing posted', async () => {
    const event = providerEvent({ amountMinor: '0' });
    peer.set(event.paymentReference, succeeded(event));
    const acknowledgedAt = new Date(await env.currentTimeMs()).toISOString();
    const handle = await startReconciliation(env.client, profile, taskQueues.reconciliation, event, { acknowledgedAt });

    const progress = await waitFor(async () => {
      const p = await handle.query(reconciliationStateQuery);
      return p.state === 'manual_review' ? p : null;
    }, 20_000, 'manual_review');
    expect(progress.reason).toBe('ledger_refused: LedgerValidationError: amount 0 is not a positive integer of minor units');
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toEqual([]);
    const [row] = await database.db.select().from(reconciliations).where(eq(reconciliations.id, handle.workflowId));
    expect(row).toMatchObject({ state: 'manual_review', reason: progress.reason });
    const trail = await database.db.select().from(reconciliationTransitions).where(eq(reconciliationTransitions.reconciliationId, handle.workflowId));
    expect(trail.map((t) => t.toState)).toEqual(['reconciling', 'manual_review']);
    expect((await handle.describe()).status.name).toBe('RUNNING');

    // Applying it still cannot post (the update says why, it stays in review); rejecting it closes it.
    const refused = await handle.executeUpdate(resolveUpdate, { args: [{ decision: 'applied', operator: 'ana', reason: 'try' }] }).catch((e: Error) => e);
    expect((refused as Error & { cause?: Error }).cause?.message).toMatch(/^cannot apply: amount 0 is not a positive integer/);
    expect((await handle.query(reconciliationStateQuery)).state).toBe('manual_review');
    const resolved = await handle.executeUpdate(resolveUpdate, { args: [{ decision: 'rejected', operator: 'ana', reason: 'zero amount' }] });
    expect(resolved.state).toBe('rejected');
    expect((await handle.result()).state).toBe('rejected');
  });

  it('R4/R20 an amount beyond bigint that bypassed the adapter (a start by hand) fails the workflow at once, before anything is written', async () => {
    const event = providerEvent({ amountMinor: '9999999999999999999' });
    peer.set(event.paymentReference, succeeded(event));
    // The adapter refuses the amount, so no receipt exists: R20 refuses the start (before R20: InvalidData at the projection).
    const handle = await startReconciliation(env.client, profile, taskQueues.reconciliation, event);
    const failure = await handle.result().then(() => expect.fail('the workflow should fail'), (e: Error & { cause?: Error & { type?: string } }) => e);
    expect(failure.cause?.type).toBe('ReconciliationStartRefused');
    expect(failure.cause?.message).toMatch(/no receipt/);
  });
});
