// I8 on the time-skipping test server: a provider that never gives an authoritative answer moves the
// reconciliation to manual_review after the profile's timeout (1h of workflow time), never to applied.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createActivities } from '../../src/activities/index.js';
import { createDatabase, type Database } from '../../src/db/client.js';
import { reconciliations } from '../../src/db/schema/index.js';
import { operatorResolutionSignal, reconciliationStateQuery } from '../../src/shared/inbound.js';
import { SA } from '../../src/shared/search-attributes.js';
import { TEST_DATABASE_URL, TEST_SECRETS_KEY } from '../helpers/env.js';
import { testProfile } from '../helpers/profile.js';
import { ledgerRowsFor, providerEvent, startPaymentsPeer, startReconciliation, succeeded } from '../helpers/reconciliation.js';
import { createTimeSkippingEnv, startWorkers, testLogger, uniqueTaskQueues } from '../helpers/temporal.js';

let database: Database;
let env: TestWorkflowEnvironment;
let peer: Awaited<ReturnType<typeof startPaymentsPeer>>;
let stop: () => Promise<void>;
let profile: ReturnType<typeof testProfile>;
const taskQueues = uniqueTaskQueues('reconcile-timeout');

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 4 });
  env = await createTimeSkippingEnv();
  peer = await startPaymentsPeer();
  // The example profile's own values: 1h timeout, backoff 2s ×2 up to 5m.
  profile = testProfile({ inbound: { providers: { 'sandbox-stripe': { api_base_url: peer.baseUrl } } } });
  const activities = createActivities({ db: database.db, profile, logger: testLogger, secretsKey: TEST_SECRETS_KEY });
  stop = (await startWorkers({ connection: env.nativeConnection, taskQueues, activities })).stop;
});
afterAll(async () => {
  await stop?.();
  await env?.teardown();
  await peer?.close();
  await database?.close();
});

describe('I8 reconciliation timeout', () => {
  it.each([
    ['provider outage (503)', 'error' as const],
    ['provider reports pending', 'pending' as const],
  ])('I8 %s past reconciliation_timeout (1h) → manual_review, never assumed paid (time skipping)', async (_, mode) => {
    expect(profile.inbound.reconciliation_timeout).toBe(3_600_000);
    const event = providerEvent();
    peer.set(event.paymentReference, mode === 'error' ? 'error' : succeeded(event, { status: 'pending' }));
    // The acknowledgement in the test server's clock, which earlier cases have moved days ahead.
    const acknowledgedAt = new Date(await env.currentTimeMs()).toISOString();
    const handle = await startReconciliation(env.client, profile, taskQueues.reconciliation, event, { acknowledgedAt });
    const started = Date.now();

    await env.sleep('50m');
    const before = await handle.query(reconciliationStateQuery);
    expect(before.state).toBe('reconciling');

    await env.sleep('11m');
    const after = await handle.query(reconciliationStateQuery);
    expect(after.state).toBe('manual_review');
    expect(after.reason).toMatch(/^timeout/);
    // Backoff 2s, 4s, … capped at 5m: about 17 queries in an hour, not thousands.
    expect(after.providerQueries).toBeGreaterThan(10);
    expect(after.providerQueries).toBeLessThan(30);
    expect(peer.hits(event.paymentReference)).toBe(after.providerQueries);
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toEqual([]);
    const [row] = await database.db.select().from(reconciliations).where(eq(reconciliations.id, handle.workflowId));
    expect(row?.state).toBe('manual_review');
    expect((await handle.describe()).typedSearchAttributes.get(SA.reconciliationState)).toBe('manual_review');

    // Manual review waits for an operator however long it takes; a signal resolves it.
    await env.sleep('30d');
    expect((await handle.query(reconciliationStateQuery)).state).toBe('manual_review');
    await handle.signal(operatorResolutionSignal, { decision: 'rejected', operator: 'ops@apipay', reason: 'provider never confirmed' });
    expect((await handle.result()).state).toBe('rejected');
    expect(Date.now() - started).toBeLessThan(60_000);
  });

  it('I8 a long reconciliation continues as new to bound its history, keeping its deadline and query count', async () => {
    const event = providerEvent();
    peer.set(event.paymentReference, 'error');
    const acknowledgedAt = new Date(await env.currentTimeMs()).toISOString();
    const handle = await startReconciliation(env.client, profile, taskQueues.reconciliation, event, { acknowledgedAt, inputPatch: { queriesPerRun: 4 } });
    const firstRun = (await handle.describe()).runId;
    await env.sleep('61m');
    const latest = env.client.workflow.getHandle(handle.workflowId);
    const progress = await latest.query(reconciliationStateQuery);
    expect(progress.state).toBe('manual_review');
    expect(progress.reason).toMatch(/^timeout/);
    expect(progress.providerQueries).toBe(peer.hits(event.paymentReference));
    expect(progress.providerQueries).toBeGreaterThan(10);
    expect((await latest.describe()).runId).not.toBe(firstRun);
    const [row] = await database.db.select().from(reconciliations).where(eq(reconciliations.id, handle.workflowId));
    expect(row?.state).toBe('manual_review');
    expect((await latest.describe()).typedSearchAttributes.get(SA.reconciliationState)).toBe('manual_review');
    await latest.terminate('test done');
  });
});
