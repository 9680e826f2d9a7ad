// Writes postings to the append-only ledger tables, once per idempotency key (I9), and computes balances from
// entries. Postings of one payment are serialized by an advisory lock so the reversal bound (I10) is race-free.
import { and, eq, inArray, like, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { ledgerEntries, ledgerTransactions } from '../db/schema/index.js';
import { newId } from '../shared/ids.js';
import { CaptureNotPostedError, LedgerConflictError, ReversalExceedsSettledError } from './errors.js';
import { accounts, contentHash, idempotencyKey, REVERSAL_KINDS, type Posting } from './postings.js';

export interface PostingMetadata {
  providerEventId: string;
  reconciliationId: string;
  effectiveAt: string;
  actor: string;
  description?: string;
  /** L1: the provider object the posting is for, and how the event was matched to it. */
  providerObjectId?: string;
  matchedBy?: 'id' | 'amount';
}

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
type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

async function retryOnRace<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    // Same key raced in through another payment's lock (different content): the unique index decided; re-read.
    if ((error as { code?: string }).code === UNIQUE_VIOLATION) return run();
    throw error;
  }
}

const lockPayment = (tx: Tx, provider: string, reference: string) =>
  tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`ledger:${provider}:${reference}`}, 0))`);

export async function postTransaction(db: Db, posting: Posting, meta: PostingMetadata): Promise<PostedTransaction> {
  return retryOnRace(() =>
    db.transaction(async (tx) => {
      await lockPayment(tx, posting.provider, posting.paymentReference);
      return postLocked(tx, posting, meta);
    }),
  );
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

/** Inside a transaction holding the payment's lock: the row for the key, or a new one within the I10 bounds. */
async function postLocked(tx: Tx, posting: Posting, meta: PostingMetadata): Promise<PostedTransaction> {
  const hash = contentHash(posting);
  const [existing] = await tx.select().from(ledgerTransactions).where(eq(ledgerTransactions.idempotencyKey, posting.idempotencyKey));
  if (existing) {
    if (existing.contentHash !== hash) throw new LedgerConflictError(posting.idempotencyKey, existing.id);
    return {
      transactionId: existing.id,
      postedAt: existing.postedAt,
      replayed: true,
      providerEventId: String(existing.metadata.providerEventId ?? ''),
    };
  }
  if (REVERSAL_KINDS.includes(posting.kind)) {
    const captureKey = idempotencyKey({ kind: 'payment', provider: posting.provider, providerEventId: '', paymentReference: posting.paymentReference });
    const [capture] = await tx.select({ id: ledgerTransactions.id }).from(ledgerTransactions).where(eq(ledgerTransactions.idempotencyKey, captureKey));
    if (!capture) throw new CaptureNotPostedError(posting.idempotencyKey);
    const settled = -(await balanceIn(tx as unknown as Db, accounts.payment(posting.provider, posting.paymentReference), posting.currency));
    if (posting.amountMinor > settled) throw new ReversalExceedsSettledError(posting.idempotencyKey, settled, posting.amountMinor);
  }
  const id = newId('ltx');
  const [row] = await tx
    .insert(ledgerTransactions)
    .values({
      id,
      idempotencyKey: posting.idempotencyKey,
      contentHash: hash,
      kind: posting.kind,
      paymentReference: posting.paymentReference,
      effectiveAt: new Date(meta.effectiveAt),
      description: meta.description ?? null,
      metadata: {
        provider: posting.provider,
        providerEventId: meta.providerEventId,
        reconciliationId: meta.reconciliationId,
        actor: meta.actor,
        ...(meta.providerObjectId ? { providerObjectId: meta.providerObjectId, matchedBy: meta.matchedBy ?? 'id' } : {}),
      },
    })
    .returning();
  await tx.insert(ledgerEntries).values(posting.entries.map((e) => ({ transactionId: id, account: e.account, amountMinor: e.amountMinor, currency: e.currency })));
  return { transactionId: id, postedAt: row!.postedAt, replayed: false, providerEventId: meta.providerEventId };
}

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

/** Idempotency keys of L5 settlement corrections end with this. */
export const SETTLEMENT_CORRECTION = ':settlement_correction';

/**
 * L5: an operator's correction of a post-settlement discrepancy, once per review item (`key`), computed under the
 * payment's lock: the provider reports the payment failed (`reportedCaptureMinor` null) → give back all that is
 * still settled; it reports a lower amount → give back the difference to the capture, less corrections already
 * posted (refunds, disputes and reversals stay their own postings). Never more than is settled; null when there is
 * nothing to give back.
 */
export async function postSettledCorrection(
  db: Db,
  request: { posting: (amountMinor: bigint) => Posting; provider: string; paymentReference: string; reportedCaptureMinor: bigint | null; key: string },
  meta: PostingMetadata,
): Promise<PostedTransaction | null> {
  return retryOnRace(() =>
    db.transaction(async (tx) => {
      await lockPayment(tx, request.provider, request.paymentReference);
      const [existing] = await tx.select().from(ledgerTransactions).where(eq(ledgerTransactions.idempotencyKey, request.key));
      if (existing) return { transactionId: existing.id, postedAt: existing.postedAt, replayed: true, providerEventId: String(existing.metadata.providerEventId ?? '') };
      const position = await paymentPosition(tx as unknown as Db, request.provider, request.paymentReference);
      if (!position) return null;
      const account = accounts.payment(request.provider, request.paymentReference);
      const [corrected] = await tx
        .select({ sum: sql<string | null>`sum(${ledgerEntries.amountMinor})` })
        .from(ledgerEntries)
        .innerJoin(ledgerTransactions, eq(ledgerEntries.transactionId, ledgerTransactions.id))
        .where(and(eq(ledgerEntries.account, account), eq(ledgerTransactions.paymentReference, request.paymentReference), like(ledgerTransactions.idempotencyKey, `%${SETTLEMENT_CORRECTION}`)));
      const alreadyCorrected = BigInt(corrected?.sum ?? '0');
      const wanted = request.reportedCaptureMinor === null ? position.settledMinor : position.capturedMinor - alreadyCorrected - request.reportedCaptureMinor;
      const excess = wanted < position.settledMinor ? wanted : position.settledMinor;
      if (excess <= 0n) return null;
      return postLocked(tx, { ...request.posting(excess), idempotencyKey: request.key }, meta);
    }),
  );
}
