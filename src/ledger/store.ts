// Writes postings to the append-only ledger tables, once per idempotency key (I9), and computes balances from
// entries. Postings of one payment are serialized by an advisory lock so the reversal bound (I10) is race-free.
import { and, eq, sql } from 'drizzle-orm';
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

const UNIQUE_VIOLATION = '23505';

export async function postTransaction(db: Db, posting: Posting, meta: PostingMetadata): Promise<PostedTransaction> {
  try {
    return await postOnce(db, posting, meta);
  } catch (error) {
    // Same key raced in through another payment's lock (different content): the unique index decided; re-read.
    if ((error as { code?: string }).code === UNIQUE_VIOLATION) return postOnce(db, posting, meta);
    throw error;
  }
}

const postOnce = (db: Db, posting: Posting, meta: PostingMetadata) => db.transaction((tx) => postWithin(tx, posting, meta));

/**
 * One posting inside the caller's transaction (R2: an operator resolution writes ledger, audit row and state
 * together). Takes the payment's advisory lock; a unique violation aborts the caller's transaction (retry it).
 */
export async function postWithin(tx: Tx, posting: Posting, meta: PostingMetadata): Promise<PostedTransaction> {
  const hash = contentHash(posting);
  {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`ledger:${posting.provider}:${posting.paymentReference}`}, 0))`);
    const [existing] = await tx.select().from(ledgerTransactions).where(eq(ledgerTransactions.idempotencyKey, posting.idempotencyKey));
    if (existing) {
      if (existing.contentHash !== hash) throw new LedgerConflictError(posting.idempotencyKey, existing.id, String(existing.metadata.actor ?? '') || undefined);
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
    if (posting.kind === 'adjustment' && posting.amountMinor < 0n) {
      // L3: a correction never gives back more than is settled (the account never goes negative).
      const settled = -(await balanceIn(tx as unknown as Db, accounts.payment(posting.provider, posting.paymentReference), posting.currency));
      if (-posting.amountMinor > settled) throw new ReversalExceedsSettledError(posting.idempotencyKey, settled, -posting.amountMinor);
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
          ...(meta.resolutionId ? { resolutionId: meta.resolutionId } : {}),
          ...(meta.adjustmentId ? { adjustmentId: meta.adjustmentId } : {}),
        },
      })
      .returning();
    await tx.insert(ledgerEntries).values(posting.entries.map((e) => ({ transactionId: id, account: e.account, amountMinor: e.amountMinor, currency: e.currency })));
    return { transactionId: id, postedAt: row!.postedAt, replayed: false, providerEventId: meta.providerEventId };
  }
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
