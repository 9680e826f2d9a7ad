// Admin API for reconciliations and the finance export (I11) on the real PostgreSQL and Temporal dev server:
// list/get, resolution through the workflow's update (one audit row, 409 on a second), CSV that sums to the ledger.
import { inArray, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../helpers/access.js';
import { useReviewWorld } from '../helpers/review-world.js';
import { parseCsv } from '../helpers/csv.js';
import { ledgerEntries } from '../../src/db/schema/index.js';
import { minorToDecimal } from '../../src/inbound/csv.js';
import { TEST_ADMIN_TOKEN } from '../helpers/env.js';
import { providerEvent, succeeded } from '../helpers/reconciliation.js';

let provider: string;
const startedAt = new Date(Date.now() - 1000).toISOString();

const review = useReviewWorld({ label: 'reconcile-admin' });
beforeAll(() => {
  provider = review.provider;
});

const auth = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
/** A2: the operator of a resolution is the API key's name, so each person resolves with their own key. */
const tokens = new Map<string, string>();
async function as(name: string): Promise<Record<string, string>> {
  if (!tokens.has(name)) tokens.set(name, (await createKey(review.app, 'operator', undefined, name)).token);
  return { authorization: `Bearer ${tokens.get(name)}` };
}
async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = auth) {
  const response = await review.app.request(`/admin/v1${path}`, {
    method,
    headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, text, json: (() => { try { return JSON.parse(text); } catch { return undefined; } })() };
}
const path = (id: string) => `/reconciliations/${encodeURIComponent(id)}`;

/** A payment the provider reports with another amount: it parks in manual_review. */
const parked = (amountMinor: string) => review.parked(amountMinor);

describe('I11 reconciliations admin API', () => {
  const resolved: { id: string; decision: string }[] = [];

  it('I11 lists by state and provider with cursor pagination, and shows one with its transitions', async () => {
    const a = await parked('2000');
    const b = await parked('3000');
    const first = await call('GET', `/reconciliations?state=manual_review&provider=${provider}&limit=1`);
    expect(first.status).toBe(200);
    expect(first.json.data).toHaveLength(1);
    expect(first.json.has_more).toBe(true);
    const second = await call('GET', `/reconciliations?state=manual_review&provider=${provider}&limit=1&cursor=${first.json.next_cursor}`);
    const ids = [first.json.data[0].id, ...second.json.data.map((r: { id: string }) => r.id)];
    expect(ids.sort()).toEqual([a.id, b.id].sort());
    expect(first.json.data[0]).toMatchObject({ object: 'reconciliation', provider, state: 'manual_review' });
    expect((await call('GET', `/reconciliations?state=applied&provider=${provider}`)).json.data).toEqual([]);

    const one = await call('GET', path(a.id));
    expect(one.status).toBe(200);
    expect(one.json).toMatchObject({ id: a.id, amount_minor: '2000', provider_amount_minor: '1999', state: 'manual_review', resolution: null });
    expect(one.json.reason).toMatch(/amount_mismatch/);
    expect(one.json.transitions.map((t: { from_state: string; to_state: string }) => `${t.from_state}>${t.to_state}`)).toEqual([
      'received>reconciling',
      'reconciling>manual_review',
    ]);

    const applied = await call('POST', `${path(a.id)}/resolution`, { decision: 'applied', operator: 'ana@finance', reason: 'fee, confirmed, "by phone"\n=SUM(A1)', post: 'webhook' }, await as('ana@finance'));
    expect(applied.status).toBe(200);
    expect(applied.json.state).toBe('applied');
    expect(applied.json.resolution).toMatchObject({ decision: 'applied', operator: 'ana@finance', previous_state: 'manual_review', amount_minor: '2000' });
    expect(applied.json.ledger_transaction_id).toBe(applied.json.resolution.ledger_transaction_id);
    resolved.push({ id: a.id, decision: 'applied' });

    const again = await call('POST', `${path(a.id)}/resolution`, { decision: 'rejected', operator: 'bob', reason: 'second try' }, await as('bob'));
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe('conflict');

    const rejected = await call('POST', `${path(b.id)}/resolution`, { decision: 'rejected', reason: 'duplicate order' }, await as('bob@finance'));
    expect(rejected.status).toBe(200);
    expect(rejected.json).toMatchObject({ state: 'rejected', ledger_transaction_id: null });
    resolved.push({ id: b.id, decision: 'rejected' });
    const audit = await review.world.db.execute(sql`select count(*)::int as n from operator_resolutions where reconciliation_id in (${a.id}, ${b.id})`);
    expect(audit[0]!.n).toBe(2);
  });

  it('I11 refuses: not in manual_review (409), bad decision (400 naming the field), unknown id (404), no token (401)', async () => {
    const event = providerEvent();
    review.peer.set(event.paymentReference, succeeded(event));
    const handle = await review.start(event);
    await handle.result();
    expect((await call('POST', `${path(handle.workflowId)}/resolution`, { decision: 'rejected', reason: 'y' }, await as('rita'))).status).toBe(409);
    const bad = await call('POST', `${path(handle.workflowId)}/resolution`, { decision: 'maybe', operator: 'x', reason: 'y' });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toMatch(/decision/);
    const missing = await call('POST', `${path(handle.workflowId)}/resolution`, { decision: 'applied', operator: 'x' });
    expect(missing.status).toBe(400);
    expect(missing.json.error.message).toMatch(/reason/);
    expect((await call('GET', path(`reconcile:${provider}:evt_nope`))).status).toBe(404);
    expect((await call('GET', path('not-an-id'))).status).toBe(400);
    expect((await call('GET', '/reconciliations', undefined, {})).status).toBe(401);
  });

  it('I11 the CSV export lists the resolutions, escapes text, and its sums match the ledger', async () => {
    const extra = await parked('1234');
    expect((await call('POST', `${path(extra.id)}/resolution`, { decision: 'applied', reason: '=HYPERLINK("http://x")', post: 'webhook' }, await as('carla'))).status).toBe(200);
    resolved.push({ id: extra.id, decision: 'applied' });

    const response = await call('GET', `/exports/operator-resolutions.csv?from=${encodeURIComponent(startedAt)}&to=${encodeURIComponent(new Date(Date.now() + 1000).toISOString())}`);
    expect(response.status).toBe(200);
    const [header, ...lines] = parseCsv(response.text);
    const col = (name: string) => header!.indexOf(name);
    const ours = lines.filter((l) => l[col('provider')] === provider);
    expect(ours.map((l) => l[col('reconciliation_id')]).sort()).toEqual(resolved.map((r) => r.id).sort());
    const fancy = ours.find((l) => l[col('operator')] === 'ana@finance')!;
    expect(fancy[col('reason')]).toBe('fee, confirmed, "by phone"\n=SUM(A1)');
    expect(fancy[col('amount')]).toBe('20.00');
    // A reason typed as a formula is exported as text, not run by the spreadsheet.
    expect(ours.find((l) => l[col('operator')] === 'carla')![col('reason')]).toBe(`'=HYPERLINK("http://x")`);

    const applied = ours.filter((l) => l[col('decision')] === 'applied');
    const csvSum = applied.reduce((s, l) => s + BigInt(l[col('amount_minor')]!), 0n);
    const csvLedgerSum = applied.reduce((s, l) => s + BigInt(l[col('ledger_amount_minor')]!), 0n);
    const txIds = applied.map((l) => l[col('ledger_transaction_id')]!);
    const [ledger] = await review.world.db
      .select({ sum: sql<string>`sum(${ledgerEntries.amountMinor}) filter (where ${ledgerEntries.amountMinor} > 0)` })
      .from(ledgerEntries)
      .where(inArray(ledgerEntries.transactionId, txIds));
    expect(csvSum).toBe(3234n);
    expect(csvLedgerSum).toBe(csvSum);
    expect(BigInt(ledger!.sum)).toBe(csvSum);
    expect(ours.find((l) => l[col('decision')] === 'rejected')![col('ledger_transaction_id')]).toBe('');

    const empty = await call('GET', `/exports/operator-resolutions.csv?from=2001-01-01T00:00:00Z&to=2001-01-02T00:00:00Z`);
    expect(parseCsv(empty.text)).toHaveLength(1);
    expect((await call('GET', '/exports/operator-resolutions.csv?from=yesterday')).status).toBe(400);
  });

  it('I11 minor units to decimals per currency exponent', () => {
    expect([minorToDecimal(5n, 'EUR'), minorToDecimal('123456', 'JPY'), minorToDecimal('1005', 'KWD'), minorToDecimal('-250', 'USD')]).toEqual(['0.05', '123456', '1.005', '-2.50']);
  });
});
