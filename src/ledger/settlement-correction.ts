// L5: an operator's correction of a post-settlement discrepancy: gives back what the ledger holds beyond what the
// provider reports, once per review item, computed under the payment's lock. Used by the legacy three-step
// resolution (its own transaction) and by the one-transaction resolution (R2, inside the caller's).
import { and, eq, like, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { ledgerEntries, ledgerTransactions } from '../db/schema/index.js';
import { accounts, buildPosting } from './postings.js';
import { lockPayment, paymentPosition, postLocked, type PostedTransaction, type PostingMetadata, type Tx } from './store.js';

/** Idempotency keys of L5 settlement corrections end with this. */
export const SETTLEMENT_CORRECTION = ':settlement_correction';

export interface SettlementCorrection {
  provider: string;
  paymentReference: string;
  reconciliationId: string;
  providerEventId: string;
  /** The L5 discrepancy (src/inbound/verdict.ts): the ledger's currency and the provider's report. */
  discrepancy: { posted: { currency: string }; reported: { status: string; amountMinor: string; currency: string } };
}

/**
 * The provider reports the payment failed (or in another currency) → give back all that is still settled; it
 * reports a lower amount → give back the difference to the capture, less corrections already posted (refunds,
 * disputes and reversals stay their own postings). Never more than is settled; null when there is nothing to
 * give back. Never credits: a ledger below the provider's report is left for an adjustment (L3).
 */
export async function correctSettlementWithin(
  tx: Tx,
  request: SettlementCorrection,
  meta: Omit<PostingMetadata, 'providerEventId' | 'reconciliationId' | 'effectiveAt'>,
): Promise<(PostedTransaction & { amountMinor: string; currency: string }) | null> {
  const { provider, paymentReference } = request;
  const { posted, reported } = request.discrepancy;
  const key = `${provider}:${request.reconciliationId}${SETTLEMENT_CORRECTION}`;
  await lockPayment(tx, provider, paymentReference);
  const account = accounts.payment(provider, paymentReference);
  const [existing] = await tx.select().from(ledgerTransactions).where(eq(ledgerTransactions.idempotencyKey, key));
  if (existing) {
    const [entry] = await tx.select().from(ledgerEntries).where(and(eq(ledgerEntries.transactionId, existing.id), eq(ledgerEntries.account, account)));
    const providerEventId = String(existing.metadata.providerEventId ?? '');
    return { transactionId: existing.id, postedAt: existing.postedAt, replayed: true, providerEventId, amountMinor: String(entry?.amountMinor ?? 0n), currency: entry?.currency ?? posted.currency };
  }
  const position = await paymentPosition(tx as unknown as Db, provider, paymentReference);
  if (!position) return null;
  const failed = reported.status === 'failed' || reported.currency !== posted.currency;
  const [corrected] = await tx
    .select({ sum: sql<string | null>`sum(${ledgerEntries.amountMinor})` })
    .from(ledgerEntries)
    .innerJoin(ledgerTransactions, eq(ledgerEntries.transactionId, ledgerTransactions.id))
    .where(and(eq(ledgerEntries.account, account), eq(ledgerTransactions.paymentReference, paymentReference), like(ledgerTransactions.idempotencyKey, `%${SETTLEMENT_CORRECTION}`)));
  const alreadyCorrected = BigInt(corrected?.sum ?? '0');
  const wanted = failed ? position.settledMinor : position.capturedMinor - alreadyCorrected - BigInt(reported.amountMinor);
  const excess = wanted < position.settledMinor ? wanted : position.settledMinor;
  if (excess <= 0n) return null;
  const posting = buildPosting({
    kind: 'reversal',
    provider,
    providerEventId: request.providerEventId,
    paymentReference,
    amountMinor: excess.toString(),
    currency: posted.currency,
  });
  const result = await postLocked(tx, { ...posting, idempotencyKey: key }, {
    ...meta,
    providerEventId: request.providerEventId,
    reconciliationId: request.reconciliationId,
    effectiveAt: new Date().toISOString(),
    description: meta.description ?? `settlement correction ${paymentReference}`,
  });
  return { ...result, amountMinor: excess.toString(), currency: posted.currency };
}
