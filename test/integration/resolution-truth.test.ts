// Operator resolutions on the real PostgreSQL and Temporal dev server (R2, L2, L4): ledger, audit row and
// state in one transaction; "applied" posts what the provider says (or what the operator states); the CSV
// cites only the transaction its resolution posted, signed.
import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities/index.js';
import type { Database } from '../../src/db/client.js';
import { ledgerEntries, operatorResolutions } from '../../src/db/schema/index.js';
import { commitResolution } from '../../src/inbound/resolution-store.js';
import { operatorResolutionSignal, reconciliationStateQuery, resolveUpdate, type NormalizedProviderEvent, type ProviderPayment } from '../../src/shared/inbound.js';
import { createKey } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { TEST_ADMIN_TOKEN, TEST_SECRETS_KEY } from '../helpers/env.js';
import { testProfile } from '../helpers/profile.js';
import { ledgerRowsFor, providerEvent, startReconciliation, succeeded, waitFor } from '../helpers/reconciliation.js';
import { startWorkers, testLogger, uniqueTaskQueues } from '../helpers/temporal.js';
import { parseCsv } from '../helpers/csv.js';
import { useReviewWorld, type ReviewWorld } from '../helpers/review-world.js';
import type { World } from '../helpers/world.js';

let database: Database;
let temporal: World['temporal'];
let peer: ReviewWorld['peer'];
let app: ReturnType<typeof testApp>;
let provider: string;
let profile: ReviewWorld['profile'];
const startedAt = new Date(Date.now() - 1000).toISOString();
const started: string[] = [];

const review = useReviewWorld({ label: 'resolution-truth' });
beforeAll(() => {
  ({ peer, app, provider, profile } = review);
  ({ database, temporal } = review.world);
});
afterAll(async () => {
  for (const id of started) await temporal?.client.workflow.getHandle(id).terminate('test over').catch(() => {});
});

/** The review world's profile as overrides, for an app of the same provider with other settings. */
const profileOverrides = () => ({
  inbound: {
    providers: { [provider]: { scheme: 'stripe', secret_ref: 'env:SANDBOX_STRIPE_WEBHOOK_SECRET', api_base_url: peer.baseUrl } },
    provider_query_backoff: { initial: '200ms', multiplier: 2, maximum: '1s' },
  },
});
const auth = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
/** A2: the body's operator must be the caller's own key, so each named operator gets a key of that name. */
const keys = new Map<string, Promise<string>>();
const authFor = async (body: unknown) => {
  const operator = (body as { operator?: unknown } | undefined)?.operator;
  if (typeof operator !== 'string') return auth;
  if (!keys.has(operator)) keys.set(operator, createKey(app, 'operator', undefined, operator).then((k) => k.token));
  return { authorization: `Bearer ${await keys.get(operator)}` };
};
/** An admin request that must answer within `withinMs` (R2: never hangs). */
async function call(method: string, path: string, body?: unknown, withinMs = 15_000) {
  const headers = await authFor(body);
  const request = app.request(`/admin/v1${path}`, {
    method,
    headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${method} ${path} did not answer within ${withinMs} ms`)), withinMs)));
  const response = await Promise.race([request, hung]).finally(() => clearTimeout(timer));
  const text = await response.text();
  return { status: response.status, text, json: (() => { try { return JSON.parse(text); } catch { return undefined; } })() };
}
const path = (id: string) => `/reconciliations/${encodeURIComponent(id)}`;

async function start(event: NormalizedProviderEvent) {
  const handle = await review.start(event);
  started.push(handle.workflowId);
  return handle;
}
/** An event the provider answers with `answer`: waits until it parks in manual_review. */
async function parked(event: NormalizedProviderEvent, answer: ProviderPayment) {
  peer.set(event.paymentReference, answer);
  const handle = await start(event);
  await waitFor(async () => (await handle.query(reconciliationStateQuery)).state === 'manual_review', 60_000, 'manual_review');
  return handle;
}
const postedEntries = async (ref: string) => {
  const txns = await ledgerRowsFor(database.db, ref);
  const entries = await Promise.all(txns.map((t) => database.db.select().from(ledgerEntries).where(eq(ledgerEntries.transactionId, t.id))));
  return txns.map((t, i) => ({ id: t.id, kind: t.kind, entries: entries[i]! }));
};
const paymentCredit = (rows: Awaited<ReturnType<typeof postedEntries>>, ref: string) =>
  rows.flatMap((r) => r.entries).filter((e) => e.account === `payments:${provider}:${ref}`).map((e) => `${-e.amountMinor} ${e.currency}`);

describe('R2 ledger, audit row and state in one transaction', () => {
  it('R2 a reason PostgreSQL cannot store is refused at once, nothing is posted, and a corrected resolution applies', async () => {
    const event = providerEvent({ amountMinor: '1500' });
    const handle = await parked(event, succeeded(event, { amountMinor: '1400' }));
    const bad = await call('POST', `${path(handle.workflowId)}/resolution`, { decision: 'applied', operator: 'alice', reason: 'checked\u0000' });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toMatch(/reason/);
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toEqual([]);
    expect((await handle.query(reconciliationStateQuery)).state).toBe('manual_review');

    const good = await call('POST', `${path(handle.workflowId)}/resolution`, { decision: 'applied', operator: 'alice', reason: 'checked' });
    expect(good.status).toBe(200);
    expect(good.json.state).toBe('applied');
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toHaveLength(1);
    const audit = await database.db.select().from(operatorResolutions).where(eq(operatorResolutions.reconciliationId, handle.workflowId));
    expect(audit).toHaveLength(1);
  });
});

describe('R2 refusals and answers', () => {
  it('R2 a signal with input PostgreSQL cannot store is recorded as refused in the state query, never retried', async () => {
    const event = providerEvent({ amountMinor: '1500' });
    const handle = await parked(event, succeeded(event, { amountMinor: '1400' }));
    await handle.signal(operatorResolutionSignal, { decision: 'applied', operator: 'alice', reason: 'checked\u0000' });
    await handle.signal(operatorResolutionSignal, { decision: 'applied', operator: '\uDC00', reason: 'ok' });
    const progress = await waitFor(async () => {
      const p = await handle.query(reconciliationStateQuery);
      return (p.refusedResolutions?.length ?? 0) >= 2 && p;
    }, 20_000, 'two refusals');
    expect(progress.state).toBe('manual_review');
    expect(progress.refusedResolutions).toEqual([
      { operator: 'alice', problem: 'reason must not contain U+0000', via: 'signal' },
      { operator: null, problem: 'operator must not contain a lone UTF-16 surrogate', via: 'signal' },
    ]);
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toEqual([]);
    // The update's validator refuses the same input before anything runs.
    await expect(handle.executeUpdate(resolveUpdate, { args: [{ decision: 'applied', operator: 'alice', reason: 'x'.repeat(1001) }] })).rejects.toThrow();
    await handle.signal(operatorResolutionSignal, { decision: 'rejected', operator: 'alice', reason: 'customer never paid' });
    await waitFor(async () => (await handle.query(reconciliationStateQuery)).state === 'rejected', 20_000, 'rejected');
  });

  it('C6 a signal with a decision that does not exist ({"decision":"approve"}) leaves its refusal and why in the state query', async () => {
    const event = providerEvent({ amountMinor: '1500' });
    const handle = await parked(event, succeeded(event, { amountMinor: '1400' }));
    // What an operator types in the Temporal UI's signal form: JSON, unchecked by TypeScript.
    await handle.signal(operatorResolutionSignal, { decision: 'approve' } as never);
    const progress = await waitFor(async () => {
      const p = await handle.query(reconciliationStateQuery);
      return (p.refusedResolutions?.length ?? 0) >= 1 && p;
    }, 20_000, 'the refusal');
    expect(progress.state).toBe('manual_review');
    expect(progress.refusedResolutions).toEqual([{ operator: null, problem: 'decision must be one of applied, rejected, acknowledged', via: 'signal' }]);
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toEqual([]);
    await handle.terminate('test done');
  });

  it('R2 when the database refuses the audit row, nothing of the resolution is written (ledger, audit, state)', async () => {
    const event = providerEvent({ amountMinor: '1500' });
    const handle = await parked(event, succeeded(event, { amountMinor: '1400' }));
    const fn = `f2_refuse_${randomUUID().slice(0, 8)}`;
    // Only in this test's database: refuse the audit row after the ledger posting was written in the same transaction.
    await database.db.execute(sql.raw(`create function ${fn}() returns trigger language plpgsql set search_path = pg_catalog, public, pg_temp as $$ begin
      if new.reason = 'refuse me' then raise exception 'refused by test' using errcode = '22000'; end if; return new; end $$`));
    await database.db.execute(sql.raw(`create trigger ${fn} before insert on operator_resolutions for each row execute function ${fn}()`));
    try {
      const command = {
        reconciliationId: handle.workflowId, provider, event, postingKind: 'payment' as const,
        providerPayment: { amountMinor: '1400', currency: 'EUR' }, previousState: 'manual_review' as const,
      };
      const refused = await commitResolution(database.db, { ...command, resolution: { decision: 'applied', operator: 'alice', reason: 'refuse me' } });
      expect(refused).toEqual({ status: 'refused', problem: 'the database refused the resolution (SQLSTATE 22000); nothing was written' });
      expect(await ledgerRowsFor(database.db, event.paymentReference)).toEqual([]);
      const bad = await call('POST', `${path(handle.workflowId)}/resolution`, { decision: 'applied', operator: 'alice', reason: 'refuse me' });
      expect(bad.status).toBe(409);
      expect(bad.json.error.message).toMatch(/SQLSTATE 22000/);
      expect((await handle.query(reconciliationStateQuery)).refusedResolutions?.at(-1)).toMatchObject({ operator: 'alice', via: 'update' });
    } finally {
      await database.db.execute(sql.raw(`drop trigger ${fn} on operator_resolutions; drop function ${fn}()`));
    }
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toEqual([]);
    expect(await database.db.select().from(operatorResolutions).where(eq(operatorResolutions.reconciliationId, handle.workflowId))).toEqual([]);
    const detail = await call('GET', path(handle.workflowId));
    expect(detail.json).toMatchObject({ state: 'manual_review', ledger_transaction_id: null, resolution: null });
    const good = await call('POST', `${path(handle.workflowId)}/resolution`, { decision: 'applied', operator: 'alice', reason: 'checked' });
    expect(good.json).toMatchObject({ state: 'applied', resolution: { post_basis: 'provider', posted_amount_minor: '1400', provider_currency: 'EUR' } });
  });

  it('R2 with no worker running the API answers 202 within the request timeout; the resolution lands once a worker is back', async () => {
    const queues = uniqueTaskQueues('resolution-202');
    const acts = createActivities({ db: database.db, profile, logger: testLogger, secretsKey: TEST_SECRETS_KEY });
    let worker = await startWorkers({ connection: temporal.native, taskQueues: queues, activities: acts });
    const event = providerEvent({ amountMinor: '1500' });
    peer.set(event.paymentReference, succeeded(event, { amountMinor: '1400' }));
    const handle = await startReconciliation(temporal.client, profile, queues.reconciliation, event, { provider });
    started.push(handle.workflowId);
    await waitFor(async () => (await handle.query(reconciliationStateQuery)).state === 'manual_review', 60_000, 'manual_review');
    await worker.stop();
    const quick = testApp({ db: database.db, temporal: temporal.client, profile: testProfile({ ...profileOverrides(), inbound: { ...profileOverrides().inbound, resolution_request_timeout: '1s' } }), taskQueues: queues });
    const t0 = Date.now();
    const response = await quick.request(`/admin/v1${path(handle.workflowId)}/resolution`, {
      method: 'POST',
      headers: { ...(await authFor({ operator: 'quick-op' })), 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'applied', reason: 'checked' }), // A2: the operator is the key; A12: not the bootstrap token
    });
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(response.status).toBe(202);
    expect(await response.json()).toMatchObject({ state: 'manual_review', resolution: null });
    worker = await startWorkers({ connection: temporal.native, taskQueues: queues, activities: acts });
    try {
      await waitFor(async () => (await call('GET', path(handle.workflowId))).json.state === 'applied', 30_000, 'applied after the worker came back');
      expect(await ledgerRowsFor(database.db, event.paymentReference)).toHaveLength(1);
    } finally {
      await worker.stop();
    }
  });
});

describe('L2 resolutions post what is true', () => {
  it('L2 an explicit amount is posted and audited beside the webhook and provider amounts', async () => {
    const event = providerEvent({ amountMinor: '1500' });
    const handle = await parked(event, succeeded(event, { amountMinor: '1400' }));
    const applied = await call('POST', `${path(handle.workflowId)}/resolution`, { decision: 'applied', operator: 'ana', reason: 'bank statement says 1450', post: { amount_minor: '1450', currency: 'EUR' } });
    expect(applied.status).toBe(200);
    expect(applied.json.resolution).toMatchObject({ amount_minor: '1500', currency: 'EUR', provider_amount_minor: '1400', provider_currency: 'EUR', post_basis: 'explicit', posted_amount_minor: '1450', posted_currency: 'EUR' });
    expect(paymentCredit(await postedEntries(event.paymentReference), event.paymentReference)).toEqual(['1450 EUR']);
    const rejectedPost = await call('POST', `${path(handle.workflowId)}/resolution`, { decision: 'rejected', operator: 'ana', reason: 'x', post: 'webhook' });
    expect(rejectedPost.status).toBe(400);
    expect(rejectedPost.json.error.message).toMatch(/post/);
  });

  it('L2 applied posts the provider amount by default (provider 1400, webhook 1500)', async () => {
    const event = providerEvent({ amountMinor: '1500' });
    const handle = await parked(event, succeeded(event, { amountMinor: '1400' }));
    const applied = await call('POST', `${path(handle.workflowId)}/resolution`, { decision: 'applied', operator: 'ana', reason: 'provider fee' });
    expect(applied.status).toBe(200);
    expect(paymentCredit(await postedEntries(event.paymentReference), event.paymentReference)).toEqual(['1400 EUR']);
  });

  it('L2 the provider currency wins (provider 1000 USD, webhook 1000 JPY), and a later correct event is not parked: a duplicate (L1)', async () => {
    const event = providerEvent({ amountMinor: '1000', currency: 'JPY' });
    const handle = await parked(event, succeeded(event, { currency: 'USD' }));
    const applied = await call('POST', `${path(handle.workflowId)}/resolution`, { decision: 'applied', operator: 'ana', reason: 'webhook currency wrong' });
    expect(applied.status).toBe(200);
    expect(paymentCredit(await postedEntries(event.paymentReference), event.paymentReference)).toEqual(['1000 USD']);

    const later = providerEvent({ paymentReference: event.paymentReference, amountMinor: '1000', currency: 'USD' });
    const laterHandle = await start(later);
    // L1: the capture is already in the ledger (the operator's posting): rejected as a duplicate, nothing new.
    const outcome = await laterHandle.result();
    expect(outcome.state).toBe('rejected');
    expect(outcome.reason).toMatch(new RegExp(`^duplicate: payment already settled by event ${event.providerEventId} `));
    expect(paymentCredit(await postedEntries(event.paymentReference), event.paymentReference)).toEqual(['1000 USD']);
  });
});

describe('L4 the resolutions export is the ledger', () => {
  it('L4 two resolutions of one payment: only the first cites a transaction; a refund is negative', async () => {
    const first = providerEvent({ amountMinor: '1500' });
    const second = providerEvent({ paymentReference: first.paymentReference, amountMinor: '1500' });
    const a = await parked(first, succeeded(first, { amountMinor: '1600' }));
    const b = await parked(second, succeeded(second, { amountMinor: '1600' }));
    for (const h of [a, b]) {
      expect((await call('POST', `${path(h.workflowId)}/resolution`, { decision: 'applied', operator: 'ana', reason: 'same payment' })).status).toBe(200);
    }
    const refund = providerEvent({ type: 'refund.succeeded', paymentReference: first.paymentReference, amountMinor: '400' });
    const r = await parked(refund, succeeded(refund, { amountMinor: '1600', status: 'refunded', refunds: [{ id: 're_1', amountMinor: '500' }] }));
    expect((await call('POST', `${path(r.workflowId)}/resolution`, { decision: 'applied', operator: 'ana', reason: 'the provider refunded 500' })).status).toBe(200);

    const csv = await call('GET', `/exports/operator-resolutions.csv?from=${encodeURIComponent(startedAt)}`);
    const [header, ...lines] = parseCsv(csv.text);
    const col = (name: string) => header!.indexOf(name);
    const line = (id: string) => lines.find((l) => l[col('reconciliation_id')] === id)!;
    expect(line(a.workflowId)[col('ledger_amount_minor')]).toBe('1600');
    expect(line(b.workflowId)[col('ledger_transaction_id')]).toBe('');
    expect(line(b.workflowId)[col('ledger_amount_minor')]).toBe('');
    expect(line(r.workflowId)[col('ledger_amount_minor')]).toBe('-500');
    const [sum] = await database.db.execute(sql`select sum(-e.amount_minor)::text as s from ledger_entries e join ledger_transactions t on t.id = e.transaction_id
      where t.payment_reference = ${first.paymentReference} and e.account like 'payments:%'`);
    expect(sum!.s).toBe('1100');
    // L1: the operator's refund is keyed by the one provider refund it stands for, like a system posting.
    const [refundTx] = await database.db.execute(sql`select idempotency_key, metadata->>'providerObjectId' as object from ledger_transactions
      where payment_reference = ${first.paymentReference} and kind = 'refund'`);
    expect(refundTx).toEqual({ idempotency_key: `${provider}:${first.paymentReference}:refund:re_1`, object: 're_1' });
  });
});

describe('L3 adjustments and acknowledgements', () => {
  it('L3 a later event conflicting with an operator posting names it; an adjustment settles it and acknowledged closes it without posting', async () => {
    const event = providerEvent({ amountMinor: '1500' });
    const handle = await parked(event, succeeded(event, { amountMinor: '1400' }));
    const applied = await call('POST', `${path(handle.workflowId)}/resolution`, { decision: 'applied', operator: 'ana', reason: 'trusted the webhook', post: 'webhook' });
    const operatorTx = applied.json.ledger_transaction_id as string;
    // The provider's own correct event now conflicts with ana's posting of 1500.
    const later = providerEvent({ paymentReference: event.paymentReference, amountMinor: '1400' });
    const laterHandle = await parked(later, succeeded(later));
    const review = await call('GET', path(laterHandle.workflowId));
    expect(review.json.reason).toContain(`${operatorTx} by operator:ana`);
    // L5: the ledger holds more than the provider reports, so the review item is also a discrepancy after
    // settlement (an `applied` here would post the settlement correction; this operator adjusts instead).
    expect(review.json.reason).toMatch(/^post_settlement_discrepancy: /);
    expect(review.json.discrepancy).toMatchObject({ posted: { capturedMinor: '1500' }, reported: { amountMinor: '1400' } });

    const adjustment = { provider, payment_reference: event.paymentReference, amount_minor: '-100', currency: 'EUR', operator: 'bob', reason: 'webhook overstated by 100', reconciliation_id: laterHandle.workflowId, idempotency_key: `adj-${randomUUID()}` };
    const adjusted = await call('POST', '/ledger/adjustments', adjustment);
    expect(adjusted.status).toBe(201);
    expect(adjusted.json).toMatchObject({ object: 'ledger_adjustment', amount_minor: '-100', operator: 'bob', reconciliation_id: laterHandle.workflowId });
    const again = await call('POST', '/ledger/adjustments', adjustment);
    expect(again.status).toBe(200);
    expect(again.json.id).toBe(adjusted.json.id);
    expect((await call('POST', '/ledger/adjustments', { ...adjustment, amount_minor: '-5000', idempotency_key: `adj-${randomUUID()}` })).status).toBe(409);
    expect((await call('POST', '/ledger/adjustments', { ...adjustment, payment_reference: 'pay_nobody_knows', reconciliation_id: undefined })).status).toBe(404);
    expect((await call('POST', '/ledger/adjustments', { ...adjustment, reason: 'x\u0000' })).status).toBe(400);

    const ack = await call('POST', `${path(laterHandle.workflowId)}/resolution`, { decision: 'acknowledged', operator: 'bob', reason: `settled by adjustment ${adjusted.json.id}` });
    expect(ack.status).toBe(200);
    expect(ack.json).toMatchObject({ state: 'applied', ledger_transaction_id: null, resolution: { decision: 'acknowledged', ledger_transaction_id: null, posted_amount_minor: null } });
    expect(paymentCredit(await postedEntries(event.paymentReference), event.paymentReference).sort()).toEqual(['-100 EUR', '1500 EUR'].sort());
    const list = await call('GET', `/ledger/adjustments?provider=${provider}&payment_reference=${event.paymentReference}`);
    expect(list.json.data.map((a: { id: string }) => a.id)).toEqual([adjusted.json.id]);

    const ledgerCsv = parseCsv((await call('GET', `/exports/ledger.csv?provider=${provider}&from=${encodeURIComponent(startedAt)}`)).text);
    const h = ledgerCsv[0]!;
    const ours = ledgerCsv.slice(1).filter((l) => l[h.indexOf('payment_reference')] === event.paymentReference);
    expect(ours.map((l) => `${l[h.indexOf('kind')]} ${l[h.indexOf('account')]} ${l[h.indexOf('amount_minor')]} ${l[h.indexOf('amount')]}`).sort()).toEqual(
      [
        `payment provider_clearing:${provider} 1500 15.00`,
        `payment payments:${provider}:${event.paymentReference} -1500 -15.00`,
        `adjustment provider_clearing:${provider} -100 -1.00`,
        `adjustment payments:${provider}:${event.paymentReference} 100 1.00`,
      ].sort(),
    );
    const check = await call('GET', `/ledger/check?provider=${provider}`);
    expect(check.json.violations.filter((v: { ids: string[] }) => v.ids.some((id) => id.includes(event.paymentReference)))).toEqual([]);
  });
});
