// L6: `apipay ledger check` — invariants of the ledger read straight from PostgreSQL: every transaction
// balances per currency and still matches its content hash (A21: entries appended later show), no payment account holds more than the provider reported (or less than zero), no
// provider object is posted twice, and the resolutions export sums to what operators posted.
import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { exportTotals, operatorResolutionTotals, resolutionLines } from './exports.js';
import { legacyContentHash, type PostingKind } from './postings.js';

export type ViolationKind = 'unbalanced' | 'hash_mismatch' | 'past_settled' | 'posted_twice' | 'export_mismatch';
export interface Violation {
  kind: ViolationKind;
  message: string;
  ids: string[];
}
export interface LedgerCheck {
  ok: boolean;
  violations: Violation[];
  checked: { transactions: number; payment_accounts: number; resolutions: number };
}
export interface CheckScope {
  provider?: string;
  /** Transactions and resolutions in [from, to); balances always cover the whole history. */
  from?: Date;
  to?: Date;
}

const iso = (d: Date) => sql`${d.toISOString()}::timestamptz`;

export async function checkLedger(db: Db, scope: CheckScope = {}): Promise<LedgerCheck> {
  const from = scope.from ?? new Date(0);
  const to = scope.to ?? new Date(Date.now() + 1000);
  const byProvider = (column: SQL) => (scope.provider ? sql`and ${column} = ${scope.provider}` : sql``);
  const inPeriod = sql`t.posted_at >= ${iso(from)} and t.posted_at < ${iso(to)} ${byProvider(sql`t.metadata->>'provider'`)}`;
  const violations: Violation[] = [];

  const [{ n: transactions }] = (await db.execute(sql`select count(*)::int as n from ledger_transactions t where ${inPeriod}`)) as unknown as [{ n: number }];
  const unbalanced = await db.execute(sql`
    select t.id, e.currency, coalesce(sum(e.amount_minor), 0)::text as sum
    from ledger_transactions t left join ledger_entries e on e.transaction_id = t.id
    where ${inPeriod} group by t.id, e.currency having count(e.id) = 0 or sum(e.amount_minor) <> 0 order by t.id`);
  for (const r of unbalanced) {
    violations.push({ kind: 'unbalanced', message: `transaction ${r.id} ${r.currency ? `sums to ${r.sum} ${r.currency}` : 'has no entries'}`, ids: [String(r.id)] });
  }

  // A21: the hash the database computes from the entries (apipay_ledger_content_hash), or for a row posted before
  // migration 0029 the locale-sorted one; anything else is a transaction whose entries changed after it was posted.
  const entriesOf = sql`coalesce(jsonb_agg(jsonb_build_object('account', e.account, 'currency', e.currency, 'amount_minor', e.amount_minor::text)) filter (where e.id is not null), '[]'::jsonb)`;
  const rehashed = await db.execute(sql`
    select t.id, t.idempotency_key as key, t.kind, t.metadata->>'provider' as provider, t.payment_reference as ref, t.content_hash as hash, ${entriesOf} as entries
    from ledger_transactions t left join ledger_entries e on e.transaction_id = t.id
    where ${inPeriod} group by t.id
    having t.content_hash is distinct from public.apipay_ledger_content_hash(t.idempotency_key, t.kind, t.metadata->>'provider', t.payment_reference, ${entriesOf})
    order by t.id`);
  for (const r of rehashed) {
    const entries = (r.entries as { account: string; currency: string; amount_minor: string }[]).map((e) => ({ account: e.account, currency: e.currency, amountMinor: BigInt(e.amount_minor) }));
    const posting = { idempotencyKey: String(r.key), kind: r.kind as PostingKind, provider: String(r.provider), paymentReference: String(r.ref), currency: '', amountMinor: 0n, entries };
    if (legacyContentHash(posting) === r.hash) continue;
    violations.push({ kind: 'hash_mismatch', message: `transaction ${r.id} no longer matches its content hash (its entries changed after it was posted)`, ids: [String(r.id)] });
  }

  // What each payment account holds against the provider's latest reported amount in that currency.
  const accounts = await db.execute(sql`
    with held as (
      select t.metadata->>'provider' as provider, t.payment_reference, e.currency, (-sum(e.amount_minor)) as settled
      from ledger_transactions t join ledger_entries e on e.transaction_id = t.id
      where e.account = 'payments:' || (t.metadata->>'provider') || ':' || t.payment_reference ${byProvider(sql`t.metadata->>'provider'`)}
      group by 1, 2, 3
    ), reported as (
      select distinct on (provider, payment_reference, provider_currency) provider, payment_reference,
        provider_currency as currency, provider_amount_minor as amount
      from reconciliations where provider_amount_minor is not null ${byProvider(sql`provider`)}
      order by provider, payment_reference, provider_currency, updated_at desc
    )
    select h.provider, h.payment_reference, h.currency, h.settled::text, r.amount::text as reported
    from held h left join reported r using (provider, payment_reference, currency)`);
  for (const a of accounts) {
    const settled = BigInt(a.settled as string);
    const reported = a.reported === null ? null : BigInt(a.reported as string);
    const account = `payments:${a.provider}:${a.payment_reference}`;
    if (settled < 0n) violations.push({ kind: 'past_settled', message: `${account} is negative: ${settled} ${a.currency}`, ids: [account] });
    else if (settled > 0n && reported === null) {
      violations.push({ kind: 'past_settled', message: `${account} holds ${settled} ${a.currency}; the provider never reported an amount in ${a.currency}`, ids: [account] });
    } else if (reported !== null && settled > reported) {
      violations.push({ kind: 'past_settled', message: `${account} holds ${settled} ${a.currency}, the provider settled ${reported}`, ids: [account] });
    }
  }

  // A payment settles once; a refund, dispute or reversal once per provider object id (metadata.providerObjectId).
  const twice = await db.execute(sql`
    select 'payment ' || (t.metadata->>'provider') || ':' || t.payment_reference as object, array_agg(t.id order by t.id) as ids
    from ledger_transactions t where t.kind = 'payment' ${byProvider(sql`t.metadata->>'provider'`)}
    group by t.metadata->>'provider', t.payment_reference having count(*) > 1
    union all
    select 'provider object ' || (t.metadata->>'provider') || ':' || (t.metadata->>'providerObjectId'), array_agg(t.id order by t.id)
    from ledger_transactions t where t.metadata->>'providerObjectId' is not null ${byProvider(sql`t.metadata->>'provider'`)}
    group by t.metadata->>'provider', t.metadata->>'providerObjectId' having count(*) > 1`);
  for (const r of twice) {
    const ids = r.ids as string[];
    violations.push({ kind: 'posted_twice', message: `${r.object} is posted ${ids.length} times: ${ids.join(', ')}`, ids });
  }

  const period = { from, to, ...(scope.provider ? { provider: scope.provider } : {}) };
  const lines = await resolutionLines(db, period);
  const csv = exportTotals(lines);
  const ledger = await operatorResolutionTotals(db, period);
  for (const currency of new Set([...csv.keys(), ...ledger.keys()])) {
    const a = csv.get(currency) ?? 0n;
    const b = ledger.get(currency) ?? 0n;
    if (a !== b) violations.push({ kind: 'export_mismatch', message: `resolutions export sums to ${a} ${currency}, operators' resolutions posted ${b}`, ids: [currency] });
  }
  const uncited = await db.execute(sql`
    select t.id from ledger_transactions t
    where t.metadata->>'actor' like 'operator:%' and t.kind <> 'adjustment' and ${inPeriod}
      and not exists (select 1 from operator_resolutions r where r.ledger_transaction_id = t.id and r.reconciliation_id = t.metadata->>'reconciliationId')
    order by t.id`);
  for (const r of uncited) {
    violations.push({ kind: 'export_mismatch', message: `operator posting ${r.id} has no resolution citing it (ledger without its audit row)`, ids: [String(r.id)] });
  }

  return { ok: violations.length === 0, violations, checked: { transactions, payment_accounts: accounts.length, resolutions: lines.length } };
}
