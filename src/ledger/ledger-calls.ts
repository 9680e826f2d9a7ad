// A21: the application writes the ledger only through the database's own functions (migration 0029): one call takes
// the whole posting (header and entries; for an adjustment its row and audit row too) and answers a status, which
// this file turns into the ledger's errors (I9 conflict, I10 capture missing or bound exceeded) and results.
import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { CaptureNotPostedError, LedgerConflictError, ReversalExceedsSettledError } from './errors.js';
import { contentHash, type Posting } from './postings.js';

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

/** The ledger_transactions row the function writes, minus its id (the caller's) and the provider (the posting's). */
export interface PostingHeader {
  id: string;
  effectiveAt: string;
  description: string | null;
  metadata: Record<string, unknown>;
}

interface Answer {
  status: 'posted' | 'replayed' | 'conflict' | 'capture_not_posted' | 'exceeds_settled';
  transaction_id: string | null;
  posted_at: string | null;
  provider_event_id: string | null;
  actor: string | null;
  settled_minor: string | null;
  requested_minor: string | null;
  adjustment_id?: string | null;
}

export interface PostingAnswer {
  transactionId: string;
  postedAt: Date;
  replayed: boolean;
  providerEventId: string;
  adjustmentId?: string | null;
}

const headerJson = (posting: Posting, header: PostingHeader) =>
  JSON.stringify({
    id: header.id,
    idempotency_key: posting.idempotencyKey,
    content_hash: contentHash(posting),
    kind: posting.kind,
    provider: posting.provider,
    payment_reference: posting.paymentReference,
    effective_at: new Date(header.effectiveAt).toISOString(),
    description: header.description,
    metadata: header.metadata,
  });

const entriesJson = (posting: Posting) =>
  JSON.stringify(
    posting.entries.map((e) => ({ account: e.account, currency: e.currency, amount_minor: e.amountMinor.toString() })),
  );

/** The function's answer as the store's result, or the ledger error it stands for (nothing was written then). */
function settle(posting: Posting, answer: Answer | undefined): PostingAnswer {
  if (!answer) throw new Error('ledger function answered no row');
  switch (answer.status) {
    case 'conflict':
      throw new LedgerConflictError(posting.idempotencyKey, answer.transaction_id!, answer.actor || undefined);
    case 'capture_not_posted':
      throw new CaptureNotPostedError(posting.idempotencyKey);
    case 'exceeds_settled':
      throw new ReversalExceedsSettledError(
        posting.idempotencyKey,
        BigInt(answer.settled_minor!),
        BigInt(answer.requested_minor!),
      );
    case 'posted':
    case 'replayed':
      return {
        transactionId: answer.transaction_id!,
        postedAt: new Date(answer.posted_at!),
        replayed: answer.status === 'replayed',
        providerEventId: answer.provider_event_id ?? '',
        ...(answer.adjustment_id !== undefined ? { adjustmentId: answer.adjustment_id } : {}),
      };
  }
}

/** apipay_post_ledger_transaction: the posting, once per key (a replay of the same content answers the first row). */
export async function callPostLedgerTransaction(tx: Tx, posting: Posting, header: PostingHeader): Promise<PostingAnswer> {
  const rows = await tx.execute<Answer & Record<string, unknown>>(
    sql`select * from public.apipay_post_ledger_transaction(${headerJson(posting, header)}::jsonb, ${entriesJson(posting)}::jsonb)`,
  );
  return settle(posting, rows[0]);
}

/** The ledger_adjustments row apipay_post_adjustment writes with the posting (snake_case, as the table names it). */
export interface AdjustmentRowInput {
  id: string;
  provider: string;
  payment_reference: string;
  amount_minor: string;
  currency: string;
  operator: string;
  reason: string;
  reconciliation_id: string | null;
  operator_key?: string | null;
  proposal_id?: string | null;
  approved_by?: string | null;
  approved_by_key?: string | null;
}

/** apipay_post_adjustment: posting, adjustment row and audit row (src/audit/record.ts auditRow) in one call. */
export async function callPostAdjustment(
  tx: Tx,
  posting: Posting,
  header: PostingHeader,
  row: AdjustmentRowInput,
  audit: Record<string, unknown>,
): Promise<PostingAnswer> {
  const rows = await tx.execute<Answer & Record<string, unknown>>(
    sql`select * from public.apipay_post_adjustment(${headerJson(posting, header)}::jsonb, ${entriesJson(posting)}::jsonb, ${JSON.stringify(row)}::jsonb, ${JSON.stringify(audit)}::jsonb)`,
  );
  return settle(posting, rows[0]);
}
