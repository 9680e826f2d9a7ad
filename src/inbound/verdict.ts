// I8/I10: what the provider's authoritative answer means for one webhook event. Pure and deterministic: the
// workflow imports it. "unknown" is never read as paid; conflicts go to a person.
import type {
  Discrepancy,
  LedgerPosition,
  NormalizedProviderEvent,
  ProviderEventType,
  ProviderPayment,
} from '../shared/inbound.js';
import type { PostingKind } from '../ledger/postings.js';

export type { Discrepancy, LedgerPosition } from '../shared/inbound.js';

/** L1: the provider objects an item event may stand for (one by id, or every listed item of its amount). */
export interface ItemMatch {
  candidates: string[];
  matchedBy: 'id' | 'amount';
}

export type Verdict =
  | { kind: 'confirmed'; reason: string; match?: ItemMatch } // post to the ledger → applied
  | { kind: 'declined'; reason: string } // → rejected, nothing posted
  | { kind: 'stale'; reason: string } // → rejected: a non-crediting event that cannot change a settled payment (I10)
  | { kind: 'conflict'; reason: string } // amount or currency disagree → manual_review, no credit
  | { kind: 'unknown'; reason: string }; // keep querying until the timeout

/** L1: which list of the provider's answer holds the objects an item event is about, and what it calls them. */
const ITEM_LISTS = {
  refund: { list: 'refunds', noun: 'refund' },
  chargeback: { list: 'disputes', noun: 'dispute' },
  reversal: { list: 'reversals', noun: 'reversal' },
} as const satisfies Partial<Record<PostingKind, { list: 'refunds' | 'disputes' | 'reversals'; noun: string }>>;

/** L1: the provider's listed objects of the kind an item event is about (refunds, disputes or reversals). */
export const providerItems = (kind: PostingKind, payment: Pick<ProviderPayment, 'refunds' | 'disputes' | 'reversals'>) =>
  kind in ITEM_LISTS ? (payment[ITEM_LISTS[kind as keyof typeof ITEM_LISTS].list] ?? []) : [];

export const itemNoun = (kind: PostingKind) => (kind in ITEM_LISTS ? ITEM_LISTS[kind as keyof typeof ITEM_LISTS].noun : kind);

/** The ledger posting an event makes when applied, or null for events that never move money. */
export function postingKindFor(type: ProviderEventType): PostingKind | null {
  switch (type) {
    case 'payment.succeeded':
      return 'payment';
    case 'refund.succeeded':
      return 'refund';
    case 'chargeback.created':
      return 'chargeback';
    case 'payment.reversed':
      return 'reversal';
    default:
      return null;
  }
}

export function judge(event: NormalizedProviderEvent, payment: ProviderPayment | null): Verdict {
  if (!payment) return { kind: 'unknown', reason: 'provider does not know the payment (404)' };
  if (payment.status === 'pending') return { kind: 'unknown', reason: 'provider reports pending' };
  const kind = postingKindFor(event.type);
  if (kind === null) {
    // payment.failed / payment.pending: they never credit and never revert a settled payment.
    if (payment.status === 'failed') return { kind: 'declined', reason: 'provider reports failed' };
    return { kind: 'stale', reason: `provider reports ${payment.status}: a ${event.type} event never changes a settled payment` };
  }
  if (payment.status === 'failed') return { kind: 'declined', reason: `provider reports failed: nothing to ${kind === 'payment' ? 'credit' : 'reverse'}` };
  if (payment.currency !== event.currency) {
    return { kind: 'conflict', reason: `currency_mismatch: webhook ${event.currency}, provider ${payment.currency}` };
  }
  if (kind === 'payment') {
    if (payment.amountMinor !== event.amountMinor) {
      return { kind: 'conflict', reason: `amount_mismatch: webhook ${event.amountMinor}, provider ${payment.amountMinor}` };
    }
    return { kind: 'confirmed', reason: `provider reports ${payment.status} ${payment.amountMinor} ${payment.currency}` };
  }
  return judgeItem(event, payment, kind as keyof typeof ITEM_LISTS);
}

/**
 * L1: a refund, chargeback or reversal event is confirmed only by one specific object the provider lists: the
 * one with its id, or (where the provider sends no id) the listed ones of its amount, of which the posting claims
 * one nobody else claimed. A status (refunded, disputed) alone confirms nothing; an unlisted object → manual review.
 */
function judgeItem(event: NormalizedProviderEvent, payment: ProviderPayment, kind: keyof typeof ITEM_LISTS): Verdict {
  const { list, noun } = ITEM_LISTS[kind];
  const items = payment[list] ?? [];
  const listed = items.length > 0 ? `lists ${items.map((i) => `${i.id} ${i.amountMinor}`).join(', ')}` : `lists no ${noun}s`;
  const statusNote = payment.status === 'succeeded' ? '' : `; status ${payment.status} alone confirms nothing`;
  const id = event.providerObjectId;
  if (id) {
    const item = items.find((i) => i.id === id);
    if (!item) return { kind: 'conflict', reason: `item_not_listed: the provider lists no ${noun} ${id} (it ${listed}${statusNote})` };
    if (item.amountMinor !== event.amountMinor) {
      return { kind: 'conflict', reason: `amount_mismatch: webhook ${noun} ${id} ${event.amountMinor}, provider ${item.amountMinor} ${payment.currency}` };
    }
    return { kind: 'confirmed', reason: `provider lists ${noun} ${id} of ${item.amountMinor} ${payment.currency}`, match: { candidates: [id], matchedBy: 'id' } };
  }
  const same = items.filter((i) => i.amountMinor === event.amountMinor);
  if (same.length === 0) {
    return { kind: 'conflict', reason: `item_not_listed: the provider lists no ${noun} of ${event.amountMinor} ${payment.currency} (it ${listed}${statusNote})` };
  }
  return {
    kind: 'confirmed',
    reason: `provider lists ${same.length === 1 ? `${noun} ${same[0]!.id}` : `${same.length} ${noun}s`} of ${event.amountMinor} ${payment.currency}`,
    match: { candidates: same.map((i) => i.id), matchedBy: 'amount' },
  };
}

/** L5: what the provider says is settled on a payment: nothing once failed, else its amount less every listed object. */
export function providerSettledMinor(payment: ProviderPayment): bigint {
  if (payment.status === 'failed' || payment.status === 'pending') return 0n;
  const given = [...(payment.refunds ?? []), ...(payment.disputes ?? []), ...(payment.reversals ?? [])].reduce((sum, i) => sum + BigInt(i.amountMinor), 0n);
  return BigInt(payment.amountMinor) - given;
}

/**
 * L5: a payment the ledger has credited, which the provider now reports failed, in another currency or with a lower
 * amount than was captured, is a discrepancy after settlement: it reverts nothing and goes to an operator. Null
 * when there is none (nothing credited, or the provider agrees with the capture).
 */
export function settlementDiscrepancy(payment: ProviderPayment | null, position: LedgerPosition | null): Discrepancy | null {
  if (!payment || !position) return null;
  const lower = payment.currency !== position.currency || BigInt(payment.amountMinor) < BigInt(position.capturedMinor);
  if (payment.status !== 'failed' && !lower) return null;
  return {
    posted: position,
    reported: { status: payment.status, amountMinor: payment.amountMinor, currency: payment.currency, settledMinor: providerSettledMinor(payment).toString() },
  };
}

export function discrepancyReason(d: Discrepancy): string {
  return (
    `post_settlement_discrepancy: ledger settled ${d.posted.settledMinor} ${d.posted.currency} (captured ${d.posted.capturedMinor}), ` +
    `provider reports ${d.reported.status} ${d.reported.amountMinor} ${d.reported.currency} (settled ${d.reported.settledMinor}); nothing reverted`
  );
}
