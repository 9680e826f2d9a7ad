// A4: a resolution sent to Temporal directly (as the Temporal UI or `temporal workflow update/signal` would) is
// refused under `inbound.resolution_via_temporal: deny` and posts nothing, while the admin API's own signed
// resolutions keep working; under `allow` it is recorded with the identity of the client that sent it, via
// temporal. A payload that claims to be the API (a made-up signature, `via: "api"`) is refused. Real PostgreSQL
// and the Temporal dev server.
import { randomUUID } from 'node:crypto';
import { Client, WorkflowUpdateFailedError } from '@temporalio/client';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { operatorResolutions } from '../../src/db/schema/index.js';
import type { Profile } from '../../src/config/profile.js';
import {
  operatorResolutionSignal,
  reconciliationStateQuery,
  resolveUpdate,
  type OperatorResolution,
} from '../../src/shared/inbound.js';
import { callAs, createKey } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { TEST_DATABASE_URL } from '../helpers/env.js';
import { testProfile } from '../helpers/profile.js';
import {
  ledgerRowsFor,
  providerEvent,
  startPaymentsPeer,
  startReconciliation,
  succeeded,
  waitFor,
} from '../helpers/reconciliation.js';
import { connectDevServer, startWorkers, testActivities, uniqueTaskQueues } from '../helpers/temporal.js';

let database: Database;
let temporal: Awaited<ReturnType<typeof connectDevServer>>;
let peer: Awaited<ReturnType<typeof startPaymentsPeer>>;
const provider = `via-${randomUUID().slice(0, 8)}`;
const setups: Record<'deny' | 'allow', { profile: Profile; queue: string; stop: () => Promise<void> }> = {} as never;

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 4 });
  temporal = await connectDevServer();
  peer = await startPaymentsPeer();
  for (const mode of ['deny', 'allow'] as const) {
    const profile = testProfile({
      inbound: {
        resolution_via_temporal: mode,
        providers: {
          [provider]: { scheme: 'stripe', secret_ref: 'env:SANDBOX_STRIPE_WEBHOOK_SECRET', api_base_url: peer.baseUrl },
        },
        provider_query_backoff: { initial: '200ms', multiplier: 2, maximum: '1s' },
      },
    });
    const taskQueues = uniqueTaskQueues(`via-${mode}`);
    const worker = await startWorkers({
      connection: temporal.native,
      taskQueues,
      activities: testActivities(database.db, { profile }),
    });
    setups[mode] = { profile, queue: taskQueues.reconciliation, stop: worker.stop };
  }
});
afterAll(async () => {
  for (const s of Object.values(setups)) await s.stop();
  await peer?.close();
  await temporal?.close();
  await database?.close();
});

/** A payment the provider reports with another amount: it parks in manual_review, nothing posted. */
async function parked(mode: 'deny' | 'allow') {
  const event = providerEvent({ amountMinor: '2000' });
  peer.set(event.paymentReference, succeeded(event, { amountMinor: '1999' }));
  const handle = await startReconciliation(temporal.client, setups[mode].profile, setups[mode].queue, event, { provider });
  await waitFor(async () => (await handle.query(reconciliationStateQuery)).state === 'manual_review', 60_000, 'manual_review');
  return { event, handle };
}

/** A client that says who it is, as the Temporal UI's server-side client or the CLI would. */
const clientAs = (identity: string) => new Client({ connection: temporal.connection, identity });
const resolution: OperatorResolution = { decision: 'applied', operator: 'cfo', reason: 'confirmed by phone', post: 'webhook' };
const resolutionRow = async (id: string) =>
  (await database.db.select().from(operatorResolutions).where(eq(operatorResolutions.reconciliationId, id)))[0];

describe('A4 resolutions sent to Temporal directly', () => {
  it('A4 deny: an update is refused by the validator, a signal is recorded as refused; nothing is posted; the admin API still resolves', async () => {
    const { event, handle } = await parked('deny');
    const ui = clientAs('mallory@temporal-ui').workflow.getHandle(handle.workflowId);
    const refused = await ui.executeUpdate(resolveUpdate, { args: [resolution] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(String((refused as WorkflowUpdateFailedError).cause?.message)).toMatch(/resolution_via_temporal: deny/);

    await ui.signal(operatorResolutionSignal, resolution);
    await waitFor(
      async () => ((await handle.query(reconciliationStateQuery)).refusedResolutions ?? []).length > 0,
      30_000,
      'signal refused',
    );
    const state = await handle.query(reconciliationStateQuery);
    expect(state.state).toBe('manual_review');
    expect(state.refusedResolutions![0]).toMatchObject({
      via: 'signal',
      problem: expect.stringMatching(/resolution_via_temporal: deny/),
    });
    // A claim to be the API: a made-up signature block and `via: "api"` typed into the payload.
    const forged = {
      ...resolution,
      via: 'api',
      api: {
        principal: { keyId: 'bootstrap', name: 'ADMIN_TOKEN', role: 'admin' },
        requestId: 'req-forged',
        issuedAt: new Date().toISOString(),
        signingKeyId: 'k1',
        signature: 'AAAA',
      },
    };
    const notApi = await ui.executeUpdate(resolveUpdate, { args: [forged as OperatorResolution] }).catch((e: unknown) => e);
    expect(notApi).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(String((notApi as WorkflowUpdateFailedError).cause?.message)).toMatch(/signature that does not verify/);
    // Nothing posted, no audit row, never retried: the state stays as it was.
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toEqual([]);
    expect(await resolutionRow(handle.workflowId)).toBeUndefined();
    expect((await handle.query(reconciliationStateQuery)).state).toBe('manual_review');

    const app = testApp({
      db: database.db,
      temporal: temporal.client,
      profile: setups.deny.profile,
      taskQueues: uniqueTaskQueues('via-api'),
    });
    const finance = await createKey(app, 'operator', undefined, 'finance-op'); // A12: the bootstrap token moves no money
    const viaApi = await callAs(
      app,
      finance.token,
      'POST',
      `/reconciliations/${encodeURIComponent(handle.workflowId)}/resolution`,
      {
        decision: 'applied',
        reason: 'confirmed',
        post: 'webhook',
      },
    );
    expect(viaApi.status).toBe(200);
    expect(viaApi.json.resolution).toMatchObject({ operator: 'finance-op', operator_key: finance.id, via: 'api' });
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toHaveLength(1);
  });

  it('A4 allow: an update is attributed to the client identity that sent it, via temporal, whatever the payload says', async () => {
    const { event, handle } = await parked('allow');
    const answer = await clientAs('ana@temporal-ui')
      .workflow.getHandle(handle.workflowId)
      .executeUpdate(resolveUpdate, { args: [resolution] });
    expect(answer.state).toBe('applied');
    expect(await resolutionRow(handle.workflowId)).toMatchObject({
      operator: 'ana@temporal-ui',
      operatorKey: 'temporal:ana@temporal-ui',
      via: 'temporal',
    });
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toHaveLength(1);
  });

  it('A4 allow: a signal is attributed to the identity of the signal event', async () => {
    const { handle } = await parked('allow');
    await clientAs('bob@temporal-cli')
      .workflow.getHandle(handle.workflowId)
      .signal(operatorResolutionSignal, { ...resolution, decision: 'rejected', post: undefined });
    await handle.result();
    expect(await resolutionRow(handle.workflowId)).toMatchObject({
      decision: 'rejected',
      operator: 'bob@temporal-cli',
      operatorKey: 'temporal:bob@temporal-cli',
      via: 'temporal',
    });
  });
});
