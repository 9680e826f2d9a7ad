// I8/I10: what the provider's authoritative answer means for one webhook event. Pure and deterministic: the
// workflow imports it. "unknown" is never read as paid; conflicts go to a person.
import type { NormalizedProviderEvent, ProviderEventType, ProviderPayment } from '../shared/inbound.js';
import type { PostingKind } from '../ledger/postings.js';

export type Verdict =
  | { kind: 'confirmed'; reason: string } // post to the ledger → applied
  | { kind: 'declined'; reason: string } // → rejected, nothing posted
  | { kind: 'stale'; reason: string } // → rejected: a non-crediting event that cannot change a settled payment (I10)
  | { kind: 'conflict'; reason: string } // amount or currency disagree → manual_review, no credit
  | { kind: 'unknown'; reason: string }; // keep querying until the timeout

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
  const refunds = payment.refunds ?? [];
  if (refunds.some((r) => r.amountMinor === event.amountMinor)) {
    return { kind: 'confirmed', reason: `provider lists a ${kind} of ${event.amountMinor} ${payment.currency}` };
  }
  if (refunds.length > 0) {
    return { kind: 'conflict', reason: `amount_mismatch: webhook ${kind} ${event.amountMinor}, provider lists ${refunds.map((r) => r.amountMinor).join(', ')}` };
  }
  if (payment.status === 'refunded' || payment.status === 'disputed') {
    return { kind: 'confirmed', reason: `provider reports ${payment.status}` };
  }
  return { kind: 'unknown', reason: `provider reports ${payment.status} without the ${kind} yet` };
}
