// Writes postings to the append-only ledger tables, once per idempotency key (I9), through the database's posting
// function (A21), and computes balances from entries. Postings of one payment are serialized by an advisory lock so the reversal bound (I10) is race-free.
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { ledgerEntries, ledgerTransactions } from '../db/schema/index.js';
import { newId } from '../shared/ids.js';
import { announcePosting } from './announce.js';
import { callPostLedgerTransaction } from './ledger-calls.js';
import { accounts, idempotencyKey, type Posting } from './postings.js';

export interface PostingMetadata {
  providerEventId: string;
  reconciliationId: string;
  effectiveAt: string;
  actor: string;
  description?: string;
  /** L1: the provider object the posting is for, and how the event was matched to it (operator: by a resolution). */
  providerObjectId?: string;
  matchedBy?: 'id' | 'amount' | 'operator';
  /** L3/L4: the audit row this posting belongs to (an operator resolution or adjustment). */
  resolutionId?: string;
  adjustmentId?: string;
}

/** A drizzle transaction: postWithin writes inside the caller's, so ledger and audit commit together (R2). */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

export interface PostedTransaction {
  transactionId: string;
  postedAt: Date;
  /** true when the key was already posted with the same content: nothing new was written. */
  replayed: boolean;
  /** The event whose posting wrote the row (differs from the caller's when another event settled it first). */
  providerEventId: string;
}

/** L1: what posting one provider object (refund, dispute, reversal) for an event came to. */
export type ObjectPostingOutcome =
  | ({ outcome: 'posted'; providerObjectId: string } & PostedTransaction)
  /** The object is already posted, by another event: nothing new. */
  | { outcome: 'duplicate'; providerObjectId: string; transactionId: string; providerEventId: string }
  /** Matched by amount, and every listed object of that amount is claimed by other events. */
  | { outcome: 'no_unclaimed_item'; claimed: { providerObjectId: string; providerEventId: string }[] };

export interface ObjectPostingRequest {
  /** Provider object ids the event may stand for: one when it carries its id, else every listed item of its amount. */
  candidates: string[];
  matchedBy: 'id' | 'amount';
  /** The posting for one candidate (its key is that object's id). */
  posting: (providerObjectId: string) => Posting;
}

const UNIQUE_VIOLATION = '23505';

async function retryOnRace<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    // Same key raced in through another payment's lock (different content): the unique index decided; re-read.
    if ((error as { code?: string }).code === UNIQUE_VIOLATION) return run();
    throw error;
  }
}

/** Serializes the postings of one payment until the transaction ends (re-entrant within it). */
export const lockPayment = (tx: Tx, provider: string, reference: string) =>
  tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`ledger:${provider}:${reference}`}, 0))`);

export async function postTransaction(db: Db, posting: Posting, meta: PostingMetadata): Promise<PostedTransaction> {
  return retryOnRace(() => db.transaction((tx) => postWithin(tx, posting, meta)));
}

/**
 * One posting inside the caller's transaction (R2: an operator resolution writes ledger, audit row and state
 * together). Takes the payment's advisory lock; a unique violation aborts the caller's transaction (retry it).
 */
export async function postWithin(tx: Tx, posting: Posting, meta: PostingMetadata): Promise<PostedTransaction> {
  await lockPayment(tx, posting.provider, posting.paymentReference);
  return postLocked(tx, posting, meta);
}

/**
 * L1: posts one provider object for an event, choosing and claiming it under the payment's lock: the event's own
 * posting again (a retry) is a replay; an object posted by another event is a duplicate; matched by amount, the
 * first listed object no other event has claimed. The ledger row is the claim (its key is the object's id, its
 * metadata names the event and how it was matched).
 */
export async function postProviderObject(db: Db, request: ObjectPostingRequest, meta: PostingMetadata): Promise<ObjectPostingOutcome> {
  if (request.candidates.length === 0) throw new Error('postProviderObject: no candidate provider objects');
  return retryOnRace(() =>
    db.transaction(async (tx) => {
      const postings = request.candidates.map((id) => ({ id, posting: request.posting(id) }));
      const first = postings[0]!.posting;
      await lockPayment(tx, first.provider, first.paymentReference);
      const existing = await tx
        .select()
        .from(ledgerTransactions)
        .where(inArray(ledgerTransactions.idempotencyKey, postings.map((p) => p.posting.idempotencyKey)));
      const eventOf = (row: (typeof existing)[number]) => String(row.metadata.providerEventId ?? '');
      const objectOf = (row: (typeof existing)[number]) => postings.find((p) => p.posting.idempotencyKey === row.idempotencyKey)!.id;
      const mine = existing.find((row) => eventOf(row) === meta.providerEventId);
      if (mine) {
        const id = objectOf(mine);
        const posted = await postLocked(tx, postings.find((p) => p.id === id)!.posting, meta);
        return { outcome: 'posted', providerObjectId: id, ...posted };
      }
      if (request.matchedBy === 'id' && existing[0]) {
        return { outcome: 'duplicate', providerObjectId: objectOf(existing[0]), transactionId: existing[0].id, providerEventId: eventOf(existing[0]) };
      }
      const taken = new Set(existing.map((row) => row.idempotencyKey));
      const free = postings.find((p) => !taken.has(p.posting.idempotencyKey));
      if (!free) return { outcome: 'no_unclaimed_item', claimed: existing.map((row) => ({ providerObjectId: objectOf(row), providerEventId: eventOf(row) })) };
      const posted = await postLocked(tx, free.posting, { ...meta, providerObjectId: free.id, matchedBy: request.matchedBy });
      return { outcome: 'posted', providerObjectId: free.id, ...posted };
    }),
  );
}

/**
 * Inside a transaction holding the payment's lock: the row for the key, or a new one within the I10 bounds. A21:
 * the database function apipay_post_ledger_transaction decides (idempotency, content hash, balance, I10 bounds)
 * and writes header and entries in one call; the application role cannot write the ledger otherwise.
 */
export async function postLocked(tx: Tx, posting: Posting, meta: PostingMetadata): Promise<PostedTransaction> {
  const id = newId('ltx');
  const answer = await callPostLedgerTransaction(tx, posting, { id, effectiveAt: meta.effectiveAt, description: meta.description ?? null, metadata: postingMetadata(posting, meta) });
  if (!answer.replayed) await announcePosting(tx, answer.transactionId, answer.postedAt, posting, meta); // M1: the merchant's event, in this transaction
  return { transactionId: answer.transactionId, postedAt: answer.postedAt, replayed: answer.replayed, providerEventId: answer.providerEventId };
}

/** What a ledger transaction's metadata says about who posted it and why (L1, L3, L4). */
export const postingMetadata = (posting: Posting, meta: PostingMetadata): Record<string, unknown> => ({
  provider: posting.provider,
  providerEventId: meta.providerEventId,
  reconciliationId: meta.reconciliationId,
  actor: meta.actor,
  ...(meta.providerObjectId ? { providerObjectId: meta.providerObjectId, matchedBy: meta.matchedBy ?? 'id' } : {}),
  ...(meta.resolutionId ? { resolutionId: meta.resolutionId } : {}),
  ...(meta.adjustmentId ? { adjustmentId: meta.adjustmentId } : {}),
});

async function balanceIn(db: Db, account: string, currency: string): Promise<bigint> {
  const [row] = await db
    .select({ sum: sql<string | null>`sum(${ledgerEntries.amountMinor})` })
    .from(ledgerEntries)
    .where(and(eq(ledgerEntries.account, account), eq(ledgerEntries.currency, currency)));
  return BigInt(row?.sum ?? '0');
}

/** Signed balance of an account in one currency (debits positive), summed from its entries. */
export const accountBalance = (db: Db, account: string, currency: string) => balanceIn(db, account, currency);

/** What is settled on a payment and not given back: captures minus refunds, chargebacks and reversals. */
export async function settledAmount(db: Db, provider: string, paymentReference: string, currency: string): Promise<bigint> {
  return -(await balanceIn(db, accounts.payment(provider, paymentReference), currency));
}

export async function transactionsForPayment(db: Db, paymentReference: string) {
  return db.select().from(ledgerTransactions).where(eq(ledgerTransactions.paymentReference, paymentReference)).orderBy(ledgerTransactions.postedAt);
}

/** L5: what the ledger holds for a payment: its capture (amount, currency) and what is still settled, or null. */
export async function paymentPosition(db: Db, provider: string, paymentReference: string) {
  const captureKey = idempotencyKey({ kind: 'payment', provider, providerEventId: '', paymentReference });
  const [capture] = await db
    .select({ id: ledgerTransactions.id, amountMinor: ledgerEntries.amountMinor, currency: ledgerEntries.currency })
    .from(ledgerTransactions)
    .innerJoin(ledgerEntries, eq(ledgerEntries.transactionId, ledgerTransactions.id))
    .where(and(eq(ledgerTransactions.idempotencyKey, captureKey), eq(ledgerEntries.account, accounts.payment(provider, paymentReference))));
  if (!capture) return null;
  return {
    transactionId: capture.id,
    capturedMinor: -capture.amountMinor,
    currency: capture.currency,
    settledMinor: await settledAmount(db, provider, paymentReference, capture.currency),
  };
}
