// R2: an operator resolution is one PostgreSQL transaction: the ledger posting (L2 amounts), the immutable
// audit row and the state transition commit together or not at all. A retry after a lost completion finds the
// row it wrote and answers the same. Refusals are answers, not errors, so nothing retries them. A3: the audit
// log's row goes into the same transaction, with the actor the admin API passed in the resolution.
import { eq, sql } from 'drizzle-orm';
import { recordAuditEvent, type AuditActor } from '../audit/record.js';
import type { Db } from '../db/client.js';
import { operatorResolutions, reconciliations, reconciliationTransitions } from '../db/schema/index.js';
import { CaptureNotPostedError, LedgerConflictError, ReversalExceedsSettledError } from '../ledger/errors.js';
import { buildPosting, LedgerValidationError, type PostingKind } from '../ledger/postings.js';
import { correctSettlementWithin } from '../ledger/settlement-correction.js';
import { postWithin } from '../ledger/store.js';
import { newId } from '../shared/ids.js';
import type { NormalizedProviderEvent, OperatorResolution, ProviderPayment, ReconciliationState } from '../shared/inbound.js';
import type { Discrepancy } from './verdict.js';
import { resolutionInputProblem } from '../shared/operator-input.js';
import { resolutionAmount } from './resolution-amount.js';

export interface ResolutionCommand {
  reconciliationId: string;
  provider: string;
  event: NormalizedProviderEvent;
  /** The posting an `applied` makes for this event type, or null (events that never move money). */
  postingKind: PostingKind | null;
  providerPayment: Pick<ProviderPayment, 'amountMinor' | 'currency' | 'refunds' | 'disputes' | 'reversals'> | null;
  resolution: OperatorResolution;
  previousState: ReconciliationState;
  /** L5: a discrepancy after settlement: `applied` posts the settlement correction instead of the event's posting. */
  discrepancy?: Discrepancy | null;
}

export type ResolutionCommit =
  | { status: 'committed'; state: ReconciliationState; auditId: string; ledgerTransactionId: string | null; replayed: boolean; note: string | null }
  | { status: 'refused'; problem: string };

class Refused extends Error {}

/** The state a decision leads to: `acknowledged` is applied without a posting of its own (L3). */
/** A resolution the admin API did not send (a signal or update from the Temporal UI) names only its operator text. */
export const actorOfResolution = (r: OperatorResolution, operator: string): AuditActor =>
  r.actor ?? { keyId: null, name: operator, role: null, requestId: null, via: 'temporal' };

export const stateFor = (decision: OperatorResolution['decision']): ReconciliationState => (decision === 'rejected' ? 'rejected' : 'applied');

export async function commitResolution(db: Db, command: ResolutionCommand): Promise<ResolutionCommit> {
  const { reconciliationId, resolution, event } = command;
  const problem = resolutionInputProblem(resolution);
  if (problem) return { status: 'refused', problem };
  const operator = resolution.operator.trim();
  const reason = resolution.reason.trim();
  const actor = `operator:${operator}`;
  const to = stateFor(resolution.decision);
  try {
    return await db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`resolution:${reconciliationId}`}, 0))`);
      const [existing] = await tx.select().from(operatorResolutions).where(eq(operatorResolutions.reconciliationId, reconciliationId));
      if (existing) {
        return { status: 'committed', state: stateFor(existing.decision as OperatorResolution['decision']), auditId: existing.id, ledgerTransactionId: existing.ledgerTransactionId, replayed: true, note: null };
      }
      const [row] = await tx.select({ state: reconciliations.state }).from(reconciliations).where(eq(reconciliations.id, reconciliationId)).for('update');
      if (!row) throw new Refused(`reconciliation ${reconciliationId} has no projection row`);
      if (row.state !== 'manual_review') throw new Refused(`not in manual_review (state ${row.state})`);

      const auditId = newId('opr');
      let posted: { basis: string; amountMinor: string; currency: string } | null = null;
      let ledgerTransactionId: string | null = null;
      let note: string | null = null;
      const description = `${event.type} ${event.paymentReference} (operator resolution ${auditId})`;
      if (resolution.decision === 'applied' && command.discrepancy) {
        // L5: applying a discrepancy after settlement gives back what the provider no longer reports (or nothing).
        const corrected = await correctSettlementWithin(
          tx,
          { provider: command.provider, paymentReference: event.paymentReference, reconciliationId, providerEventId: event.providerEventId, discrepancy: command.discrepancy },
          { actor, description: `settlement correction ${event.paymentReference} (operator resolution ${auditId})`, resolutionId: auditId },
        );
        if (corrected) posted = { basis: 'provider', amountMinor: corrected.amountMinor, currency: corrected.currency };
        if (corrected && !corrected.replayed) ledgerTransactionId = corrected.transactionId;
        else if (!corrected) note = 'the ledger already holds no more than the provider reports: nothing posted';
      } else if (resolution.decision === 'applied' && command.postingKind) {
        const amount = resolutionAmount(command.postingKind, event, command.providerPayment, resolution.post);
        if (!amount.ok) throw new Refused(`cannot apply: ${amount.problem}`);
        posted = amount;
        const posting = buildPosting({
          kind: command.postingKind,
          provider: command.provider,
          providerEventId: event.providerEventId,
          providerObjectId: amount.providerObjectId,
          paymentReference: event.paymentReference,
          amountMinor: amount.amountMinor,
          currency: amount.currency,
        });
        const result = await postWithin(tx, posting, {
          providerEventId: event.providerEventId,
          reconciliationId,
          effectiveAt: event.effectiveAt,
          actor,
          description,
          resolutionId: auditId,
          ...(amount.providerObjectId ? { providerObjectId: amount.providerObjectId, matchedBy: amount.matchedBy } : {}),
        });
        // L4: cite only what this resolution posted; the same content already in the ledger is named, not cited.
        if (result.replayed) note = `already in the ledger as ${result.transactionId}: nothing new posted`;
        else ledgerTransactionId = result.transactionId;
      }
      await tx.insert(operatorResolutions).values({
        id: auditId,
        reconciliationId,
        decision: resolution.decision,
        operator,
        reason,
        previousState: command.previousState,
        amountMinor: BigInt(event.amountMinor),
        currency: event.currency,
        providerAmountMinor: command.providerPayment ? BigInt(command.providerPayment.amountMinor) : null,
        providerCurrency: command.providerPayment?.currency ?? null,
        postBasis: posted?.basis ?? null,
        postedAmountMinor: posted ? BigInt(posted.amountMinor) : null,
        postedCurrency: posted?.currency ?? null,
        ledgerTransactionId,
      });
      const why = note ? `${reason} (${note})` : reason;
      await recordAuditEvent(tx, {
        actor: actorOfResolution(resolution, operator),
        action: 'reconciliation.resolve',
        target: { type: 'reconciliation', id: reconciliationId },
        before: { state: command.previousState },
        after: {
          state: to,
          decision: resolution.decision,
          reason: why,
          resolution_id: auditId,
          ledger_transaction_id: ledgerTransactionId,
          ...(posted ? { post_basis: posted.basis, posted_amount_minor: posted.amountMinor, posted_currency: posted.currency } : {}),
        },
      });
      await tx
        .update(reconciliations)
        .set({ state: to, reason: why, ...(ledgerTransactionId ? { ledgerTransactionId } : {}), updatedAt: new Date() })
        .where(eq(reconciliations.id, reconciliationId));
      await tx.insert(reconciliationTransitions).values({ reconciliationId, fromState: command.previousState, toState: to, actor, reason: why }).onConflictDoNothing();
      return { status: 'committed', state: to, auditId, ledgerTransactionId, replayed: false, note } as const;
    });
  } catch (error) {
    if (error instanceof Refused) return { status: 'refused', problem: error.message };
    if (error instanceof CaptureNotPostedError) return { status: 'refused', problem: `cannot apply: the payment's capture is not in the ledger` };
    if (error instanceof ReversalExceedsSettledError || error instanceof LedgerConflictError || error instanceof LedgerValidationError) {
      return { status: 'refused', problem: `cannot apply: ${error.message}` };
    }
    const code = databaseErrorCode(error);
    // Data exceptions (22…) and constraint violations other than a raced unique key (23…) fail the same way on
    // every retry: refuse with the code only (the message may quote the operator's text).
    if (code && (code.startsWith('22') || (code.startsWith('23') && code !== '23505'))) {
      return { status: 'refused', problem: `the database refused the resolution (SQLSTATE ${code}); nothing was written` };
    }
    // Infrastructure (connection, serialization, a raced key): the activity wrapper (src/lib/errors.ts) classifies
    // it and rebuilds its message without the query's parameters; all or nothing, so a retry is safe.
    throw error;
  }
}

function databaseErrorCode(error: unknown): string | undefined {
  for (let e = error as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) return e.code;
  }
  return undefined;
}
