// A27 (issue 29, the third attack): a resolution proposed through Temporal under a made-up identity
// (`temporal:<anything>`, resolution_via_temporal: allow) is approved by no API key of any role: it was proposed by
// no person, so two IdP people approve it, the first recorded by the admin API, the second sent to the workflow,
// whose activity checks both again before anything is posted. Real PostgreSQL and Temporal dev server; tokens of a
// local issuer (test/helpers/idp.ts).
import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { reconciliationStateQuery, resolveUpdate } from '../../src/shared/inbound.js';
import { callAs, createKey } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { startLocalIssuer, type LocalIssuer } from '../helpers/idp.js';
import { testProfile } from '../helpers/profile.js';
import {
  ledgerRowsFor,
  providerEvent,
  startPaymentsPeer,
  startReconciliation,
  succeeded,
  waitFor,
} from '../helpers/reconciliation.js';
import { startWorkers, testActivities, uniqueTaskQueues } from '../helpers/temporal.js';
import { useWorld, type World } from '../helpers/world.js';

let database: Database;
let temporal: World['temporal'];
let peer: Awaited<ReturnType<typeof startPaymentsPeer>>;
let issuer: LocalIssuer;
let app: ReturnType<typeof testApp>;
let stopWorkers: () => Promise<void>;
const provider = `idp-tp-${randomUUID().slice(0, 8)}`;
const taskQueues = uniqueTaskQueues('idp-temporal');
let profile: ReturnType<typeof testProfile>;

const world = useWorld({ label: 'idp-temporal' });
beforeAll(async () => {
  database = world.database;
  temporal = world.temporal;
  peer = await startPaymentsPeer();
  issuer = await startLocalIssuer();
  profile = testProfile({
    idp: issuer.profile,
    inbound: {
      resolution_via_temporal: 'allow',
      dual_control_above: { EUR: 1500 },
      providers: {
        [provider]: { scheme: 'stripe', secret_ref: 'env:SANDBOX_STRIPE_WEBHOOK_SECRET', api_base_url: peer.baseUrl },
      },
      provider_query_backoff: { initial: '200ms', multiplier: 2, maximum: '1s' },
    },
  });
  stopWorkers = (
    await startWorkers({ connection: temporal.native, taskQueues, activities: testActivities(database.db, { profile }) })
  ).stop;
  app = testApp({ db: database.db, temporal: temporal.client, profile, taskQueues });
});
afterAll(async () => {
  await stopWorkers?.();
  await peer?.close();
  await issuer?.close();
});

describe('A27 a Temporal identity proposes; only two IdP people approve', () => {
  it('A27 an operator key is refused, one IdP person is the first of two, a second IdP person posts', async () => {
    const event = providerEvent({ amountMinor: '2500' });
    peer.set(event.paymentReference, succeeded(event, { amountMinor: '2499' }));
    const handle = await startReconciliation(temporal.client, profile, taskQueues.reconciliation, event, { provider });
    await waitFor(async () => (await handle.query(reconciliationStateQuery)).state === 'manual_review', 60_000, 'manual_review');
    const path = `/reconciliations/${encodeURIComponent(handle.workflowId)}/resolution/approve`;
    const mallory = new Client({ connection: temporal.connection, identity: 'cfo@temporal-ui' }).workflow.getHandle(
      handle.workflowId,
    );
    const answer = await mallory.executeUpdate(resolveUpdate, {
      args: [{ decision: 'applied', operator: 'cfo', reason: 'trust me', post: 'webhook' }],
    });
    expect(answer.proposal?.proposedBy).toMatchObject({ key: 'temporal:cfo@temporal-ui', via: 'temporal' });

    const operatorKey = await createKey(app, 'operator', undefined, 'op-key');
    const byKey = await callAs(app, operatorKey.token, 'POST', path);
    expect(byKey.status).toBe(403);
    expect(byKey.json.error.message).toMatch(/signed in through the identity provider/);

    const first = await callAs(app, await issuer.mint(`gus-${randomUUID()}`, { name: 'Gus' }), 'POST', path);
    expect(first.status, first.text).toBe(202);
    expect(first.json).toMatchObject({ state: 'manual_review', resolution: null });
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toEqual([]);

    const second = await callAs(app, await issuer.mint(`hana-${randomUUID()}`, { name: 'Hana' }), 'POST', path);
    expect(second.status, second.text).toBe(200);
    expect(second.json.resolution).toMatchObject({ operator: 'cfo@temporal-ui', via: 'temporal', approved_by: 'Hana' });
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toHaveLength(1);
  });
});
