// L3: an operator's correcting transaction against a payment, posted with its immutable audit row in one
// PostgreSQL transaction, with its row in the audit log (A3); A21: all three by one call of apipay_post_adjustment. An idempotency key makes a repeated request return
// the first adjustment (and writes nothing).
import { and, eq } from 'drizzle-orm';
import { auditRow, type AuditActor } from '../audit/record.js';
import type { Db } from '../db/client.js';
import { ledgerAdjustments, ledgerTransactions, reconciliations } from '../db/schema/index.js';
import { newId } from '../shared/ids.js';
import { OPERATOR_MAX, REASON_MAX, textProblem } from '../shared/operator-input.js';
import { LedgerConflictError, ReversalExceedsSettledError } from './errors.js';
import { buildAdjustment, LedgerValidationError } from './postings.js';
import { moneyVerdict, type MoneyLimits } from './money-policy.js';
import { announcePosting } from './announce.js';
import { callPostAdjustment } from './ledger-calls.js';
import { lockPayment, postingMetadata } from './store.js';

export interface AdjustmentInput {
  provider: string;
  paymentReference: string;
  /** Signed minor units: > 0 adds to what is settled on the payment, < 0 gives back. */
  amountMinor: string;
  currency: string;
  /** A2: the name of the key that posts it (the admin API takes it from the credential). */
  operator: string;
  reason: string;
  /** A3: who posts it, for the audit log. */
  actor: AuditActor;
  /** The review item this settles (then acknowledge it), if any. */
  reconciliationId?: string;
  /** A repeated request with the same key returns the first adjustment instead of posting again. */
  idempotencyKey?: string;
  /** A11: why the adjustment is in another currency than the payment's (required then; always dual control). */
  currencyReason?: string;
}

export type AdjustmentRow = typeof ledgerAdjustments.$inferSelect;

/** A11: the money policy says a second person must approve this adjustment (nothing was written). */
export class AdjustmentNeedsApprovalError extends Error {
  override name = 'AdjustmentNeedsApprovalError';
}

export class AdjustmentRefusedError extends Error {
  override name = 'AdjustmentRefusedError';
  constructor(readonly code: 'not_found' | 'conflict' | 'validation_failed', message: string) {
    super(message);
  }
}

/** A5: who asked (key id) and, under dual control, the approval, closed in the posting's own transaction. */
export interface AdjustmentAccess {
  operatorKey: string;
  /** A11: judge the adjustment by the money policy first (absent only for an approval, already judged). */
  policy?: { limits: MoneyLimits; operatorKeys: string[] };
  approval?: { proposalId: string; approvedBy: string; approvedByKey: string; close: (tx: Tx, adjustmentId: string) => Promise<void> };
}
type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

export async function postAdjustment(db: Db, input: AdjustmentInput, access?: AdjustmentAccess): Promise<{ adjustment: AdjustmentRow; replayed: boolean }> {
  for (const [field, max] of [['operator', OPERATOR_MAX], ['reason', REASON_MAX]] as const) {
    const problem = textProblem(input[field], max);
    if (problem) throw new AdjustmentRefusedError('validation_failed', `${field}: ${problem}`);
  }
  const id = newId('adj');
  let posting;
  try {
    posting = buildAdjustment({ ...input, adjustmentKey: input.idempotencyKey ?? id });
  } catch (error) {
    if (error instanceof LedgerValidationError) throw new AdjustmentRefusedError('validation_failed', error.message);
    throw error;
  }
  const operator = input.operator.trim();
  try {
    return await db.transaction(async (tx) => {
      const known = input.reconciliationId
        ? eq(reconciliations.id, input.reconciliationId)
        : and(eq(reconciliations.provider, input.provider), eq(reconciliations.paymentReference, input.paymentReference));
      const [seen] = await tx.select().from(reconciliations).where(known).limit(1);
      if (!seen || seen.provider !== input.provider || seen.paymentReference !== input.paymentReference) {
        throw new AdjustmentRefusedError('not_found', input.reconciliationId
          ? `reconciliation ${input.reconciliationId} is not of payment ${input.provider}:${input.paymentReference}`
          : `no event of payment ${input.provider}:${input.paymentReference} was ever received`);
      }
      // A repeated request (same idempotency key, already posted) replays below; the policy judges new postings only.
      const [already] = input.idempotencyKey
        ? await tx.select({ id: ledgerTransactions.id }).from(ledgerTransactions).where(eq(ledgerTransactions.idempotencyKey, posting.idempotencyKey))
        : [];
      if (access?.policy && !access.approval && !already) {
        const verdict = await moneyVerdict(tx, access.policy.limits, {
          provider: input.provider,
          paymentReference: input.paymentReference,
          paymentCurrency: seen.providerCurrency ?? seen.currency,
          posts: { amountMinor: input.amountMinor, currency: input.currency },
          currencyReason: input.currencyReason,
          operatorKeys: access.policy.operatorKeys,
        });
        if (verdict.kind === 'refused') throw new AdjustmentRefusedError('validation_failed', verdict.problem);
        if (verdict.kind === 'dual_control') throw new AdjustmentNeedsApprovalError(verdict.why);
      }
      // A21: posting, adjustment row and audit row in one call of the database's function.
      const reason = input.reason.trim();
      const meta = {
        providerEventId: seen.providerEventId,
        reconciliationId: input.reconciliationId ?? seen.id,
        effectiveAt: new Date().toISOString(),
        actor: `operator:${operator}`,
        description: `adjustment ${input.amountMinor} ${input.currency} of ${input.paymentReference}`,
        adjustmentId: id,
      };
      const row = {
        id,
        provider: input.provider,
        payment_reference: input.paymentReference,
        amount_minor: BigInt(input.amountMinor).toString(),
        currency: input.currency,
        operator,
        reason,
        reconciliation_id: input.reconciliationId ?? null,
        ...(access ? { operator_key: access.operatorKey } : {}),
        ...(access?.approval ? { proposal_id: access.approval.proposalId, approved_by: access.approval.approvedBy, approved_by_key: access.approval.approvedByKey } : {}),
      };
      const audit = auditRow({
        actor: input.actor,
        action: 'ledger.adjust',
        target: { type: 'ledger_adjustment', id },
        after: { provider: row.provider, payment_reference: row.payment_reference, amount_minor: row.amount_minor, currency: row.currency, reason, reconciliation_id: row.reconciliation_id },
      });
      await lockPayment(tx, posting.provider, posting.paymentReference);
      const posted = await callPostAdjustment(tx, posting, { id: newId('ltx'), effectiveAt: meta.effectiveAt, description: meta.description, metadata: postingMetadata(posting, meta) }, row, audit);
      const [stored] = await tx.select().from(ledgerAdjustments).where(eq(ledgerAdjustments.ledgerTransactionId, posted.transactionId));
      await access?.approval?.close(tx, stored!.id); // A5: a proposal of an adjustment already posted is that one
      if (posted.replayed) return { adjustment: stored!, replayed: true };
      await announcePosting(tx, posted.transactionId, posted.postedAt, posting, meta); // M1, as postLocked does
      return { adjustment: stored!, replayed: false };
    });
  } catch (error) {
    if (error instanceof LedgerConflictError) throw new AdjustmentRefusedError('conflict', `idempotency key ${input.idempotencyKey} was used for another adjustment`);
    if (error instanceof ReversalExceedsSettledError) throw new AdjustmentRefusedError('conflict', error.message);
    throw error;
  }
}

export async function adjustmentsOf(db: Db, provider: string, paymentReference: string): Promise<AdjustmentRow[]> {
  return db.select().from(ledgerAdjustments).where(and(eq(ledgerAdjustments.provider, provider), eq(ledgerAdjustments.paymentReference, paymentReference))).orderBy(ledgerAdjustments.createdAt);
}
