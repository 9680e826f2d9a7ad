// L4 and L6 on the real PostgreSQL: `ledger check` detects each violation (rows inserted directly, the
// append-only and balance triggers bypassed inside the test only), and for any period the applied lines of the
// resolutions export equal, per currency, what operators' resolutions posted (fast-check over resolution sequences).
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { reconciliations, reconciliationTransitions } from '../../src/db/schema/index.js';
import { commitResolution } from '../../src/inbound/resolution-store.js';
import { checkLedger } from '../../src/ledger/check.js';
import { exportTotals, operatorResolutionTotals, resolutionLines } from '../../src/ledger/exports.js';
import { contentHash, legacyContentHash, type PostingKind } from '../../src/ledger/postings.js';
import type { OperatorResolution, ProviderEventType } from '../../src/shared/inbound.js';
import { testApp } from '../helpers/app.js';
import { parseCsv } from '../helpers/csv.js';
import { TEST_ADMIN_TOKEN } from '../helpers/env.js';
import { useWorld, type World } from '../helpers/world.js';

let database: Database;
let temporal: World['temporal'];
let app: ReturnType<typeof testApp>;
const world = useWorld({ label: 'ledger-check' });
beforeAll(async () => {
  database = world.database;
  temporal = world.temporal;
  app = testApp({ db: database.db, temporal: temporal.client, taskQueues: { delivery: 'x', reconciliation: 'x', smoke: 'x' } });
});

const newProvider = (label: string) => `chk-${label}-${randomUUID().slice(0, 8)}`;
let seq = 0;

/** Inserts ledger rows as given, with the triggers off for this transaction only (needs the postgres role). */
async function insertRaw(provider: string, txns: { kind: string; ref: string; actor?: string; objectId?: string; reconciliationId?: string; hashOf?: (id: string) => string; entries: [string, number, string][] }[]): Promise<string[]> {
  const ids: string[] = [];
  await database.db.transaction(async (tx) => {
    await tx.execute(sql`set local session_replication_role = replica`);
    for (const t of txns) {
      const id = `ltx_test_${++seq}_${randomUUID().slice(0, 8)}`;
      ids.push(id);
      const metadata = { provider, actor: t.actor ?? 'system', providerEventId: 'evt', reconciliationId: t.reconciliationId ?? 'none', ...(t.objectId ? { providerObjectId: t.objectId } : {}) };
      // A21: the hash of the entries as given (what the posting function would have written), unless a test says otherwise.
      const entries = t.entries.map(([account, amount, currency]) => ({ account: account.replace('$p', provider), amountMinor: BigInt(amount), currency }));
      const hash = t.hashOf?.(id) ?? contentHash({ idempotencyKey: `${id}:key`, kind: t.kind as PostingKind, provider, paymentReference: t.ref, currency: '', amountMinor: 0n, entries });
      await tx.execute(sql`insert into ledger_transactions (id, idempotency_key, content_hash, kind, payment_reference, effective_at, metadata)
        values (${id}, ${`${id}:key`}, ${hash}, ${t.kind}, ${t.ref}, now(), ${JSON.stringify(metadata)}::jsonb)`);
      for (const [account, amount, currency] of t.entries) {
        await tx.execute(sql`insert into ledger_entries (transaction_id, account, amount_minor, currency) values (${id}, ${account.replace('$p', provider)}, ${amount}, ${currency})`);
      }
    }
  });
  return ids;
}

async function reconciliation(provider: string, ref: string, o: { type?: ProviderEventType; amount?: string; currency?: string; providerAmount?: string | null; providerCurrency?: string | null } = {}) {
  const eventId = `evt_${randomUUID()}`;
  const id = `reconcile:${provider}:${eventId}`;
  const event = { providerEventId: eventId, type: o.type ?? 'payment.succeeded', paymentReference: ref, amountMinor: o.amount ?? '1000', currency: o.currency ?? 'EUR', effectiveAt: new Date().toISOString() };
  await database.db.insert(reconciliations).values({
    id, provider, providerEventId: eventId, eventType: event.type, paymentReference: ref, amountMinor: BigInt(event.amountMinor), currency: event.currency,
    effectiveAt: new Date(), state: 'manual_review', reason: 'test', acknowledgedAt: new Date(),
    providerAmountMinor: o.providerAmount === null ? null : BigInt(o.providerAmount ?? event.amountMinor),
    providerCurrency: o.providerCurrency === null ? null : (o.providerCurrency ?? event.currency),
  });
  // R14: the trail of how it got to manual_review, as the workflow would have recorded it (the after-file path check).
  await database.db.insert(reconciliationTransitions).values([
    { reconciliationId: id, fromState: 'received', toState: 'reconciling', actor: 'system', reason: null },
    { reconciliationId: id, fromState: 'reconciling', toState: 'manual_review', actor: 'system', reason: 'test' },
  ]);
  return { id, event };
}

const kinds = async (provider: string) => (await checkLedger(database.db, { provider })).violations.map((v) => v.kind).sort();

describe('L6 ledger check', () => {
  it('L6 a clean ledger passes: a payment resolved by an operator and its refund', async () => {
    const provider = newProvider('ok');
    const { id, event } = await reconciliation(provider, 'pay_ok', { amount: '1500', providerAmount: '1400' });
    const done = await commitResolution(database.db, { reconciliationId: id, provider, event, postingKind: 'payment', providerPayment: { amountMinor: '1400', currency: 'EUR' }, resolution: { decision: 'applied', operator: 'ana', reason: 'ok' }, previousState: 'manual_review' });
    expect(done.status).toBe('committed');
    expect(await checkLedger(database.db, { provider })).toMatchObject({ ok: true, violations: [], checked: { transactions: 1, payment_accounts: 1, resolutions: 1 } });
  });

  it('L6 an unbalanced transaction', async () => {
    const provider = newProvider('unbal');
    await reconciliation(provider, 'pay_u');
    await insertRaw(provider, [{ kind: 'payment', ref: 'pay_u', entries: [['provider_clearing:$p', 1000, 'EUR'], ['payments:$p:pay_u', -900, 'EUR']] }]);
    expect(await kinds(provider)).toEqual(['unbalanced']);
  });

  it('A21 a transaction whose entries no longer match its content hash (entries appended before 0029 forbade it); a pre-0029 hash passes', async () => {
    const provider = newProvider('hash');
    await reconciliation(provider, 'pay_h', { providerAmount: '1500' });
    await reconciliation(provider, 'pay_l', { providerAmount: '700' });
    const appended = [['provider_clearing:$p', 1000, 'EUR'], ['payments:$p:pay_h', -1000, 'EUR']] as [string, number, string][];
    const id = await insertRaw(provider, [{ kind: 'payment', ref: 'pay_h', entries: appended }]);
    await database.db.transaction(async (tx) => {
      await tx.execute(sql`set local session_replication_role = replica`); // as a superuser could, or as anyone could before 0029
      await tx.execute(sql`insert into ledger_entries (transaction_id, account, amount_minor, currency) values (${id[0]!}, ${`provider_clearing:${provider}`}, 500, 'EUR'), (${id[0]!}, ${`payments:${provider}:pay_h`}, -500, 'EUR')`);
    });
    const legacyEntries = [['provisional_clearing:$p', 700, 'EUR'], ['provisional:$p:pay_l', -700, 'EUR']] as [string, number, string][];
    const legacy = (txId: string) =>
      legacyContentHash({ idempotencyKey: `${txId}:key`, kind: 'provisional', provider, paymentReference: 'pay_l', currency: '', amountMinor: 0n, entries: legacyEntries.map(([a, m, c]) => ({ account: a.replace('$p', provider), amountMinor: BigInt(m), currency: c })) });
    await insertRaw(provider, [{ kind: 'provisional', ref: 'pay_l', entries: legacyEntries, hashOf: legacy }]);
    const found = (await checkLedger(database.db, { provider })).violations;
    expect(found.map((v) => `${v.kind} ${v.ids[0]}`)).toEqual([`hash_mismatch ${id[0]}`]);
  });

  it('L6 a payment account past what the provider settled, negative, or in a currency the provider never reported', async () => {
    const provider = newProvider('past');
    await reconciliation(provider, 'pay_a', { providerAmount: '1000' });
    await reconciliation(provider, 'pay_b', { providerAmount: '1000' });
    await reconciliation(provider, 'pay_c', { providerAmount: '1000', providerCurrency: 'USD' });
    await insertRaw(provider, [
      { kind: 'payment', ref: 'pay_a', entries: [['provider_clearing:$p', 1200, 'EUR'], ['payments:$p:pay_a', -1200, 'EUR']] },
      { kind: 'refund', ref: 'pay_b', entries: [['payments:$p:pay_b', 300, 'EUR'], ['provider_clearing:$p', -300, 'EUR']] },
      { kind: 'payment', ref: 'pay_c', entries: [['provider_clearing:$p', 1000, 'EUR'], ['payments:$p:pay_c', -1000, 'EUR']] },
    ]);
    const found = (await checkLedger(database.db, { provider })).violations;
    expect(found.map((v) => `${v.kind} ${v.ids[0]}`).sort()).toEqual([`past_settled payments:${provider}:pay_a`, `past_settled payments:${provider}:pay_b`, `past_settled payments:${provider}:pay_c`]);
    expect(found.find((v) => v.ids[0]!.endsWith('pay_a'))!.message).toMatch(/holds 1200 EUR, the provider settled 1000/);
  });

  it('L6 a provider object id posted twice (a payment settled twice; one refund object in two postings)', async () => {
    const provider = newProvider('twice');
    await reconciliation(provider, 'pay_t', { providerAmount: '5000' });
    const pay = (): [string, number, string][] => [['provider_clearing:$p', 1000, 'EUR'], ['payments:$p:pay_t', -1000, 'EUR']];
    const refund = (): [string, number, string][] => [['payments:$p:pay_t', 100, 'EUR'], ['provider_clearing:$p', -100, 'EUR']];
    await insertRaw(provider, [
      { kind: 'payment', ref: 'pay_t', entries: pay() },
      { kind: 'payment', ref: 'pay_t', entries: pay() },
      { kind: 'refund', ref: 'pay_t', objectId: 're_1', entries: refund() },
      { kind: 'chargeback', ref: 'pay_t', objectId: 're_1', entries: refund() },
    ]);
    const found = (await checkLedger(database.db, { provider })).violations;
    expect(found.map((v) => v.kind)).toEqual(['posted_twice', 'posted_twice']);
    expect(found.map((v) => v.message).join('\n')).toMatch(/provider object .*:re_1 is posted 2 times/);
  });

  it('L6 a resolutions export that disagrees with the ledger (an operator posting without its audit row); the API and CLI say so', async () => {
    const provider = newProvider('export');
    const { id } = await reconciliation(provider, 'pay_e', { providerAmount: '1000' });
    await insertRaw(provider, [{ kind: 'payment', ref: 'pay_e', actor: 'operator:alice', reconciliationId: id, entries: [['provider_clearing:$p', 1000, 'EUR'], ['payments:$p:pay_e', -1000, 'EUR']] }]);
    const found = (await checkLedger(database.db, { provider })).violations;
    expect(found.map((v) => v.kind)).toEqual(['export_mismatch', 'export_mismatch']);
    expect(found[0]!.message).toBe("resolutions export sums to 0 EUR, operators' resolutions posted 1000");
    expect(found[1]!.message).toMatch(/has no resolution citing it/);
    const response = await app.request(`/admin/v1/ledger/check?provider=${provider}`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ ok: false });
  });
});

// L4: generated sequences of resolutions over a few payments (duplicates, refunds, currency and amount mismatches,
// every decision and post basis); for random periods the export's applied lines equal operators' postings.
const op = fc.record({
  payment: fc.integer({ min: 0, max: 2 }),
  type: fc.constantFrom<ProviderEventType>('payment.succeeded', 'payment.succeeded', 'refund.succeeded', 'payment.failed'),
  amount: fc.constantFrom('500', '1000', '1500'),
  currency: fc.constantFrom('EUR', 'JPY'),
  providerAmount: fc.option(fc.constantFrom('500', '1000', '1400'), { nil: null }),
  providerCurrency: fc.constantFrom('EUR', 'USD'),
  decision: fc.constantFrom<OperatorResolution['decision']>('applied', 'applied', 'rejected', 'acknowledged'),
  post: fc.constantFrom<OperatorResolution['post'] | undefined>(undefined, 'provider', 'webhook', { amountMinor: '700', currency: 'EUR' }),
});
const postingKindOf = (t: ProviderEventType): PostingKind | null => (t === 'payment.succeeded' ? 'payment' : t === 'refund.succeeded' ? 'refund' : null);

describe('L4 the resolutions export equals the ledger', () => {
  it('L4 for any period, applied lines per currency = ledger transactions posted by operators (fast-check, fixed seed)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 8 }), fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), async (ops, a, b) => {
        const provider = newProvider('prop');
        const refs = [0, 1, 2].map((i) => `pay_${i}_${randomUUID().slice(0, 6)}`);
        const t0 = new Date(Date.now() - 1);
        for (const o of ops) {
          const { id, event } = await reconciliation(provider, refs[o.payment]!, { type: o.type, amount: o.amount, currency: o.currency, providerAmount: o.providerAmount, providerCurrency: o.providerCurrency });
          const resolution: OperatorResolution = { decision: o.decision, operator: 'prop', reason: 'generated', ...(o.decision === 'applied' && o.post !== undefined ? { post: o.post } : {}) };
          const providerPayment = o.providerAmount === null ? null : { amountMinor: o.providerAmount, currency: o.providerCurrency, refunds: [{ id: `re_${id}`, amountMinor: '300' }] };
          await commitResolution(database.db, { reconciliationId: id, provider, event, postingKind: postingKindOf(o.type), providerPayment, resolution, previousState: 'manual_review' });
        }
        const t1 = new Date(Date.now() + 1);
        const at = (x: number) => new Date(t0.getTime() + Math.floor(x * (t1.getTime() - t0.getTime())));
        for (const period of [{ from: t0, to: t1 }, { from: at(Math.min(a, b)), to: at(Math.max(a, b)) }]) {
          const lines = await resolutionLines(database.db, { ...period, provider });
          expect(exportTotals(lines)).toEqual(await operatorResolutionTotals(database.db, { ...period, provider }));
          expect(new Set(lines.map((l) => l.ledger_transaction_id).filter(Boolean)).size).toBe(lines.filter((l) => l.ledger_transaction_id).length);
        }
        // The CSV the API serves sums the same, signed.
        const csv = parseCsv(await (await app.request(`/admin/v1/exports/operator-resolutions.csv?provider=${provider}`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } })).text());
        const h = csv[0]!;
        const sums = new Map<string, bigint>();
        for (const l of csv.slice(1)) if (l[h.indexOf('ledger_amount_minor')]) sums.set(l[h.indexOf('ledger_currency')]!, (sums.get(l[h.indexOf('ledger_currency')]!) ?? 0n) + BigInt(l[h.indexOf('ledger_amount_minor')]!));
        expect(sums).toEqual(await operatorResolutionTotals(database.db, { from: new Date(0), to: t1, provider }));
        expect((await checkLedger(database.db, { provider })).violations.filter((v) => v.kind === 'export_mismatch' || v.kind === 'unbalanced' || v.kind === 'posted_twice')).toEqual([]);
      }),
      { seed: 1313, numRuns: 25 },
    );
  });
});
