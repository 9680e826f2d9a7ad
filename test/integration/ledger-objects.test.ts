// L1 and L5 end to end: the provider sandbox sends signed webhooks to the real ingress, reconciliations run on the
// real Temporal dev server and post to the PostgreSQL ledger. One posting per provider object, whatever the number
// of webhooks; discrepancies after settlement open a review item and revert nothing.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconciliationStateQuery, resolveUpdate } from '../../src/shared/inbound.js';
import { ledgerRowsFor, waitFor } from '../helpers/reconciliation.js';
import { startProviderWorld, type ProviderWorld } from '../helpers/provider-world.js';

let world: ProviderWorld;
beforeAll(async () => {
  world = await startProviderWorld('l1', { provider_query_backoff: { initial: '200ms', multiplier: 2, maximum: '1s' }, reconciliation_timeout: '20s' });
});
afterAll(async () => world?.close());

const ref = (label: string) => `pi_${label}_${randomUUID().replaceAll('-', '').slice(0, 12)}`;

/** Sends one webhook and waits until its reconciliation has settled (applied, rejected or manual_review). */
async function deliver(provider: string, event: Parameters<ProviderWorld['sandbox']['sendWebhook']>[1]) {
  const sent = await world.sandbox.sendWebhook(provider, event);
  expect(sent.deliveries.map((d) => d.status)).toEqual([200]);
  return world.settled(provider, sent.eventId);
}

describe('L1 one posting per provider object', () => {
  it('L1 three refund webhooks for the one provider refund re_4a (three event ids) post 300 once; the others are duplicates', async () => {
    const reference = ref('r4');
    world.sandbox.upsertPayment(world.stripe, reference, { status: 'succeeded', amountMinor: 1000, currency: 'EUR' });
    expect((await deliver(world.stripe, { type: 'payment.succeeded', reference })).state).toBe('applied');
    world.sandbox.upsertPayment(world.stripe, reference, { status: 'refunded', amountMinor: 1000, currency: 'EUR', refunds: [{ id: 're_4a', amountMinor: 300 }] });
    const outcomes = [];
    for (let i = 0; i < 3; i += 1) outcomes.push(await deliver(world.stripe, { type: 'refund.succeeded', reference, amountMinor: 300, objectId: 're_4a' }));
    expect(outcomes.map((o) => o.state)).toEqual(['applied', 'rejected', 'rejected']);
    expect(outcomes[1]!.reason).toMatch(/^duplicate: refund re_4a already posted by event /);
    expect(outcomes[1]!.ledgerTransactionId).toBeNull();
    expect(await world.settledAmount(world.stripe, reference)).toBe(700n);
    const txns = await ledgerRowsFor(world.db, reference);
    expect(txns.map((t) => [t.kind, t.idempotencyKey])).toEqual([
      ['payment', `${world.stripe}:${reference}:payment`],
      ['refund', `${world.stripe}:${reference}:refund:re_4a`],
    ]);
  });

  it('L1 a provider that sends no refund id: the first webhook claims re_4a, the next ones find no unclaimed refund and wait for an operator', async () => {
    const reference = ref('r4h');
    world.sandbox.upsertPayment(world.hmac, reference, { status: 'succeeded', amountMinor: 1000, currency: 'EUR' });
    expect((await deliver(world.hmac, { type: 'payment.succeeded', reference })).state).toBe('applied');
    world.sandbox.upsertPayment(world.hmac, reference, { status: 'refunded', amountMinor: 1000, currency: 'EUR', refunds: [{ id: 're_4a', amountMinor: 300 }] });
    const outcomes = [];
    for (let i = 0; i < 3; i += 1) outcomes.push(await deliver(world.hmac, { type: 'refund.succeeded', reference, amountMinor: 300, objectId: null }));
    expect(outcomes.map((o) => o.state)).toEqual(['applied', 'manual_review', 'manual_review']);
    expect(outcomes[2]!.reason).toMatch(/^no_unclaimed_item: every refund of 300 EUR the provider lists is already posted \(re_4a by event /);
    expect(await world.settledAmount(world.hmac, reference)).toBe(700n);
    const refund = (await ledgerRowsFor(world.db, reference)).find((t) => t.kind === 'refund')!;
    expect(refund.idempotencyKey).toBe(`${world.hmac}:${reference}:refund:re_4a`);
    expect(refund.metadata).toMatchObject({ providerObjectId: 're_4a', matchedBy: 'amount', providerEventId: outcomes[0]!.providerEventId });
  });

  it('L1 one 500 dispute item, then a chargeback, a refund and a reversal event of 500: only the chargeback posts', async () => {
    const reference = ref('dp');
    world.sandbox.upsertPayment(world.stripe, reference, { status: 'succeeded', amountMinor: 2000, currency: 'EUR' });
    expect((await deliver(world.stripe, { type: 'payment.succeeded', reference })).state).toBe('applied');
    world.sandbox.upsertPayment(world.stripe, reference, { status: 'disputed', amountMinor: 2000, currency: 'EUR', disputes: [{ id: 'dp_5a', amountMinor: 500 }] });
    const chargeback = await deliver(world.stripe, { type: 'chargeback.created', reference, amountMinor: 500, objectId: 'dp_5a' });
    const refund = await deliver(world.stripe, { type: 'refund.succeeded', reference, amountMinor: 500 });
    const reversal = await deliver(world.stripe, { type: 'payment.reversed', reference, amountMinor: 500 });
    expect([chargeback.state, refund.state, reversal.state]).toEqual(['applied', 'manual_review', 'manual_review']);
    expect(refund.reason).toMatch(/^item_not_listed: the provider lists no refund re_/);
    expect(reversal.reason).toMatch(/^item_not_listed: the provider lists no reversal rv_/);
    expect(await world.settledAmount(world.stripe, reference)).toBe(1500n);
  });

  it('L1 a status-only answer (disputed, refunded) confirms nothing: the event goes to manual_review, nothing posted', async () => {
    const reference = ref('st');
    world.sandbox.upsertPayment(world.hmac, reference, { status: 'succeeded', amountMinor: 800, currency: 'EUR' });
    expect((await deliver(world.hmac, { type: 'payment.succeeded', reference })).state).toBe('applied');
    world.sandbox.upsertPayment(world.hmac, reference, { status: 'disputed', amountMinor: 800, currency: 'EUR' });
    const chargeback = await deliver(world.hmac, { type: 'chargeback.created', reference, amountMinor: 800 });
    expect(chargeback.state).toBe('manual_review');
    expect(chargeback.reason).toMatch(/^item_not_listed: .*status disputed alone confirms nothing/);
    expect(await world.settledAmount(world.hmac, reference)).toBe(800n);
  });

  it('L1 two provider refunds of the same amount without ids: two webhooks claim one each, the adapters keep ids where given', async () => {
    const reference = ref('two');
    world.sandbox.upsertPayment(world.hmac, reference, { status: 'succeeded', amountMinor: 1000, currency: 'EUR' });
    expect((await deliver(world.hmac, { type: 'payment.succeeded', reference })).state).toBe('applied');
    world.sandbox.upsertPayment(world.hmac, reference, {
      status: 'refunded',
      amountMinor: 1000,
      currency: 'EUR',
      refunds: [{ id: 're_x', amountMinor: 250 }, { id: 're_y', amountMinor: 250 }],
    });
    const [a, b] = await Promise.all([
      deliver(world.hmac, { type: 'refund.succeeded', reference, amountMinor: 250, objectId: null }),
      deliver(world.hmac, { type: 'refund.succeeded', reference, amountMinor: 250, objectId: null }),
    ]);
    expect([a!.state, b!.state]).toEqual(['applied', 'applied']);
    const keys = (await ledgerRowsFor(world.db, reference)).filter((t) => t.kind === 'refund').map((t) => t.idempotencyKey).sort();
    expect(keys).toEqual([`${world.hmac}:${reference}:refund:re_x`, `${world.hmac}:${reference}:refund:re_y`]);
    expect(await world.settledAmount(world.hmac, reference)).toBe(500n);
  });
});

describe('L5 discrepancies after settlement', () => {
  it('L5 the provider reports failed for a payment already credited: nothing reverted, a review item with posted and reported side by side', async () => {
    const reference = ref('late');
    world.sandbox.upsertPayment(world.stripe, reference, { status: 'succeeded', amountMinor: 1200, currency: 'EUR' });
    expect((await deliver(world.stripe, { type: 'payment.succeeded', reference })).state).toBe('applied');
    world.sandbox.upsertPayment(world.stripe, reference, { status: 'failed', amountMinor: 1200, currency: 'EUR' });
    const failed = await deliver(world.stripe, { type: 'payment.failed', reference });
    expect(failed.state).toBe('manual_review');
    expect(failed.reason).toMatch(/^post_settlement_discrepancy: ledger settled 1200 EUR \(captured 1200\), provider reports failed 1200 EUR/);
    expect(failed.discrepancy).toMatchObject({
      posted: { capturedMinor: '1200', settledMinor: '1200', currency: 'EUR' },
      reported: { status: 'failed', amountMinor: '1200', currency: 'EUR', settledMinor: '0' },
    });
    expect(await world.settledAmount(world.stripe, reference)).toBe(1200n);
    expect((await ledgerRowsFor(world.db, reference)).map((t) => t.kind)).toEqual(['payment']);
    // An operator who applies it brings the ledger to the provider's report, once.
    const handle = world.temporal.client.workflow.getHandle(failed.id);
    await waitFor(async () => (await handle.query(reconciliationStateQuery)).state === 'manual_review', 30_000, 'manual_review');
    expect((await handle.executeUpdate(resolveUpdate, { args: [{ decision: 'applied', operator: 'ana@finance', reason: 'provider statement: failed' }] })).state).toBe('applied');
    expect(await world.settledAmount(world.stripe, reference)).toBe(0n);
    const txns = await ledgerRowsFor(world.db, reference);
    expect(txns.map((t) => [t.kind, t.idempotencyKey])).toEqual([
      ['payment', `${world.stripe}:${reference}:payment`],
      ['reversal', `${world.stripe}:${failed.id}:settlement_correction`],
    ]);
    expect((await world.reconciliation(world.stripe, failed.providerEventId))?.ledgerTransactionId).toBe(txns[1]!.id);
  });

  it('L5 the provider lowers the amount of a credited payment: the new capture event opens a review item, nothing reverted', async () => {
    const reference = ref('lower');
    world.sandbox.upsertPayment(world.hmac, reference, { status: 'succeeded', amountMinor: 1000, currency: 'EUR' });
    expect((await deliver(world.hmac, { type: 'payment.succeeded', reference })).state).toBe('applied');
    world.sandbox.upsertPayment(world.hmac, reference, { status: 'succeeded', amountMinor: 900, currency: 'EUR' });
    const lower = await deliver(world.hmac, { type: 'payment.succeeded', reference });
    expect(lower.state).toBe('manual_review');
    expect(lower.reason).toMatch(/^post_settlement_discrepancy: ledger settled 1000 EUR \(captured 1000\), provider reports succeeded 900 EUR/);
    expect(lower.discrepancy).toMatchObject({ posted: { capturedMinor: '1000' }, reported: { amountMinor: '900', settledMinor: '900' } });
    expect(await world.settledAmount(world.hmac, reference)).toBe(1000n);
    // Acknowledged without posting: rejected leaves the ledger as it is.
    const handle = world.temporal.client.workflow.getHandle(lower.id);
    await waitFor(async () => (await handle.query(reconciliationStateQuery)).state === 'manual_review', 30_000, 'manual_review');
    await handle.executeUpdate(resolveUpdate, { args: [{ decision: 'rejected', operator: 'bob@finance', reason: 'fee, booked elsewhere' }] });
    expect(await world.settledAmount(world.hmac, reference)).toBe(1000n);
    expect((await ledgerRowsFor(world.db, reference)).map((t) => t.kind)).toEqual(['payment']);
  });
});
