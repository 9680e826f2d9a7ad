// M1: what a new ledger transaction tells the merchant. Written by postLocked in the posting's own transaction, so a
// posting and its event commit or roll back together; a replayed key writes nothing (no second event).
import type { Executor } from '../outbox/store.js';
import { writeOutbox } from '../outbox/store.js';
import type { Posting, PostingKind } from './postings.js';

/** What the event says about the posting beyond its entries (a subset of the store's PostingMetadata). */
export interface AnnouncedMetadata {
  providerEventId: string;
  reconciliationId: string;
  effectiveAt: string;
  actor: string;
  providerObjectId?: string;
}

/** Settled-ledger event types by posting kind; provisional credit (I12) is not settled and announces nothing. */
export const LEDGER_EVENT_TYPES: Partial<Record<PostingKind, string>> = {
  payment: 'payment.settled',
  refund: 'refund.settled',
  chargeback: 'dispute.funds_withdrawn',
  reversal: 'payment.reversed',
  adjustment: 'payment.adjusted',
};

/** The evt_ id of a ledger transaction's event: derived from the ltx_ id, so it is the same however often it is sent. */
export const ledgerEventId = (transactionId: string) => `evt_${transactionId}`;

/** M8: the event's data.object (the catalog's ledger_transaction schema, src/catalog/events/payment.settled.v1.json). */
export function ledgerEventObject(
  transactionId: string,
  postedAt: Date,
  posting: Posting,
  meta: AnnouncedMetadata,
): Record<string, unknown> {
  return {
    id: transactionId,
    object: 'ledger_transaction',
    kind: posting.kind,
    // Decimal string of minor units: exact at any size (an adjustment is signed).
    amount_minor: posting.amountMinor.toString(),
    currency: posting.currency,
    payment_reference: posting.paymentReference,
    provider: posting.provider,
    provider_event_id: meta.providerEventId,
    provider_object_id: meta.providerObjectId ?? null,
    reconciliation_id: meta.reconciliationId,
    effective_at: new Date(meta.effectiveAt).toISOString(),
    posted_at: postedAt.toISOString(),
    posted_by: meta.actor.startsWith('operator') ? 'operator' : 'system',
  };
}

export async function announcePosting(
  tx: Executor,
  transactionId: string,
  postedAt: Date,
  posting: Posting,
  meta: AnnouncedMetadata,
): Promise<void> {
  const type = LEDGER_EVENT_TYPES[posting.kind];
  if (!type) return;
  await writeOutbox(tx, {
    eventPublicId: ledgerEventId(transactionId),
    type,
    provider: posting.provider,
    data: ledgerEventObject(transactionId, postedAt, posting, meta),
  });
}
