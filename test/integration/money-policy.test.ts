// A11 one money policy for every path (issue 23, item 2), on the real PostgreSQL and the Temporal dev server:
// a posting an operator causes is in the payment's currency unless the request says why (and then always needs a
// second person); a currency the dual-control map does not name gets the default limit; the limit holds per
// request, per payment and per operator per day, so ten postings just below it do not post alone. Also A14: a
// Temporal identity never approves a proposal (only a person signed in to the admin API or console does).
import { randomUUID } from 'node:crypto';
import { Client, WorkflowUpdateFailedError } from '@temporalio/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { approveResolutionUpdate, reconciliationStateQuery, resolveUpdate } from '../../src/shared/inbound.js';
import { callAs, createKey, type Caller } from '../helpers/access.js';
import { ledgerRowsFor } from '../helpers/reconciliation.js';

import { useReviewWorld, type ReviewWorld } from '../helpers/review-world.js';
import type { World } from '../helpers/world.js';

const review = useReviewWorld({
  label: 'money-policy',
  inbound: {
    resolution_via_temporal: 'allow',
    dual_control_above: { USD: 100000, EUR: 100000 }, // the demo's map: 1,000.00; GBP is not named
  },
});
const { provider, parked } = review;
let database: World['database'];
let temporal: World['temporal'];
let app: ReviewWorld['app'];
let alice: Caller;
let bob: Caller;
let carol: Caller;
beforeAll(async () => {
  ({ database, temporal } = review.world);
  app = review.app;
  const tag = randomUUID().slice(0, 6);
  alice = await createKey(app, 'operator', undefined, `alice-${tag}`);
  bob = await createKey(app, 'operator', undefined, `bob-${tag}`);
  carol = await createKey(app, 'operator', undefined, `carol-${tag}`);
});
const adjust = (paymentReference: string, amountMinor: string, currency = 'EUR', extra: Record<string, unknown> = {}) => ({
  provider,
  payment_reference: paymentReference,
  amount_minor: amountMinor,
  currency,
  reason: 'bank statement line 7',
  ...extra,
});

describe('A11 one money policy', () => {
  it('A11 a GBP adjustment of 9,000,000.00 on a EUR payment does not post alone: refused without a currency reason, a proposal with one', async () => {
    const { event } = await parked('1000');
    const bare = await callAs(
      app,
      alice.token,
      'POST',
      '/ledger/adjustments',
      adjust(event.paymentReference, '900000000', 'GBP'),
    );
    expect(bare.status).toBe(400);
    expect(bare.json.error.message).toMatch(/currency_reason/);
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toEqual([]);
    const said = await callAs(
      app,
      alice.token,
      'POST',
      '/ledger/adjustments',
      adjust(event.paymentReference, '900000000', 'GBP', { currency_reason: 'the acquirer settled in GBP' }),
    );
    expect(said.status).toBe(202);
    expect(said.json).toMatchObject({ object: 'ledger_adjustment_proposal', currency: 'GBP', closed: null });
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toEqual([]);
  });

  it('A11 even a small cross-currency correction needs a second person', async () => {
    const { event } = await parked('1000');
    const small = await callAs(
      app,
      alice.token,
      'POST',
      '/ledger/adjustments',
      adjust(event.paymentReference, '5', 'GBP', { currency_reason: 'rounding at the acquirer' }),
    );
    expect(small.status).toBe(202);
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toEqual([]);
  });

  it('A11 a currency the map does not name gets the default limit (the smallest named one when none is set)', async () => {
    const { event } = await parked('1000', 'GBP');
    const big = await callAs(app, bob.token, 'POST', '/ledger/adjustments', adjust(event.paymentReference, '900000000', 'GBP'));
    expect(big.status).toBe(202);
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toEqual([]);
  });

  it('A11 ten adjustments just below the limit on one payment: the first posts, the rest wait for a second person', async () => {
    const { event } = await parked('1000');
    const statuses: number[] = [];
    const keys = Array.from({ length: 10 }, () => `split-${randomUUID()}`);
    for (const key of keys) {
      const res = await callAs(
        app,
        carol.token,
        'POST',
        '/ledger/adjustments',
        adjust(event.paymentReference, '99999', 'EUR', { idempotency_key: key }),
      );
      statuses.push(res.status);
    }
    expect(statuses).toEqual([201, 202, 202, 202, 202, 202, 202, 202, 202, 202]);
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toHaveLength(1);
    // The first one repeated is its replay (200), not a new posting the budget would now refuse.
    const again = await callAs(
      app,
      carol.token,
      'POST',
      '/ledger/adjustments',
      adjust(event.paymentReference, '99999', 'EUR', { idempotency_key: keys[0] }),
    );
    expect(again.status).toBe(200);
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toHaveLength(1);
  });

  it('A11 splitting over payments does not escape either: the limit is per operator per day', async () => {
    const dave = await createKey(app, 'operator', undefined, `dave-${randomUUID().slice(0, 6)}`);
    const one = await parked('1000');
    const two = await parked('1000');
    expect(
      (await callAs(app, dave.token, 'POST', '/ledger/adjustments', adjust(one.event.paymentReference, '60000'))).status,
    ).toBe(201);
    expect(
      (await callAs(app, dave.token, 'POST', '/ledger/adjustments', adjust(two.event.paymentReference, '60000'))).status,
    ).toBe(202);
    expect(await ledgerRowsFor(database.db, two.event.paymentReference)).toEqual([]);
  });

  it('A11 a resolution posting an explicit amount in another currency is refused without a reason and proposed with one', async () => {
    const { event, handle, path } = await parked('1000');
    const gbp = {
      decision: 'applied',
      reason: 'confirmed with the provider',
      post: { amount_minor: '900000000', currency: 'GBP' },
    };
    const bare = await callAs(app, alice.token, 'POST', `${path}/resolution`, gbp);
    expect(bare.status).toBeGreaterThanOrEqual(400);
    expect(JSON.stringify(bare.json)).toMatch(/currency_reason|currencyReason/);
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toEqual([]);
    const said = await callAs(app, alice.token, 'POST', `${path}/resolution`, {
      ...gbp,
      post: { ...gbp.post, currency_reason: 'the acquirer settled in GBP' },
    });
    expect(said.status).toBe(202);
    expect((await handle.query(reconciliationStateQuery)).state).toBe('manual_review');
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toEqual([]);
  });

  it('A11 a resolution posting just below the limit after an adjustment on the same payment is proposed (per payment)', async () => {
    const erin = await createKey(app, 'operator', undefined, `erin-${randomUUID().slice(0, 6)}`);
    const { event, path } = await parked('90000');
    expect((await callAs(app, erin.token, 'POST', '/ledger/adjustments', adjust(event.paymentReference, '20000'))).status).toBe(
      201,
    );
    const frank = await createKey(app, 'operator', undefined, `frank-${randomUUID().slice(0, 6)}`);
    const resolved = await callAs(app, frank.token, 'POST', `${path}/resolution`, {
      decision: 'applied',
      reason: 'seen at the bank',
      post: 'webhook',
    });
    expect(resolved.status).toBe(202);
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toHaveLength(1); // the adjustment only
  });
});

describe('A14 the Temporal path cannot complete dual control', () => {
  it('A14 a second Temporal identity cannot approve a Temporal proposal; a person through the admin API can', async () => {
    const { event, handle, path } = await parked('250000');
    const ana = new Client({ connection: temporal.connection, identity: 'ana@temporal-ui' }).workflow.getHandle(
      handle.workflowId,
    );
    const answer = await ana.executeUpdate(resolveUpdate, {
      args: [{ decision: 'applied', operator: 'ignored', reason: 'confirmed', post: 'webhook' }],
    });
    expect(answer.proposal).toBeTruthy();
    const ben = new Client({ connection: temporal.connection, identity: 'ben@temporal-ui' }).workflow.getHandle(
      handle.workflowId,
    );
    const second = await ben
      .executeUpdate(approveResolutionUpdate, { args: [{ proposalId: answer.proposal!.id }] })
      .catch((e: unknown) => e);
    expect(second).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(String((second as WorkflowUpdateFailedError).cause?.message)).toMatch(/admin API or the console/);
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toEqual([]);
    const approved = await callAs(app, bob.token, 'POST', `${path}/resolution/approve`);
    expect(approved.status).toBe(200);
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toHaveLength(1);
  });
});
