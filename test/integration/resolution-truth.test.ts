// Operator resolutions on the real PostgreSQL and Temporal dev server (R2, L2, L4): ledger, audit row and
// state in one transaction; "applied" posts what the provider says (or what the operator states); the CSV
// cites only the transaction its resolution posted, signed.
import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities/index.js';
import { createDatabase, type Database } from '../../src/db/client.js';
import { ledgerEntries, operatorResolutions } from '../../src/db/schema/index.js';
import { reconciliationStateQuery, type NormalizedProviderEvent, type ProviderPayment } from '../../src/shared/inbound.js';
import { testApp } from '../helpers/app.js';
import { TEST_ADMIN_TOKEN, TEST_DATABASE_URL, TEST_SECRETS_KEY } from '../helpers/env.js';
import { testProfile } from '../helpers/profile.js';
import { ledgerRowsFor, providerEvent, startPaymentsPeer, startReconciliation, succeeded, waitFor } from '../helpers/reconciliation.js';
import { connectDevServer, startWorkers, testLogger, uniqueTaskQueues } from '../helpers/temporal.js';
import { parseCsv } from '../helpers/csv.js';

let database: Database;
let temporal: Awaited<ReturnType<typeof connectDevServer>>;
let peer: Awaited<ReturnType<typeof startPaymentsPeer>>;
let app: ReturnType<typeof testApp>;
let stopWorkers: () => Promise<void>;
const provider = `truth-${randomUUID().slice(0, 8)}`;
const taskQueues = uniqueTaskQueues('resolution-truth');
let profile: ReturnType<typeof testProfile>;
const startedAt = new Date(Date.now() - 1000).toISOString();
const started: string[] = [];

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 4 });
  temporal = await connectDevServer();
  peer = await startPaymentsPeer();
  profile = testProfile({
    inbound: {
      providers: { [provider]: { scheme: 'stripe', secret_ref: 'env:SANDBOX_STRIPE_WEBHOOK_SECRET', api_base_url: peer.baseUrl } },
      provider_query_backoff: { initial: '200ms', multiplier: 2, maximum: '1s' },
    },
  });
  const activities = createActivities({ db: database.db, profile, logger: testLogger, secretsKey: TEST_SECRETS_KEY });
  stopWorkers = (await startWorkers({ connection: temporal.native, taskQueues, activities })).stop;
  app = testApp({ db: database.db, temporal: temporal.client, profile, taskQueues });
});
afterAll(async () => {
  for (const id of started) await temporal?.client.workflow.getHandle(id).terminate('test over').catch(() => {});
  await stopWorkers?.();
  await peer?.close();
  await temporal?.close();
  await database?.close();
});

const auth = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
/** An admin request that must answer within `withinMs` (R2: never hangs). */
async function call(method: string, path: string, body?: unknown, withinMs = 15_000) {
  const request = app.request(`/admin/v1${path}`, {
    method,
    headers: { ...auth, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
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
  const handle = await startReconciliation(temporal.client, profile, taskQueues.reconciliation, event, { provider });
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

describe('L2 resolutions post what is true', () => {
  it('L2 applied posts the provider amount by default (provider 1400, webhook 1500)', async () => {
    const event = providerEvent({ amountMinor: '1500' });
    const handle = await parked(event, succeeded(event, { amountMinor: '1400' }));
    const applied = await call('POST', `${path(handle.workflowId)}/resolution`, { decision: 'applied', operator: 'ana', reason: 'provider fee' });
    expect(applied.status).toBe(200);
    expect(paymentCredit(await postedEntries(event.paymentReference), event.paymentReference)).toEqual(['1400 EUR']);
  });

  it('L2 the provider currency wins (provider 1000 USD, webhook 1000 JPY), and a later correct event is applied, not parked', async () => {
    const event = providerEvent({ amountMinor: '1000', currency: 'JPY' });
    const handle = await parked(event, succeeded(event, { currency: 'USD' }));
    const applied = await call('POST', `${path(handle.workflowId)}/resolution`, { decision: 'applied', operator: 'ana', reason: 'webhook currency wrong' });
    expect(applied.status).toBe(200);
    expect(paymentCredit(await postedEntries(event.paymentReference), event.paymentReference)).toEqual(['1000 USD']);

    const later = providerEvent({ paymentReference: event.paymentReference, amountMinor: '1000', currency: 'USD' });
    const laterHandle = await start(later);
    expect((await laterHandle.result()).state).toBe('applied');
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
  });
});
