// A11: the one money policy. Every posting an operator causes (a resolution's `applied`, a ledger adjustment) and
// every decision about money (rejected, acknowledged) is judged here, whichever path sent it (admin API, console,
// CLI through the admin API, the Temporal UI): the resolution store (src/inbound/resolution-store.ts) and the
// adjustment store (./adjustments.ts) call `moneyVerdict` inside their own transaction. Rules:
// - a posting in a currency other than the payment's is refused unless the request says why (currency_reason),
//   and is then always dual control (A5);
// - each currency's limit is inbound.dual_control_above[currency] (minor units), else A22's
//   inbound.dual_control_default_major (major units, scaled by the currency's ISO 4217 exponent: 1000 is EUR
//   100000, JPY 1000, KWD 1000000), else the smallest limit the map names, compared and scaled in major units
//   (a map naming nothing and no default turn the per-amount limits off, which a production profile refuses);
// - the limit holds per request, per payment (every single-person posting on it) and per operator over the last
//   24 hours (every single-person posting by that person's keys), so splitting does not escape it.
// Above a limit the request becomes a proposal that a second person approves; what was approved by a second
// person does not count against anyone's single-person budget.
import { sql } from 'drizzle-orm';
import { siblingKeys } from '../access/people.js';
import { BOOTSTRAP_KEY_ID } from '../access/roles.js';
import type { Db } from '../db/client.js';
import { majorLess, majorToMinor, rescaleMinor } from '../shared/currency.js';

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

export interface MoneyLimits {
  /** Minor units per currency. */
  above: Record<string, bigint>;
  /**
   * A22: major units (a decimal string) for every currency `above` does not name, scaled by its exponent; null: the
   * smallest of `above` in major units (none when `above` is empty).
   */
  defaultMajor: string | null;
}

export interface Amount {
  amountMinor: string;
  currency: string;
}

export interface MoneyRequest {
  provider: string;
  paymentReference: string;
  /** The payment's currency: the provider's when it reported one, else the webhook's. */
  paymentCurrency: string;
  /** What this request posts (signed minor units), or null for a decision that posts nothing. */
  posts: Amount | null;
  /** Other amounts the decision is about (the webhook's, the provider's), each judged against its own limit. */
  about?: Array<Amount | null | undefined>;
  /** Why a posting is in another currency than the payment's (required then). */
  currencyReason?: string | undefined;
  /** Every key id of the person who asks (A12: the budget is the person's, not one key's). */
  operatorKeys: string[];
}

export type MoneyVerdict = { kind: 'alone' } | { kind: 'dual_control'; why: string } | { kind: 'refused'; problem: string };

const abs = (v: bigint) => (v < 0n ? -v : v);

/** The limit for `currency` in its minor units, or null when there is none. Rounded down when scaled (A22). */
export function limitFor(limits: MoneyLimits, currency: string): bigint | null {
  if (Object.hasOwn(limits.above, currency)) return limits.above[currency]!;
  if (limits.defaultMajor !== null) return majorToMinor(limits.defaultMajor, currency);
  let smallest: [string, bigint] | null = null;
  for (const [named, minor] of Object.entries(limits.above)) {
    if (smallest === null || majorLess(minor, named, smallest[1], smallest[0])) smallest = [named, minor];
  }
  return smallest === null ? null : rescaleMinor(smallest[1], smallest[0], currency);
}

export const limitsOf = (inbound: {
  dual_control_above: Record<string, bigint>;
  dual_control_default_major?: string | undefined;
}): MoneyLimits => ({
  above: inbound.dual_control_above,
  defaultMajor: inbound.dual_control_default_major ?? null,
});

/** Pure: the verdict given what was already posted alone on this payment and by this person (same currency). */
export function judge(
  limits: MoneyLimits,
  request: MoneyRequest,
  alreadyAlone: { payment: bigint; operator: bigint },
): MoneyVerdict {
  const { posts } = request;
  if (posts && posts.currency !== request.paymentCurrency) {
    if (!request.currencyReason?.trim()) {
      return {
        kind: 'refused',
        problem: `currency ${posts.currency} is not the payment's (${request.paymentCurrency}): give currency_reason, and a second person approves it`,
      };
    }
    return { kind: 'dual_control', why: `a posting in ${posts.currency} on a ${request.paymentCurrency} payment` };
  }
  for (const amount of [...(request.about ?? []), posts]) {
    if (!amount) continue;
    const limit = limitFor(limits, amount.currency);
    const value = abs(BigInt(amount.amountMinor));
    if (limit !== null && value > limit) return { kind: 'dual_control', why: `${value} ${amount.currency} > ${limit}` };
  }
  if (posts) {
    const limit = limitFor(limits, posts.currency);
    const value = abs(BigInt(posts.amountMinor));
    if (limit !== null && alreadyAlone.payment + value > limit) {
      return {
        kind: 'dual_control',
        why: `${alreadyAlone.payment + value} ${posts.currency} posted alone on this payment > ${limit}`,
      };
    }
    if (limit !== null && alreadyAlone.operator + value > limit) {
      return {
        kind: 'dual_control',
        why: `${alreadyAlone.operator + value} ${posts.currency} posted alone by this person in 24 h > ${limit}`,
      };
    }
  }
  return { kind: 'alone' };
}

/**
 * The verdict inside the caller's transaction. Takes the person's and the payment's advisory locks first (in that
 * order, always), so two concurrent requests are judged one after the other and cannot both fit under the limit.
 */
export async function moneyVerdict(tx: Tx, limits: MoneyLimits, request: MoneyRequest): Promise<MoneyVerdict> {
  if (request.operatorKeys.includes(BOOTSTRAP_KEY_ID)) {
    return {
      kind: 'refused',
      problem: 'the bootstrap token (ADMIN_TOKEN) moves no money: create an admin key for a person and use that',
    };
  }
  // A12: the budget is the person's: every key of the principal behind the asking key counts.
  const keys = [...new Set(await siblingKeys(tx, request.operatorKeys))].sort();
  for (const key of keys) await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`money:key:${key}`}, 0))`);
  await tx.execute(
    sql`select pg_advisory_xact_lock(hashtextextended(${`money:payment:${request.provider}:${request.paymentReference}`}, 0))`,
  );
  const posts = request.posts;
  if (!posts) return judge(limits, request, { payment: 0n, operator: 0n });
  const keyList = keys.length
    ? sql.join(
        keys.map((k) => sql`${k}`),
        sql`, `,
      )
    : sql`null`;
  const rows = await tx.execute<{ payment: string | null; operator: string | null }>(sql`
    with alone as (
      select a.provider, a.payment_reference, a.operator_key, a.created_at as at, abs(a.amount_minor) as amount
        from public.ledger_adjustments a
       where a.proposal_id is null and a.currency = ${posts.currency}
      union all
      select r.provider, r.payment_reference, o.operator_key, o.resolved_at, abs(o.posted_amount_minor)
        from public.operator_resolutions o join public.reconciliations r on r.id = o.reconciliation_id
       where o.proposal_id is null and o.ledger_transaction_id is not null and o.posted_currency = ${posts.currency}
    )
    select
      (select coalesce(sum(amount), 0) from alone where provider = ${request.provider} and payment_reference = ${request.paymentReference})::text as payment,
      (select coalesce(sum(amount), 0) from alone where operator_key in (${keyList}) and at > now() - interval '24 hours')::text as operator`);
  const [row] = rows as unknown as Array<{ payment: string | null; operator: string | null }>;
  return judge(limits, request, { payment: BigInt(row?.payment ?? '0'), operator: BigInt(row?.operator ?? '0') });
}
