// A27 (issue 29, the third attack): a resolution proposed through Temporal under a made-up identity
// (`temporal:<anything>`, resolution_via_temporal: allow) is approved by no API key of any role: it was proposed by
// no person, so two IdP people approve it, the first recorded by the admin API, the second sent to the workflow,
// whose activity checks both again before anything is posted. Real PostgreSQL and Temporal dev server; tokens of a
// local issuer (test/helpers/idp.ts).
import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveUpdate } from '../../src/shared/inbound.js';
import { callAs, createKey } from '../helpers/access.js';
import { startLocalIssuer, type LocalIssuer } from '../helpers/idp.js';
import { ledgerRowsFor } from '../helpers/reconciliation.js';
import { useReviewWorld } from '../helpers/review-world.js';

let issuer: LocalIssuer;
beforeAll(async () => {
  issuer = await startLocalIssuer(); // before the review world's profile reads it
});
afterAll(async () => {
  await issuer?.close();
});
const review = useReviewWorld({
  label: 'idp-temporal',
  inbound: { resolution_via_temporal: 'allow', dual_control_above: { EUR: 1500 } },
  profile: () => ({ idp: issuer.profile }),
});

describe('A27 a Temporal identity proposes; only two IdP people approve', () => {
  it('A27 an operator key is refused, one IdP person is the first of two, a second IdP person posts', async () => {
    const { event, handle, path: resource } = await review.parked('2500');
    const path = `${resource}/resolution/approve`;
    const { app, world } = review;
    const mallory = new Client({ connection: world.temporal.connection, identity: 'cfo@temporal-ui' }).workflow.getHandle(
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
    expect(await ledgerRowsFor(world.db, event.paymentReference)).toEqual([]);

    const second = await callAs(app, await issuer.mint(`hana-${randomUUID()}`, { name: 'Hana' }), 'POST', path);
    expect(second.status, second.text).toBe(200);
    expect(second.json.resolution).toMatchObject({ operator: 'cfo@temporal-ui', via: 'temporal', approved_by: 'Hana' });
    expect(await ledgerRowsFor(world.db, event.paymentReference)).toHaveLength(1);
  });
});
