// L4: what the finance exports read. A resolution line's ledger columns are the transaction that resolution
// posted (its own reconciliation, an operator actor), signed as the payment's change (money out negative), or
// empty: never another event's transaction, never one transaction twice. The ledger export is every entry.
import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/client.js';

export interface Period {
  from: Date;
  to: Date;
  /** Only this provider's rows (tests, and `ledger check --provider`). */
  provider?: string;
}

export interface ResolutionLine {
  resolution_id: string;
  resolved_at: Date;
  reconciliation_id: string;
  provider: string;
  provider_event_id: string;
  event_type: string;
  payment_reference: string;
  decision: string;
  operator: string;
  reason: string;
  previous_state: string;
  currency: string;
  amount_minor: string;
  provider_currency: string | null;
  provider_amount_minor: string | null;
  post_basis: string | null;
  posted_currency: string | null;
  posted_amount_minor: string | null;
  ledger_transaction_id: string | null;
  ledger_currency: string | null;
  ledger_amount_minor: string | null;
  /** A4/A5 (null on older rows). */
  operator_key: string | null;
  via: string | null;
  proposed_at: string | null;
  approved_by: string | null;
  approved_by_key: string | null;
  approved_at: string | null;
}

const iso = (d: Date) => sql`${d.toISOString()}::timestamptz`;
const providerFilter = (column: SQL, provider?: string) => (provider ? sql`and ${column} = ${provider}` : sql``);

/** A posting's signed effect on its payment account: + settles money in, − gives it back. */
const PAYMENT_EFFECT = sql`select e.currency, (-sum(e.amount_minor))::text as amount from ledger_entries e
  where e.transaction_id = t.id and e.account like 'payments:%' group by e.currency`;

export async function resolutionLines(db: Db, period: Period): Promise<ResolutionLine[]> {
  const rows = await db.execute(sql`
    select r.id as resolution_id, r.resolved_at, r.reconciliation_id, c.provider, c.provider_event_id, c.event_type,
      c.payment_reference, r.decision, r.operator, r.reason, r.previous_state, r.currency, r.amount_minor::text,
      coalesce(r.provider_currency, c.provider_currency) as provider_currency, r.provider_amount_minor::text,
      r.post_basis, r.posted_currency, r.posted_amount_minor::text,
      t.id as ledger_transaction_id, p.currency as ledger_currency, p.amount as ledger_amount_minor,
      r.operator_key, r.via, r.proposed_at, r.approved_by, r.approved_by_key, r.approved_at
    from operator_resolutions r
    join reconciliations c on c.id = r.reconciliation_id
    left join ledger_transactions t on t.id = r.ledger_transaction_id
      and t.metadata->>'reconciliationId' = r.reconciliation_id and t.metadata->>'actor' like 'operator:%'
    left join lateral (${PAYMENT_EFFECT}) p on true
    where r.resolved_at >= ${iso(period.from)} and r.resolved_at < ${iso(period.to)} ${providerFilter(sql`c.provider`, period.provider)}
    order by r.resolved_at, r.id`);
  return rows.map((row) => ({ ...(row as unknown as ResolutionLine), resolved_at: new Date(row.resolved_at as string) }));
}

/** Per currency, the sum of the ledger columns of the applied lines (what the resolutions export says). */
export function exportTotals(lines: ResolutionLine[]): Map<string, bigint> {
  const totals = new Map<string, bigint>();
  for (const l of lines) {
    if (l.ledger_currency && l.ledger_amount_minor) totals.set(l.ledger_currency, (totals.get(l.ledger_currency) ?? 0n) + BigInt(l.ledger_amount_minor));
  }
  return totals;
}

/** Per currency, what operators' resolutions posted in the period (adjustments are not resolutions). */
export async function operatorResolutionTotals(db: Db, period: Period): Promise<Map<string, bigint>> {
  const rows = await db.execute(sql`
    select e.currency, (-sum(e.amount_minor))::text as amount
    from ledger_transactions t join ledger_entries e on e.transaction_id = t.id
    where t.metadata->>'actor' like 'operator:%' and t.kind <> 'adjustment' and e.account like 'payments:%'
      and t.posted_at >= ${iso(period.from)} and t.posted_at < ${iso(period.to)} ${providerFilter(sql`t.metadata->>'provider'`, period.provider)}
    group by e.currency`);
  return new Map(rows.map((r) => [r.currency as string, BigInt(r.amount as string)]));
}

export interface LedgerLine {
  transaction_id: string;
  posted_at: Date;
  effective_at: Date;
  kind: string;
  idempotency_key: string;
  provider: string | null;
  payment_reference: string;
  actor: string | null;
  reconciliation_id: string | null;
  audit_id: string | null;
  account: string;
  currency: string;
  amount_minor: string;
}

/** L4: every ledger entry of the transactions posted in the period, with its transaction. */
export async function ledgerLines(db: Db, period: Period): Promise<LedgerLine[]> {
  const rows = await db.execute(sql`
    select t.id as transaction_id, t.posted_at, t.effective_at, t.kind, t.idempotency_key, t.metadata->>'provider' as provider,
      t.payment_reference, t.metadata->>'actor' as actor, t.metadata->>'reconciliationId' as reconciliation_id,
      coalesce(t.metadata->>'resolutionId', t.metadata->>'adjustmentId') as audit_id,
      e.account, e.currency, e.amount_minor::text
    from ledger_transactions t join ledger_entries e on e.transaction_id = t.id
    where t.posted_at >= ${iso(period.from)} and t.posted_at < ${iso(period.to)} ${providerFilter(sql`t.metadata->>'provider'`, period.provider)}
    order by t.posted_at, t.id, e.id`);
  return rows.map((row) => ({
    ...(row as unknown as LedgerLine),
    posted_at: new Date(row.posted_at as string),
    effective_at: new Date(row.effective_at as string),
  }));
}
