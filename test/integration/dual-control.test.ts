// A5: above the profile's dual-control amount, the first operator's resolution is a proposal: nothing is posted
// until a second, different principal approves it; the proposer cannot approve it; the proposer or another
// operator can cancel it (back to manual_review); below the amount a resolution commits at once as before.
// Shown in the reconciliation's detail and the resolutions CSV. Real PostgreSQL and the Temporal dev server.
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { resolutionProposals } from '../../src/db/schema/index.js';
import { Client, WorkflowUpdateFailedError } from '@temporalio/client';
import { approveResolutionUpdate, reconciliationStateQuery, resolveUpdate } from '../../src/shared/inbound.js';
import { callAs, createKey, type Caller } from '../helpers/access.js';
import { parseCsv } from '../helpers/csv.js';
import { TEST_ADMIN_TOKEN } from '../helpers/env.js';
import { ledgerRowsFor } from '../helpers/reconciliation.js';
import { useReviewWorld, type ReviewWorld } from '../helpers/review-world.js';
import type { World } from '../helpers/world.js';

const review = useReviewWorld({
  label: 'dual-control',
  inbound: { resolution_via_temporal: 'allow', dual_control_above: { EUR: 1500 } },
});
const { provider, parked } = review;
let database: World['database'];
let temporal: World['temporal'];
let app: ReviewWorld['app'];
let alice: Caller;
let bob: Caller;
const startedAt = new Date(Date.now() - 1000).toISOString();
beforeAll(async () => {
  ({ database, temporal } = review.world);
  app = review.app;
  alice = await createKey(app, 'operator', undefined, 'alice');
  bob = await createKey(app, 'operator', undefined, 'bob');
});
const applyWebhook = { decision: 'applied', operator: 'alice', reason: 'confirmed with the provider', post: 'webhook' };

describe('A5 dual control above the threshold', () => {
  it('A5 posts nothing until a second principal approves; self-approval is refused; cancel goes back to manual_review', async () => {
    const { event, handle, path } = await parked('2000');
    const proposed = await callAs(app, alice.token, 'POST', `${path}/resolution`, applyWebhook);
    expect(proposed.status).toBe(202);
    expect(proposed.json).toMatchObject({
      state: 'manual_review',
      resolution: null,
      proposal: { decision: 'applied', proposed_by: 'alice', proposed_by_key: alice.id, proposed_via: 'api' },
    });
    expect((await handle.query(reconciliationStateQuery)).proposal).toMatchObject({
      id: proposed.json.proposal.id,
      proposedBy: { key: alice.id },
    });
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toEqual([]);

    const self = await callAs(app, alice.token, 'POST', `${path}/resolution/approve`);
    expect(self.status).toBe(403);
    expect(self.json.error.message).toMatch(/second principal/);
    // A second proposal while one waits is refused.
    expect((await callAs(app, bob.token, 'POST', `${path}/resolution`, { ...applyWebhook, operator: 'bob' })).status).toBe(409);

    const cancelled = await callAs(app, bob.token, 'POST', `${path}/resolution/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.json).toMatchObject({ state: 'manual_review', proposal: null, resolution: null });
    expect((await handle.query(reconciliationStateQuery)).proposal).toBeNull();
    const [closed] = await database.db
      .select()
      .from(resolutionProposals)
      .where(eq(resolutionProposals.id, proposed.json.proposal.id));
    expect(closed).toMatchObject({ closed: 'cancelled', closedBy: 'bob', closedByKey: bob.id });
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toEqual([]);

    const again = await callAs(app, alice.token, 'POST', `${path}/resolution`, applyWebhook);
    expect(again.status).toBe(202);
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toEqual([]);
    const approved = await callAs(app, bob.token, 'POST', `${path}/resolution/approve`);
    expect(approved.status).toBe(200);
    expect(approved.json).toMatchObject({
      state: 'applied',
      proposal: null,
      resolution: {
        operator: 'alice',
        operator_key: alice.id,
        via: 'api',
        proposal_id: again.json.proposal.id,
        approved_by: 'bob',
        approved_by_key: bob.id,
        posted_amount_minor: '2000',
      },
    });
    expect(Date.parse(approved.json.resolution.approved_at)).toBeGreaterThanOrEqual(
      Date.parse(approved.json.resolution.proposed_at),
    );
    await handle.result();
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toHaveLength(1);

    const csv = await callAs(
      app,
      TEST_ADMIN_TOKEN,
      'GET',
      `/exports/operator-resolutions.csv?provider=${provider}&from=${encodeURIComponent(startedAt)}`,
    );
    const [header, ...lines] = parseCsv(csv.text);
    const line = lines.find((l) => l[header!.indexOf('reconciliation_id')] === handle.workflowId)!;
    const col = (name: string) => line[header!.indexOf(name)];
    expect([col('operator'), col('operator_key'), col('via'), col('approved_by'), col('approved_by_key')]).toEqual([
      'alice',
      alice.id,
      'api',
      'bob',
      bob.id,
    ]);
    expect(col('proposed_at')).toBe(approved.json.resolution.proposed_at);
    expect(col('approved_at')).toBe(approved.json.resolution.approved_at);

    // A3: the audit log holds each step, by whom: propose, cancel, propose again, and the approver's resolution.
    const audit = await callAs(
      app,
      TEST_ADMIN_TOKEN,
      'GET',
      `/audit-events?target_id=${encodeURIComponent(handle.workflowId)}&order=asc`,
    );
    expect(audit.status).toBe(200);
    expect(audit.json.data.map((e: { action: string; actor: { name: string } }) => [e.action, e.actor.name])).toEqual([
      ['reconciliation.propose', 'alice'],
      ['reconciliation.cancel_proposal', 'bob'],
      ['reconciliation.propose', 'alice'],
      ['reconciliation.resolve', 'bob'],
    ]);
  });

  it('A5 the proposer may cancel their own proposal; a rejection above the amount needs approval too', async () => {
    const { handle, path } = await parked('3000');
    expect(
      (await callAs(app, alice.token, 'POST', `${path}/resolution`, { decision: 'rejected', operator: 'alice', reason: 'fraud' }))
        .status,
    ).toBe(202);
    expect((await callAs(app, alice.token, 'POST', `${path}/resolution/cancel`)).status).toBe(200);
    expect((await callAs(app, alice.token, 'POST', `${path}/resolution/cancel`)).status).toBe(409);
    expect((await handle.query(reconciliationStateQuery)).state).toBe('manual_review');
  });

  it('A5 through Temporal (allowed here): the identity that proposed cannot approve; the admin API key of another can', async () => {
    const { event, handle, path } = await parked('2500');
    const ana = new Client({ connection: temporal.connection, identity: 'ana@temporal-ui' }).workflow.getHandle(
      handle.workflowId,
    );
    const answer = await ana.executeUpdate(resolveUpdate, {
      args: [{ decision: 'applied', operator: 'ignored', reason: 'confirmed', post: 'webhook' }],
    });
    expect(answer).toMatchObject({
      state: 'manual_review',
      auditId: null,
      proposal: { proposedBy: { key: 'temporal:ana@temporal-ui', via: 'temporal' } },
    });
    const self = await ana
      .executeUpdate(approveResolutionUpdate, { args: [{ proposalId: answer.proposal!.id }] })
      .catch((e: unknown) => e);
    expect(self).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(String((self as WorkflowUpdateFailedError).cause?.message)).toMatch(/cannot approve it; a second principal must/);
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toEqual([]);
    const approved = await callAs(app, bob.token, 'POST', `${path}/resolution/approve`);
    expect(approved.status).toBe(200);
    expect(approved.json.resolution).toMatchObject({
      operator: 'ana@temporal-ui',
      via: 'temporal',
      approved_by: 'bob',
      approved_by_key: bob.id,
    });
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toHaveLength(1);
  });

  it('A5 for L3: an adjustment above the amount posts only once a second principal approves; cancel; below it posts at once', async () => {
    const { event } = await parked('1000');
    const adjustment = {
      provider,
      payment_reference: event.paymentReference,
      currency: 'EUR',
      operator: 'alice',
      reason: 'bank statement line 7',
    };
    const proposed = await callAs(app, alice.token, 'POST', '/ledger/adjustments', { ...adjustment, amount_minor: '2000' });
    expect(proposed.status).toBe(202);
    expect(proposed.json).toMatchObject({
      object: 'ledger_adjustment_proposal',
      amount_minor: '2000',
      proposed_by_key: alice.id,
      closed: null,
    });
    const list = `/ledger/adjustments?provider=${provider}&payment_reference=${event.paymentReference}`;
    expect((await callAs(app, bob.token, 'GET', list)).json).toMatchObject({ data: [], proposals: [{ id: proposed.json.id }] });
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toEqual([]);

    const proposal = `/ledger/adjustments/proposals/${proposed.json.id}`;
    expect((await callAs(app, alice.token, 'POST', `${proposal}/approve`)).status).toBe(403);
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toEqual([]);
    const approved = await callAs(app, bob.token, 'POST', `${proposal}/approve`);
    expect(approved.status).toBe(200);
    expect(approved.json).toMatchObject({
      object: 'ledger_adjustment',
      amount_minor: '2000',
      operator: 'alice',
      operator_key: alice.id,
      proposal_id: proposed.json.id,
      approved_by: 'bob',
      approved_by_key: bob.id,
    });
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toHaveLength(1);
    expect((await callAs(app, bob.token, 'POST', `${proposal}/approve`)).status).toBe(409);
    expect((await callAs(app, bob.token, 'GET', list)).json.proposals).toEqual([]);

    const other = await callAs(app, alice.token, 'POST', '/ledger/adjustments', { ...adjustment, amount_minor: '-1600' });
    expect(other.status).toBe(202);
    const cancelled = await callAs(app, bob.token, 'POST', `/ledger/adjustments/proposals/${other.json.id}/cancel`);
    expect(cancelled.json).toMatchObject({ closed: 'cancelled', closed_by: 'bob', closed_by_key: bob.id });
    expect((await callAs(app, bob.token, 'POST', `/ledger/adjustments/proposals/${other.json.id}/approve`)).status).toBe(409);
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toHaveLength(1);

    const small = await callAs(app, alice.token, 'POST', '/ledger/adjustments', { ...adjustment, amount_minor: '100' });
    expect(small.status).toBe(201);
    expect(small.json).toMatchObject({ operator_key: alice.id, approved_by: null });
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toHaveLength(2);

    for (const [id, actions] of [
      [proposed.json.id, ['ledger_adjustment.propose:alice']],
      [other.json.id, ['ledger_adjustment.propose:alice', 'ledger_adjustment.cancel:bob']],
    ] as const) {
      const audit = await callAs(app, TEST_ADMIN_TOKEN, 'GET', `/audit-events?target_id=${id}&order=asc`);
      expect(audit.json.data.map((e: { action: string; actor: { name: string } }) => `${e.action}:${e.actor.name}`)).toEqual(
        actions,
      );
    }
  });

  it('A5 below the amount a resolution commits at once, as before', async () => {
    const { event, handle, path } = await parked('1000');
    const resolved = await callAs(app, alice.token, 'POST', `${path}/resolution`, applyWebhook);
    expect(resolved.status).toBe(200);
    expect(resolved.json).toMatchObject({
      state: 'applied',
      proposal: null,
      resolution: { operator: 'alice', approved_by: null, proposal_id: null },
    });
    await handle.result();
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toHaveLength(1);
  });
});
